"""The console script as a user runs it: `cli_run` (tests/pipelines) starts it in a directory
of its own, with no configuration leaking in."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
