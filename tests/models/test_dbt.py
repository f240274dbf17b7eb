"""sql/ as a dbt package: `dbt build` on a copy of the synced sandbox warehouse builds marts
equal to the runner's, row for row; its manifest describes every mart column; `creator-sync
report` reads what dbt built; every dispatched macro's BigQuery and Snowflake branch renders to
SQL that sqlglot parses in that dialect; `dbt source freshness` runs on the package.

One dbt build per engine: dbt is slow to start (docs/dbt.md)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import jinja2
import pytest
import sqlglot

from creator_sync.models.project import SQL_DIR, load_project
from creator_sync.models.raw_contract import SOURCE_TABLES
from creator_sync.models.runner import run_models
from creator_sync.models.schema import load_schema

DBT = Path(sys.executable).parent / "dbt"
STAMPS = {"build_metadata"}  # build stamps: when and by what the marts were built
DISPATCH = re.compile(r"adapter\.dispatch\(\s*'([a-z_]+)'")
# one sample use per dispatched macro: a new one fails the test below until it has its sample
SAMPLES = {
    "contract_type": [f"select cast(null as {{{{ contract_type('{t}') }}}}) as c"
                      for t in sorted({t for s in SOURCE_TABLES.values() for t in s.columns.values()})],
    "epoch_seconds": ["select {{ epoch_seconds('created_at') }} as s from t"],
    "floor_divide": ["select {{ floor_divide('a * 2 + b', 'b * 2') }} as q from t"],
    "regex_matches": ["select 1 from t where {{ regex_matches('x', \"'^[0-9]{1,18}$'\") }}"],
}


@pytest.mark.parametrize("adapter_type", ["bigquery", "snowflake", "postgres", "duckdb"])
def test_every_dispatched_macro_renders_sql_its_warehouse_parses(adapter_type: str) -> None:
    macros = "\n".join(p.read_text() for p in sorted((SQL_DIR / "macros").glob("*.sql")))
    dispatched = set(DISPATCH.findall(macros))
    assert dispatched and dispatched == set(SAMPLES), "give every dispatched macro a sample"

    class Adapter:  # a stand-in for dbt's adapter: dispatch by type, as dbt does
        def dispatch(self, name: str, namespace: str) -> object:
            for candidate in (f"{adapter_type}__{name}", f"default__{name}"):
                if hasattr(module, candidate):
                    return getattr(module, candidate)
            raise AssertionError(f"{name} has no {adapter_type} branch nor a default")

    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.globals["adapter"] = Adapter()
    module = env.from_string(macros).module
    env.globals.update({n: getattr(module, n) for n in dir(module) if not n.startswith("_")})
    dialect = {"postgres": "postgres", "duckdb": "duckdb"}.get(adapter_type, adapter_type)
    for name in dispatched:
        for sample in SAMPLES[name]:
            sql = env.from_string(sample).render()
            sqlglot.parse_one(sql, read=dialect)  # raises on SQL the dialect cannot parse


@pytest.fixture(scope="module")
def dbt_built(sandbox_raw_duckdb: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The synced sandbox warehouse built twice: by the runner, and by `dbt build`."""
    work = tmp_path_factory.mktemp("dbt")
    runner_db, dbt_db = work / "runner.duckdb", work / "dbt.duckdb"
    shutil.copyfile(sandbox_raw_duckdb, runner_db)
    shutil.copyfile(sandbox_raw_duckdb, dbt_db)
    run_models(str(runner_db))
    before = _files_of(SQL_DIR)
    dbt_build(work, f"type: duckdb\n      path: {dbt_db}", "creator_platform", as_package=True)
    # the user's project holds what dbt writes; the installed package is left as it was
    assert _files_of(SQL_DIR) == before
    return {"runner": runner_db, "dbt": dbt_db, "work": work}


def _files_of(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")
            if "__pycache__" not in p.parts}


