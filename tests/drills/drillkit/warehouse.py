"""Compare a drilled warehouse with a reference warehouse, table by table.

A drill passes only if every business table has the same rows as a clean sync of the same data.
"Same" is decided on content, not on load bookkeeping, so the columns below are left out of the
row hash, each for a reason that holds for any correct pipeline:

- `_dlt_load_id`: names the load that wrote the row; a drill needs more loads by construction.
- `_dlt_id`, `_dlt_parent_id`, `_dlt_root_id`: dlt's per-row surrogate keys, random per load.
- `_extracted_at`: the wall-clock instant the row was read; two runs never read at the same time.

Everything else (every attribute, relationship id, `site_id`, `_is_deleted`, link tables, dlt
child tables) must match exactly, including column types. dlt's own bookkeeping tables
(`_dlt_loads`, `_dlt_version`, `_dlt_pipeline_state`) and our `sync_resources` and
`rejected_records` are skipped: they record history, which differs by design; pending-package
and state checks live in `runner.py`.

Rows are keyed by `id` where the table has one (resource tables), else by the whole row (link
tables, child tables): a lost row is a key the reference has more often than the drill, a
duplicated row a key the drill has more often, a changed row an `id` whose content differs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from creator_sync.common.duckdb_names import quote_ident

VOLATILE_COLUMNS = frozenset(
    {"_dlt_load_id", "_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_extracted_at"}
)
# `sync_resources` records each run's outcome per resource (contract C6): history, like dlt's;
# `rejected_records`, what the last run set aside (a value it could not read): the bad-input
# drill checks it on its own (`set_aside`), the good run must leave it empty
BOOKKEEPING_TABLES = frozenset(
    {"_dlt_loads", "_dlt_version", "_dlt_pipeline_state", "sync_resources", "rejected_records",
     "api_totals"}
)


def set_aside(db: Path, dataset: str = "creator_platform") -> list[tuple]:
    """(resource, record_id, field) of the records a sync set aside (none: no table)."""
    with duckdb.connect(str(db), read_only=True) as con:
        exists = con.execute("select count(*) from information_schema.tables where "
                             "table_schema = ? and table_name = 'rejected_records'",
                             [dataset]).fetchone()[0]
        if not exists:
            return []
        return con.execute(f"select resource, record_id, field from {quote_ident(dataset)}"
                           ".rejected_records order by 1, 2").fetchall()
DEFAULT_DATASET = "creator_platform"


@dataclass
class TableDiff:
    """How one table of the drill differs from the reference."""

    table: str
    ref_rows: int = 0
    drill_rows: int = 0
    lost: int = 0
    duplicated: int = 0
    extra: int = 0
    changed: int = 0
    checksum_equal: bool = True
    schema_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.checksum_equal and not (
            self.lost or self.duplicated or self.extra or self.changed or self.schema_problems
        )

    def describe(self) -> str:
        parts = [f"{self.table}: ref {self.ref_rows} rows, drill {self.drill_rows}"]
        for name in ("lost", "duplicated", "extra", "changed"):
            if getattr(self, name):
                parts.append(f"{name} {getattr(self, name)}")
        if not self.checksum_equal:
            parts.append("content checksum differs")
        parts.extend(self.schema_problems)
        return "; ".join(parts)


@dataclass
class Comparison:
    """Result of comparing two warehouses."""

    tables: dict[str, TableDiff]

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables.values())

    @property
    def lost(self) -> int:
        return sum(t.lost for t in self.tables.values())

    @property
    def duplicated(self) -> int:
        return sum(t.duplicated for t in self.tables.values())

    def problems(self) -> list[str]:
        return [t.describe() for t in self.tables.values() if not t.ok]

    def report(self) -> str:
        return "\n".join(self.problems()) or "identical"


def _columns(con: duckdb.DuckDBPyConnection, catalog: str, schema: str) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = ? AND table_schema = ? ORDER BY table_name, ordinal_position",
        [catalog, schema],
    ).fetchall()
    tables: dict[str, dict[str, str]] = {}
    for table, column, dtype in rows:
        if table in BOOKKEEPING_TABLES:
            continue
        tables.setdefault(table, {})[column] = dtype
    return tables


def _row_hash(alias: str, columns: list[str]) -> str:
    # hash() of a struct covers names, types and values; NULLs hash to a fixed value.
    packed = ", ".join(f"{quote_ident(c)} := {alias}.{quote_ident(c)}" for c in columns)
    return f"hash(struct_pack({packed}))"


def _diff_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    ref_cols: dict[str, str],
    drill_cols: dict[str, str],
    schema: str,
    ignore_ids: frozenset[str],
    skip: frozenset[str] = VOLATILE_COLUMNS,
) -> TableDiff:
    diff = TableDiff(table)
    ref_set = {c for c in ref_cols if c not in skip}
    drill_set = {c for c in drill_cols if c not in skip}
    for missing in sorted(ref_set - drill_set):
        diff.schema_problems.append(f"column {missing} missing")
    for extra in sorted(drill_set - ref_set):
        diff.schema_problems.append(f"unexpected column {extra} ({drill_cols[extra]})")
    common = sorted(ref_set & drill_set)
    for col in common:
        if ref_cols[col] != drill_cols[col]:
            diff.schema_problems.append(f"column {col} is {drill_cols[col]}, expected {ref_cols[col]}")
    has_id = "id" in common
    ids = sorted(ignore_ids)
    where = " WHERE CAST(t.id AS VARCHAR) NOT IN (SELECT unnest(?::VARCHAR[]))" if has_id else ""
    row_hash = _row_hash("t", common)
    key = "CAST(t.id AS VARCHAR)" if has_id else row_hash

    def side(catalog: str) -> str:
        return (
            f"SELECT {key} AS k, count(*) AS n, sum(CAST({row_hash} AS HUGEINT)) AS hs "
            f"FROM {catalog}.{quote_ident(schema)}.{quote_ident(table)} AS t{where} GROUP BY 1"
        )

    params = [ids, ids] if has_id else []
    lost, dup, extra, changed, ref_n, drill_n, ref_sum, drill_sum = con.execute(
        f"""
        WITH r AS ({side("ref")}), d AS ({side("drill")})
        SELECT
          coalesce(sum(greatest(coalesce(r.n, 0) - coalesce(d.n, 0), 0)), 0),
          coalesce(sum(CASE WHEN r.k IS NOT NULL THEN greatest(coalesce(d.n, 0) - r.n, 0) END), 0),
          coalesce(sum(CASE WHEN r.k IS NULL THEN d.n END), 0),
          count(*) FILTER (WHERE r.n = d.n AND r.hs <> d.hs),
          coalesce(sum(r.n), 0), coalesce(sum(d.n), 0),
          coalesce(sum(r.hs), 0), coalesce(sum(d.hs), 0)
        FROM r FULL OUTER JOIN d ON r.k = d.k
        """,
        params,
    ).fetchone()
    # Without an `id`, a changed link/child row shows as one lost plus one extra row.
    diff.lost, diff.duplicated, diff.extra, diff.changed = int(lost), int(dup), int(extra), int(changed)
    diff.ref_rows, diff.drill_rows = int(ref_n), int(drill_n)
    diff.checksum_equal = ref_n == drill_n and ref_sum == drill_sum
    return diff


def compare_warehouses(
    reference: Path | str,
    drill: Path | str,
    *,
    dataset: str = DEFAULT_DATASET,
    ignore_ids: dict[str, set[str]] | None = None,
    allow_extra_tables: frozenset[str] = frozenset(),
    exclude_columns: frozenset[str] = frozenset(),
) -> Comparison:
    """Compare every business table of `drill` with `reference` (both DuckDB files).

    `ignore_ids` leaves named records out of a table on both sides: bad-input cases that serve a
    deliberately altered record check that record on its own and the rest against the reference.
    """
    ignore_ids = ignore_ids or {}
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{Path(reference)}' AS ref (READ_ONLY)")
        con.execute(f"ATTACH '{Path(drill)}' AS drill (READ_ONLY)")
        ref_tables = _columns(con, "ref", dataset)
        drill_tables = _columns(con, "drill", dataset)
        result: dict[str, TableDiff] = {}
        for table in sorted(set(ref_tables) | set(drill_tables)):
            if table not in drill_tables:
                rows = con.execute(f"SELECT count(*) FROM ref.{quote_ident(dataset)}.{quote_ident(table)}").fetchone()[0]
                result[table] = TableDiff(table, ref_rows=rows, lost=rows, checksum_equal=rows == 0,
                                          schema_problems=["table missing"])
                continue
            if table not in ref_tables:
                if table in allow_extra_tables:
                    continue
                rows = con.execute(f"SELECT count(*) FROM drill.{quote_ident(dataset)}.{quote_ident(table)}").fetchone()[0]
                result[table] = TableDiff(table, drill_rows=rows, extra=rows,
                                          checksum_equal=rows == 0,
                                          schema_problems=["unexpected table"])
                continue
            result[table] = _diff_table(
                con, table, ref_tables[table], drill_tables[table], dataset,
                frozenset(ignore_ids.get(table, ())), VOLATILE_COLUMNS | exclude_columns,
            )
        return Comparison(result)
    finally:
        con.close()


def duplicated_keys(path: Path | str, dataset: str = DEFAULT_DATASET) -> dict[str, int]:
    """Rows beyond the first per `id`, per table: a warehouse must never hold one id twice."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        out: dict[str, int] = {}
        catalog = con.execute("SELECT current_database()").fetchone()[0]
        for table, cols in _columns(con, catalog, dataset).items():
            if "id" not in cols:
                continue
            extra = con.execute(
                f"SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) n FROM "
                f"{quote_ident(dataset)}.{quote_ident(table)} GROUP BY id HAVING count(*) > 1)"
            ).fetchone()[0]
            if extra:
                out[table] = int(extra)
        return out
    finally:
        con.close()


