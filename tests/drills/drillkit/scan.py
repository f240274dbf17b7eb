"""Search everything a sync leaves behind for secrets.

A token can hide in places a plain `grep` misses: gzip-compressed load package jobs, parquet
files, DuckDB's compressed string storage, dlt's base64+zlib pipeline state, pickled traces.
Each of those is opened the way dlt wrote it, and every needle is looked for in its raw,
URL-encoded and base64 forms (a Basic auth header carries `id:secret` in base64).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, quote_plus

import duckdb


@dataclass(frozen=True)
class Finding:
    needle: str  # the name of the secret (never its value)
    where: str

    def __str__(self) -> str:
        return f"{self.needle} found in {self.where}"


def variants(value: str, client_id: str | None = None) -> set[bytes]:
    """The byte forms a secret can take in files and logs."""
    forms = {value, quote(value, safe=""), quote_plus(value)}
    out = {f.encode() for f in forms}
    out.add(base64.b64encode(value.encode()))
    if client_id is not None:
        out.add(base64.b64encode(f"{client_id}:{value}".encode()))
    # A JWT's signature alone identifies it; look for it too (the part after the last dot).
    if value.count(".") == 2 and len(value.rsplit(".", 1)[1]) >= 16:
        out.add(value.rsplit(".", 1)[1].encode())
    return out


def trie_pattern(needles: Iterable[bytes]) -> bytes:
    """A regex matching exactly the needles, longest first at a position (like a sorted
    alternation), built as a trie so that matching cost grows with needle length, not count."""
    trie: dict = {}
    for needle in needles:
        node = trie
        for byte in needle:
            node = node.setdefault(byte, {})
        node[_END] = True

    def build(node: dict) -> bytes:
        # Runs of single-child nodes become one literal, so recursion depth is the number of
        # branching points on a path, not the needle's length (tokens run to hundreds of bytes).
        end = node.get(_END, False)
        branches = []
        for byte, child in sorted((k, v) for k, v in node.items() if k is not _END):
            run = bytearray([byte])
            while len(child) == 1 and _END not in child:
                (byte, child), = child.items()
                run.append(byte)
            branches.append(re.escape(bytes(run)) + build(child))
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        # Greedy optional: the longer needle wins, the shorter one still matches.
        return b"(?:" + body + b")?" if end else body

    return build(trie)


_END = object()


class Scanner:
    """Holds named secrets; `scan_*` return where any of them was found."""

    def __init__(self, secrets: dict[str, str], client_id: str | None = None) -> None:
        self.owner: dict[bytes, str] = {}
        for name, value in secrets.items():
            if value:
                for form in variants(value, client_id):
                    self.owner.setdefault(form, name)
        # One pattern shaped like a trie of the needles: a single pass per text, and at each
        # position the regex engine follows one branch instead of trying every needle (a flat
        # alternation of the ~2,000 PII values took 43 s on a 26 MB warehouse at `demo`).
        self.pattern = re.compile(trie_pattern(self.owner)) if self.owner else None

    def scan_bytes(self, data: bytes, where: str) -> list[Finding]:
        if self.pattern is None:
            return []
        names = {self.owner[m.group(0)] for m in self.pattern.finditer(data)}
        return [Finding(name, where) for name in sorted(names)]

    def scan_text(self, text: str, where: str) -> list[Finding]:
        return self.scan_bytes(text.encode("utf-8", "replace"), where)

    def scan_file(self, path: Path) -> list[Finding]:
        data = path.read_bytes()
        found = self.scan_bytes(data, str(path))
        if data[:2] == b"\x1f\x8b":
            with contextlib.suppress(OSError, EOFError):
                found += self.scan_bytes(gzip.decompress(data), f"{path} (gunzipped)")
        if path.suffix == ".parquet":
            found += self._scan_parquet(path)
        if path.suffix in (".duckdb", ".db"):
            found += self.scan_duckdb(path)
        return found

    def _scan_parquet(self, path: Path) -> list[Finding]:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        text = "\n".join(str(v) for col in table.columns for v in col.to_pylist())
        return self.scan_text(text, f"{path} (parquet values)")

    def scan_tree(self, root: Path) -> list[Finding]:
        found: list[Finding] = []
        for path in sorted(root.rglob("*")):
            if path.is_file():
                found += self.scan_file(path)
        return found

    def scan_duckdb(self, path: Path) -> list[Finding]:
        """Every text-like column of every table, plus dlt's compressed pipeline state."""
        found: list[Finding] = []
        con = duckdb.connect(str(path), read_only=True)
        try:
            cols = con.execute(
                "SELECT table_schema, table_name, column_name FROM information_schema.columns "
                "WHERE data_type IN ('VARCHAR', 'JSON') OR data_type LIKE '%[]' "
                "OR data_type LIKE 'STRUCT%' OR data_type LIKE 'MAP%'"
            ).fetchall()
            for schema, table, column in cols:
                rel = f'"{schema}"."{table}"'
                values = con.execute(f'SELECT DISTINCT CAST("{column}" AS VARCHAR) FROM {rel}').fetchall()
                text = "\n".join(v[0] for v in values if v[0] is not None)
                found += self.scan_text(text, f"{path.name}:{schema}.{table}.{column}")
                if table == "_dlt_pipeline_state" and column == "state":
                    for (value,) in values:
                        found += self.scan_text(_decode_state(value), f"{path.name}:{schema}.{table} (decoded)")
        finally:
            con.close()
        return found


def _decode_state(value: str | None) -> str:
    if not value:
        return ""
    try:
        return zlib.decompress(base64.b64decode(value)).decode("utf-8", "replace")
    except (ValueError, zlib.error):
        return value