def _printed_package_path() -> str:
    """What a user copies into packages.yml: the folder `creator-sync models --dbt-package`
    prints."""
    done = subprocess.run([str(Path(sys.executable).parent / "creator-sync"), "models",
                           "--dbt-package"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (local,) = re.findall(r"^\s*- local: (.+)$", done.stdout, re.M)
    return local


def dbt_build(work: Path, connection: str, raw_schema: str, *, as_package: bool = False,
              models: tuple[str, ...] = ()) -> None:
    """`dbt build --project-dir sql` (docs/dbt.md route 1) with a `creator_platform` profile of
    `connection` (the output's YAML lines after `ci:`), target schema `analytics`; asserts it
    exits 0. `as_package`: route 2 instead, a user's own dbt project in `work` with the package
    as a `local:` dependency at the path the CLI prints, built with `dbt deps` then `dbt build`.
    `models`: only those, with what they are built from (`+model`) and their tests, for a test
    that compares a few models (the whole project is built by the tests that compare it all)."""
    (work / "profiles.yml").write_text(
        "creator_platform:\n  target: ci\n  outputs:\n    ci:\n"
        f"      {connection}\n      schema: analytics\n      threads: 1\n"
    )
    build = [str(DBT), "build", "--profiles-dir", str(work),
             "--vars", f"{{creator_platform_schema: {raw_schema}}}"]
    if as_package:
        (work / "dbt_project.yml").write_text(
            "name: my_analytics\nversion: '1.0'\nconfig-version: 2\nprofile: creator_platform\n")
        (work / "packages.yml").write_text(f"packages:\n  - local: {_printed_package_path()}\n")
        deps = subprocess.run([str(DBT), "deps", "--profiles-dir", str(work)], cwd=work,
                              capture_output=True, text=True, timeout=300)
        assert deps.returncode == 0, deps.stdout[-4000:] + deps.stderr[-2000:]
        build += ["--select", "package:creator_platform"]
    else:
        build += ["--project-dir", str(SQL_DIR), "--target-path", str(work / "target"),
                  "--log-path", str(work / "logs")]
    if models:  # (cautious: a test of a model not built, e.g. a relationship to it, is left out)
        build += ["--select", *(f"+{model}" for model in models),
                  "--indirect-selection", "cautious"]
    done = subprocess.run(build, cwd=work, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Deprecat" not in done.stdout, done.stdout[-4000:]  # (issue 38: 58 warnings)


def _query(path: Path | str, sql: str, *params: object) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def _tables(path: Path, schema: str) -> list[str]:
    return [str(r[0]) for r in _query(
        path, "select table_name from duckdb_tables() where schema_name = ? order by 1", schema
    )]


def test_dbt_build_equals_the_runner_row_for_row(dbt_built: dict[str, Path]) -> None:
    marts = _tables(dbt_built["runner"], "analytics")
    assert marts == _tables(dbt_built["dbt"], "analytics")
    con = duckdb.connect(str(dbt_built["dbt"]), read_only=True)
    try:
        con.execute(f"attach '{dbt_built['runner']}' as runner (read_only)")
        for schema in ("analytics", "analytics_staging"):
            for table in _tables(dbt_built["runner"], schema):
                if table in STAMPS:
                    continue
                ours, theirs = f"runner.{schema}.{table}", f"{schema}.{table}"
                rows = con.execute(f"select count(*) from {ours}").fetchone()[0]
                for a, b in ((ours, theirs), (theirs, ours)):
                    (extra,) = con.execute(
                        f"select count(*) from (select * from {a} except all select * from {b})"
                    ).fetchone()
                    assert extra == 0, f"{schema}.{table}: {extra} of {rows} rows differ"
        # the subscription marts are compared on real rows, not on two empty tables
        for mart in ("mrr_movements", "saas_metrics_monthly", "customer_cohorts"):
            assert con.execute(f"select count(*) from analytics.{mart}").fetchone()[0] > 0, mart
    finally:
        con.close()


def test_the_manifest_describes_every_mart_column(dbt_built: dict[str, Path]) -> None:
    manifest = json.loads((dbt_built["work"] / "target" / "manifest.json").read_text())
    nodes = {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    built = _query(dbt_built["dbt"], "select table_name, column_name, comment from duckdb_columns() "
                   "where schema_name = 'analytics' and table_name not in (select view_name "
                   "from duckdb_views() where schema_name = 'analytics')")  # former names
    views = {r[0] for r in _query(dbt_built["dbt"], "select view_name from duckdb_views() "
                                  "where schema_name = 'analytics'")}
    # dbt's on-run-end keeps each renamed mart's former name as a view of it, as the runner does
    assert views == {d.former_name for d in load_schema(SQL_DIR).values() if d.former_name}
    for table, column, comment in built:
        assert nodes[table]["columns"][column]["description"], (table, column)
        assert comment, f"persist_docs left {table}.{column} without a comment"
    assert set(nodes) == set(load_schema(SQL_DIR))
    # dbt's tests are the runner's: the YAML's generic tests and the singular tests, one for one
    tests = [n for n in manifest["nodes"].values() if n["resource_type"] == "test"]
    generic = sorted((n["test_metadata"]["name"], n["attached_node"].rsplit(".", 1)[1],
                      n.get("column_name")) for n in tests if n.get("test_metadata"))
    ours = sorted((t.kind, t.model, t.column) for d in load_schema(SQL_DIR).values() for t in d.tests)
    assert generic == ours
    singular = {n["name"] for n in tests if not n.get("test_metadata")}
    assert singular == set(load_project().tests)


def test_dbt_source_freshness_runs_on_the_package(dbt_built: dict[str, Path]) -> None:
    """The package declares its raw tables as a dbt source (generated from the source's table
    types) with lineage and a freshness check on dlt's `_dlt_loads`: `dbt source freshness`
    runs in the user's project that depends on the package, and finds the fresh sync fresh."""
    work = dbt_built["work"]
    done = subprocess.run(
        [str(DBT), "source", "freshness", "--profiles-dir", str(work), "--vars",
         "{creator_platform_schema: creator_platform}", "--select", "source:creator_platform"],
        cwd=work, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    results = json.loads((work / "target" / "sources.json").read_text())["results"]
    assert [(r["unique_id"].rsplit(".", 1)[1], r["status"]) for r in results] == [("_dlt_loads", "pass")]
    manifest = json.loads((work / "target" / "manifest.json").read_text())
    staging = {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    # lineage: a staging model depends on the raw table it reads
    assert "source.creator_platform.creator_platform.transactions" in (
        staging["stg_transactions"]["depends_on"]["nodes"])


def test_the_report_reads_the_warehouse_dbt_built(dbt_built: dict[str, Path]) -> None:
    out = dbt_built["work"] / "report.html"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "creator-sync"), "report", "--duckdb",
         str(dbt_built["dbt"]), "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Finance report" in out.read_text()


def test_reconciliation_status_is_the_verdict_of_its_evidence(dbt_built: dict[str, Path]) -> None:
    rows = _query(dbt_built["runner"], "select status, is_rolled_forward, is_reconciled, "
                  "reconciliation_status from analytics.payout_reconciliation")
    seen = set()
    for status, rolled, reconciled, verdict in rows:
        expected = ("rolled_forward" if rolled else "pending" if status != "paid"
                    else "reconciled" if reconciled else "unreconciled")
        assert verdict == expected, (status, rolled, reconciled, verdict)
        seen.add(verdict)
    # the sandbox has failed and canceled payouts beside paid ones: both verdicts are exercised
    assert {"rolled_forward", "reconciled"} <= seen


@pytest.mark.postgres
def test_dbt_build_on_postgresql_equals_the_runner_on_duckdb(
    postgres_dsn, sandbox_url, sandbox_duckdb, sync_sandbox, tmp_path, monkeypatch
) -> None:
    """The same package on PostgreSQL: the sandbox loaded by dlt's postgres destination into a
    database of its own, `dbt build` exits 0, and every mart equals the runner's DuckDB build."""
    import psycopg2
    from models_helpers import mart_rows
    from test_postgres import RUN_SPECIFIC

    from creator_sync.common.warehouse import Warehouse, pipeline_name
    from creator_sync.models.adapters import PostgresAdapter
    from creator_sync.models.dbt_route import run_with_dbt
    from creator_sync.models.runner import Params

    admin = psycopg2.connect(postgres_dsn)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("drop database if exists dbt_ci")
        cursor.execute("create database dbt_ci")
    admin.close()
    dsn = postgres_dsn.rsplit("/", 1)[0] + "/dbt_ci"
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", dsn)
    sync_sandbox(sandbox_url, tmp_path, destination="postgres", dataset="creator_platform_pg")
    run_models(sandbox_duckdb)

    port = dsn.rsplit(":", 1)[1].split("/")[0]
    dbt_build(tmp_path, f"type: postgres\n      host: 127.0.0.1\n      port: {port}\n"
              "      user: postgres\n      password: throwaway\n      dbname: dbt_ci",
              "creator_platform_pg")
    marts = [m for m in _tables(Path(sandbox_duckdb), "analytics") if m not in STAMPS]
    duck = duckdb.connect(sandbox_duckdb, read_only=True)
    pg = PostgresAdapter(dsn)

    def duck_fetch(sql: str) -> tuple[list[str], list[tuple[object, ...]]]:
        cursor = duck.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()

    try:
        for mart in marts:
            skip = RUN_SPECIFIC.get(mart, set())  # when each warehouse was synced
            assert mart_rows(pg.fetch, mart, skip) == mart_rows(duck_fetch, mart, skip), mart
        (rows,) = pg.fetch("select count(*) from analytics.payout_reconciliation")[1]
    finally:
        pg.close()
        duck.close()
    every_mart = {m.name for m in load_project().models.values() if m.layer == "marts"}
    assert rows[0] > 0 and set(marts) == every_mart - STAMPS
    # the source's freshness check runs on PostgreSQL too
    fresh = subprocess.run(
        [str(DBT), "source", "freshness", "--profiles-dir", str(tmp_path), "--project-dir",
         str(SQL_DIR), "--target-path", str(tmp_path / "target"), "--log-path",
         str(tmp_path / "logs"), "--vars", "{creator_platform_schema: creator_platform_pg}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stdout[-4000:] + fresh.stderr[-2000:]
    assert "PASS freshness of creator_platform._dlt_loads" in fresh.stdout, fresh.stdout[-2000:]

    # `creator-sync models` on a destination the runner does not build takes this route: dlt's
    # dbt runner with the pipeline's own credentials, in this environment (here on PostgreSQL,
    # the one such warehouse CI has; dlt's DuckDB profile wants to download an extension)
    admin = psycopg2.connect(dsn)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("drop schema analytics cascade; drop schema analytics_staging cascade")
    admin.close()
    warehouse = Warehouse("postgres", "creator_platform_pg", None,
                          pipeline_name("creator_platform_pg"), str(tmp_path / "pipelines"))
    results = run_with_dbt(warehouse, Params(dataset="creator_platform_pg"))
    project = load_project()
    declared = sum(len(d.tests) for d in load_schema(SQL_DIR).values()) + len(project.tests)
    # every model, then every test, and the on-run-end hook (the marts' former names) of each
    hooks = [r for r in results if "on-run-end" in r.model_name]
    assert len(hooks) == 2 and len(results) - len(hooks) == len(project.models) + declared
    assert not {"target", "logs", "dbt_packages"} & {p.name for p in SQL_DIR.iterdir()}
    pg = PostgresAdapter(dsn)
    try:
        (built,) = pg.fetch("select count(*) from analytics.revenue_daily")[1]
    finally:
        pg.close()
    ((expected,),) = _query(sandbox_duckdb, "select count(*) from analytics.revenue_daily")
    assert built[0] == expected > 0


@pytest.mark.postgres
def test_dbt_on_postgresql_splits_a_bundle_as_the_runner_does(postgres_dsn, raw_db, tmp_path) -> None:
    """A bundle's refund, split evenly with a cent of rounding, credits each offer the same cents
    under dbt on PostgreSQL as under the runner: the split rounds its absolute amount down, since
    DuckDB's // truncates towards zero and PostgreSQL's floor_divide rounds a negative quotient
    down."""
    import psycopg2
    from bundle_data import bundle_rows
    from models_helpers import write_raw_postgres

    from creator_sync.models.adapters import PostgresAdapter

    admin = psycopg2.connect(postgres_dsn)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("drop database if exists dbt_bundles")
        cursor.execute("create database dbt_bundles")
    admin.close()
    dsn = postgres_dsn.rsplit("/", 1)[0] + "/dbt_bundles"
    rows = bundle_rows()
    duck_path = raw_db(rows)
    run_models(duck_path)
    write_raw_postgres(dsn, rows)

    port = dsn.rsplit(":", 1)[1].split("/")[0]
    dbt_build(tmp_path, f"type: postgres\n      host: 127.0.0.1\n      port: {port}\n"
              "      user: postgres\n      password: throwaway\n      dbname: dbt_bundles",
              "creator_platform", models=("int_transaction_offers", "offer_performance"))
    parts_sql = ("select transaction_id, part_number, offer_id, amount_in_cents "
                 "from analytics_staging.int_transaction_offers order by transaction_id, part_number")
    offers_sql = ("select offer_key, net_revenue_in_cents, refunds_in_cents "
                  "from analytics.offer_performance order by offer_key")
    pg = PostgresAdapter(dsn)
    try:
        pg_parts, pg_offers = pg.fetch(parts_sql)[1], pg.fetch(offers_sql)[1]
    finally:
        pg.close()
    assert [tuple(r) for r in pg_parts] == _query(duck_path, parts_sql)
    assert [tuple(r) for r in pg_offers] == _query(duck_path, offers_sql)
    assert [r[3] for r in pg_parts if r[0] == "R2"] == [-333, -333, -334]


@pytest.mark.postgres
def test_dbt_on_postgresql_builds_the_revenue_marts_as_the_runner_does(
    postgres_dsn, raw_db, tmp_path
) -> None:
    """Revenue excl. tax, fees NULL where not stated, recognition with a refund's reversal and
    the product splits (negative parts rounded on their absolute amount) are the same cents
    under dbt on PostgreSQL as under the runner on DuckDB."""
    import psycopg2
    from models_helpers import write_raw_postgres
    from revenue_data import account

    from creator_sync.models.adapters import PostgresAdapter

    admin = psycopg2.connect(postgres_dsn)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("drop database if exists dbt_revenue")
        cursor.execute("create database dbt_revenue")
    admin.close()
    dsn = postgres_dsn.rsplit("/", 1)[0] + "/dbt_revenue"
    rows = account()
    duck_path = raw_db(rows)
    run_models(duck_path)
    write_raw_postgres(dsn, rows)

    port = dsn.rsplit(":", 1)[1].split("/")[0]
    dbt_build(tmp_path, f"type: postgres\n      host: 127.0.0.1\n      port: {port}\n"
              "      user: postgres\n      password: throwaway\n      dbname: dbt_revenue",
              "creator_platform", models=("revenue_monthly", "int_revenue_schedule",
                                          "product_revenue_monthly", "offer_revenue_monthly",
                                          "transaction_ledger"))
    queries = {
        "revenue_monthly": "select * from analytics.revenue_monthly order by site_id, currency, date_month",
        "schedule": "select * from analytics_staging.int_revenue_schedule order by transaction_id, date_month",
        "products": "select * from analytics.product_revenue_monthly order by date_month, product_id",
        "offers": "select * from analytics.offer_revenue_monthly order by date_month, offer_key",
        "ledger": "select transaction_id, revenue_ex_tax_in_cents, fee_in_cents, order_id, purchase_ids "
                  "from analytics.transaction_ledger order by transaction_id",
    }
    pg = PostgresAdapter(dsn)
    try:
        pg_rows = {name: [tuple(r) for r in pg.fetch(sql)[1]] for name, sql in queries.items()}
    finally:
        pg.close()
    for name, sql in queries.items():
        assert pg_rows[name] == _query(duck_path, sql), name
    assert any(r[-1] < 0 for r in pg_rows["schedule"])  # the refund's reversal is in it


def test_generic_tests_nest_their_arguments_as_dbt_asks() -> None:
    """dbt 1.10+ warns of top-level arguments to a generic test
    (MissingArgumentsPropertyInGenericTestDeprecation): they go under `arguments:`."""
    import yaml

    for path in sorted((SQL_DIR / "models").glob("*/_*.yml")):
        for model in yaml.safe_load(path.read_text()).get("models") or []:
            declared = [*(model.get("data_tests") or [])]
            for column in model.get("columns") or []:
                declared += column.get("data_tests") or []
            for item in declared:
                if isinstance(item, dict):
                    (kind, args), = item.items()
                    assert set(args or {}) <= {"arguments", "config"}, (path.name, model["name"],
                                                                        kind)
