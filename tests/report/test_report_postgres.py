"""The report reads any warehouse the models build: models built into PostgreSQL by
`creator-sync models --destination postgres` give the same report as the DuckDB build, and the
same headline the models command prints."""

from __future__ import annotations

import pathlib
import re

import pytest
from click.testing import CliRunner
from known_answer_lines_data import lines_rows
from models_helpers import fetch_dicts, write_raw, write_raw_postgres
from report_fixtures import Elements

from creator_sync.cli import main

pytestmark = pytest.mark.postgres

AS_OF = "2024-05-10"
# What differs between two builds of the same data: when each ran.
RUN_SPECIFIC = re.compile(r"generated [^<·]*|models built [^<]*? by")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def built(postgres_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The itemised known-answer site, built on both engines by the CLI, and both reports."""
    work = tmp_path_factory.mktemp("report-pg")
    rows = lines_rows()
    duck = write_raw(work / "raw.duckdb", rows)
    write_raw_postgres(postgres_dsn, rows)
    out = {
        "duckdb_models": _invoke("models", "--duckdb", duck, "--as-of", AS_OF),
        "postgres_models": _invoke("models", "--destination", "postgres", "--postgres-dsn",
                                   postgres_dsn, "--as-of", AS_OF),
        "duckdb": duck,
    }
    _invoke("report", "--duckdb", duck, "--out", str(work / "duck.html"))
    _invoke("report", "--destination", "postgres", "--postgres-dsn", postgres_dsn,
            "--out", str(work / "pg.html"))
    out["duck_html"] = (work / "duck.html").read_text()
    out["pg_html"] = (work / "pg.html").read_text()
    return out


def test_report_from_postgres_equals_report_from_duckdb(built: dict[str, object]) -> None:
    pg, duck = str(built["pg_html"]), str(built["duck_html"])
    assert RUN_SPECIFIC.sub("", pg) == RUN_SPECIFIC.sub("", duck)
    assert 'data-testid="unreconciled-payout"' in pg


def test_unreconciled_itemised_payout_shows_its_lines_from_postgres(
    built: dict[str, object],
) -> None:
    found = Elements()
    found.feed(str(built["pg_html"]))
    rows = {a["data-payout-id"]: a for a, _ in found.by_testid("unreconciled-payout")}
    (expected,) = fetch_dicts(
        str(built["duckdb"]),
        "select * from analytics.payout_reconciliation where payout_id = 'PO1'",
    )
    po1 = rows["PO1"]
    # worked out by hand in known_answer_lines_data: an adjustment of -2.50 and G's sale of
    # 7.24 net stand behind no listed transaction
    assert (po1["data-method"], po1["data-adjustments"], po1["data-unexplained"]) == (
        "itemised", "-250", "474"
    )
    assert int(po1["data-fees"]) == expected["fees_in_cents"]
    lines = [
        (a["data-line-number"], a["data-matched"], a.get("data-match-rule"))
        for a, _ in found.by_testid("payout-line")
    ]
    assert lines[:6] == [
        ("1", "true", "same_minute"),
        ("2", "true", "same_minute"),
        ("3", "true", "same_minute"),
        ("4", "true", "same_minute"),
        ("5", "false", None),
        ("6", "false", None),
    ]
    charts = [a for t, a in found.tags if t == "figure" and
              a.get("data-testid") == "chart-settlement-delay"]
    assert len(charts) == 1


def test_headline_method_split_is_the_same_in_the_cli_and_the_report(
    built: dict[str, object],
) -> None:
    split = fetch_dicts(
        str(built["duckdb"]),
        "select reconciliation_method as method, count(*) as n, "
        "count(*) filter (where is_reconciled or is_rolled_forward) as ok "
        "from analytics.payout_reconciliation group by 1 order by 1",
    )
    assert {r["method"] for r in split} == {"itemised", "settlement_rule"}  # PO4 has no lines
    line = "Reconciliation method: " + ", ".join(
        f"{r['n']} {'itemised by their lines' if r['method'] == 'itemised' else 'by the settlement rule'}"
        f" ({r['ok']} reconcile)"
        for r in split
    )
    assert line in str(built["duckdb_models"]).splitlines()
    assert line in str(built["postgres_models"]).splitlines()
    found = Elements()
    found.feed(str(built["pg_html"]))
    tile = {
        a["data-method"]: int(a["data-value"])
        for a, _ in found.by_testid("tile-reconciliation-method")
    }
    assert tile == {r["method"]: r["n"] for r in split}


def test_report_on_postgres_names_what_is_missing(postgres_dsn: str, tmp_path: pathlib.Path) -> None:
    """A database without the marts: one line naming the server and how to build them; a DSN's
    password never shows."""
    import psycopg2

    con = psycopg2.connect(postgres_dsn)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute("create database empty_warehouse")
    con.close()
    empty = postgres_dsn.rsplit("/", 1)[0] + "/empty_warehouse"
    result = CliRunner().invoke(
        main, ["report", "--destination", "postgres", "--postgres-dsn", empty,
               "--out", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 1
    assert "postgres:127.0.0.1:" in result.output and "/empty_warehouse" in result.output
    assert "creator-sync models --destination postgres" in result.output
    assert "throwaway" not in result.output and "Traceback" not in result.output
    bad = CliRunner().invoke(
        main, ["report", "--destination", "postgres", "--postgres-dsn",
               "host=127.0.0.1 port=notaport password=s3cret-pw", "--out", str(tmp_path / "r.html")]
    )
    assert bad.exit_code == 1 and "cannot connect to postgres" in bad.output
    assert "s3cret-pw" not in bad.output
