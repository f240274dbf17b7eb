"""Run a check of the cyclic garbage collector in a child process: its state (freeze,
thresholds, enabled) is process-wide, so a test must not change the suite's own."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# appended to a child's script: what a sync makes after a freeze is still collected
CYCLES_STILL_FREED = """
import gc as _gc, weakref as _weakref
class _Node:
    pass
_a, _b = _Node(), _Node()
_a.other, _b.other = _b, _a  # a cycle: only the collector frees it
_probe = _weakref.ref(_a)
del _a, _b
_gc.collect()
assert _probe() is None, "a cycle made after the freeze was not freed"
"""


def run_child(script: str, *, then_cycles_freed: bool = False) -> None:
    """Run `script` in a fresh interpreter; it passes when it prints `ok` last and exits 0."""
    body = textwrap.dedent(script)
    if then_cycles_freed:
        body += CYCLES_STILL_FREED
    body += "\nprint('ok')\n"
    out = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1:] == ["ok"], out.stdout
