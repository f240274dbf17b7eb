"""`factory.settle_gc` (issue 15, CPU): the import-time heap leaves the collector's walks, young
collections wait for more allocations, and cyclic garbage made afterwards is still freed."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_settle_gc_freezes_the_heap_raises_the_young_threshold_and_still_collects_cycles():
    # a child process: the freeze and the thresholds are process-wide
    script = textwrap.dedent("""
        import gc, weakref
        from pipelines import factory

        default = gc.get_threshold()
        assert gc.get_freeze_count() == 0
        factory.settle_gc()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000, frozen  # dlt, pyarrow, ... (imported by factory)
        assert gc.get_threshold() == (factory.GC_YOUNG_THRESHOLD, *default[1:])
        factory.settle_gc()  # once per process
        assert gc.get_freeze_count() == frozen

        class Node:
            pass
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        probe = weakref.ref(a)
        del a, b
        gc.collect()
        assert probe() is None
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
