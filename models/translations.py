"""The models' DuckDB SQL as PostgreSQL, translated once and kept in the user's cache folder.

sqlglot spends ~1 s of CPU translating one build's ~400 statements (the models' SQL is long),
and a daily build sends the same statements as the day before. Each translation is kept in a
file named by a digest of the statement, under a folder named by the dialects and sqlglot's
version: a changed statement or another sqlglot is translated afresh, never read from a stale
entry. Entries unused for `KEEP_DAYS` go when a new one is written. A cache folder that cannot
be written (a read-only home) only means translating every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from pathlib import Path

import sqlglot

KEEP_DAYS = 30
READ = "duckdb"  # the dialect the models are written in


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/creator-sync/sql`, `~/.cache/creator-sync/sql` by default."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "creator-sync" / "sql"


def transpile(sql: str, dialect: str) -> str:
    """`sql` (DuckDB's dialect) in `dialect`: what sqlglot gives, one statement after another."""
    return ";\n".join(sqlglot.transpile(sql, read=READ, write=dialect))


class Translations:
    """Translate to `dialect` through the cache folder (`root`: `cache_root()` by default)."""

    def __init__(self, dialect: str, root: Path | None = None) -> None:
        self.dialect = dialect
        self.folder = (root or cache_root()) / f"{READ}-to-{dialect}-sqlglot-{sqlglot.__version__}"
        self.hits = 0
        self.misses = 0

    def __call__(self, sql: str) -> str:
        path = self.folder / f"{hashlib.sha256(sql.encode()).hexdigest()}.sql"
        try:
            translated = path.read_text(encoding="utf-8")
            self.hits += 1
            with contextlib.suppress(OSError):
                os.utime(path)  # still in use: not pruned
            return translated
        except (OSError, UnicodeDecodeError):
            pass
        translated = transpile(sql, self.dialect)
        self.misses += 1
        self._store(path, translated)
        return translated

    def _store(self, path: Path, translated: str) -> None:
        """Write the entry whole (a reader never sees half of one), then prune old entries."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(translated)
            os.replace(tmp, path)
        except OSError:
            return
        if self.misses == 1:  # once a run, when it adds entries
            self._prune()

    def _prune(self) -> None:
        cutoff = time.time() - KEEP_DAYS * 86_400
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                with contextlib.suppress(OSError):
                    if entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