def table_ids(path: Path | str, table: str, dataset: str = DEFAULT_DATASET) -> set[str]:
    """All ids of one table (empty if the table does not exist)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
            [dataset, table],
        ).fetchone()[0]
        if not exists:
            return set()
        rows = con.execute(f"SELECT CAST(id AS VARCHAR) FROM {quote_ident(dataset)}.{quote_ident(table)}").fetchall()
        return {r[0] for r in rows}
    finally:
        con.close()


def copy_warehouse(src: Path, dst: Path) -> None:
    """Copy a closed DuckDB file (and its WAL, if any) so a later run cannot touch the original."""
    shutil.copyfile(src, dst)
    wal = Path(str(src) + ".wal")
    if wal.exists():
        shutil.copyfile(wal, Path(str(dst) + ".wal"))


@dataclass
class VersionCheck:
    """A warehouse read while the data changed, judged row by row against before and after.

    A correct sync that overlaps with changes holds, for every row, either the version from
    before the changes (`R0`) or the one after (`R1`); never both, never a mix, never neither.
    """

    table: str
    lost: int = 0  # rows in both R0 and R1 that the drill lacks (skipped while paging)
    duplicated: int = 0  # ids the drill holds more than once
    corrupt: int = 0  # rows equal to neither version
    stale: int = 0  # rows still at the R0 version where R1 differs
    new_missing: int = 0  # rows only in R1 (created during the run) the drill lacks
    phantom: int = 0  # ids in neither R0 nor R1

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.corrupt or self.phantom)

    def describe(self) -> str:
        fields = ("lost", "duplicated", "corrupt", "stale", "new_missing", "phantom")
        return f"{self.table}: " + ", ".join(f"{f} {getattr(self, f)}" for f in fields if getattr(self, f))


def check_versions(
    before: Path | str, after: Path | str, drill: Path | str, *, dataset: str = DEFAULT_DATASET
) -> dict[str, VersionCheck]:
    """Classify every drill row as the `before` version, the `after` version, or wrong."""
    con = duckdb.connect()
    try:
        for alias, path in (("r0", before), ("r1", after), ("d", drill)):
            con.execute(f"ATTACH '{Path(path)}' AS {alias} (READ_ONLY)")
        cols = {a: _columns(con, a, dataset) for a in ("r0", "r1", "d")}
        out: dict[str, VersionCheck] = {}
        for table in sorted(set(cols["r0"]) | set(cols["r1"]) | set(cols["d"])):
            present = [a for a in ("r0", "r1", "d") if table in cols[a]]
            common = sorted(
                set.intersection(*(set(cols[a][table]) for a in present)) - VOLATILE_COLUMNS
            )
            has_id = "id" in common
            row_hash = _row_hash("t", common)
            key = "CAST(t.id AS VARCHAR)" if has_id else row_hash

            a, b, d = (_version_side(x, present, dataset, table, key, row_hash)
                       for x in ("r0", "r1", "d"))
            row = con.execute(
                f"""
                WITH a AS ({a}), b AS ({b}), d AS ({d}),
                keys AS (SELECT k FROM a UNION SELECT k FROM b UNION SELECT k FROM d)
                SELECT
                  count(*) FILTER (WHERE a.k IS NOT NULL AND b.k IS NOT NULL AND d.k IS NULL),
                  coalesce(sum(d.n - 1) FILTER (WHERE d.n > 1), 0),
                  count(*) FILTER (WHERE d.k IS NOT NULL AND (a.k IS NOT NULL OR b.k IS NOT NULL)
                                   AND d.h IS DISTINCT FROM a.h AND d.h IS DISTINCT FROM b.h),
                  count(*) FILTER (WHERE d.k IS NOT NULL AND b.k IS NOT NULL AND a.h <> b.h
                                   AND d.h = a.h),
                  count(*) FILTER (WHERE a.k IS NULL AND b.k IS NOT NULL AND d.k IS NULL),
                  count(*) FILTER (WHERE d.k IS NOT NULL AND a.k IS NULL AND b.k IS NULL)
                FROM keys LEFT JOIN a USING (k) LEFT JOIN b USING (k) LEFT JOIN d USING (k)
                """
            ).fetchone()
            out[table] = VersionCheck(table, *(int(v) for v in row))
        return out
    finally:
        con.close()


def _version_side(
    alias: str, present: list[str], dataset: str, table: str, key: str, row_hash: str
) -> str:
    if alias not in present:
        return "SELECT NULL::VARCHAR AS k, NULL::UBIGINT AS h, 0 AS n WHERE false"
    return (f"SELECT {key}::VARCHAR AS k, min({row_hash}) AS h, count(*) AS n "
            f"FROM {alias}.{quote_ident(dataset)}.{quote_ident(table)} AS t GROUP BY 1")
