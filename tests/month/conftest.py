"""The month's fixtures: the models tests' throw-away PostgreSQL server (registered here)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "models"))
from pg_helpers import postgres_dsn  # noqa: F401  (the session fixture, registered here)
