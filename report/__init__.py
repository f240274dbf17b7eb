"""The static HTML finance report: `write_report` in `report.render`, `creator-sync report` in
`report.cli`. Reads the `analytics` marts (read-only) and writes one self-contained page."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path


def _writable_matplotlib_home() -> None:
    """matplotlib (and fontconfig) keep caches under the home folder. Where it cannot be written
    (a read-only home, a service user) they print six lines of warnings at import; give them a
    private temporary folder instead, removed at exit. Runs before any report module imports
    matplotlib."""
    if "MPLCONFIGDIR" in os.environ:
        return
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    existing = next((p for p in (config, *config.parents) if p.exists()), None)
    if existing is not None and os.access(existing, os.W_OK):
        return
    folder = tempfile.mkdtemp(prefix="creator-sync-matplotlib-")
    atexit.register(shutil.rmtree, folder, True)
    os.environ["MPLCONFIGDIR"] = folder
    os.environ.setdefault("XDG_CACHE_HOME", folder)


_writable_matplotlib_home()
