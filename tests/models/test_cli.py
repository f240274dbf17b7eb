"""`creator-sync models` end to end through the console script's click group."""

from __future__ import annotations

import re

from click.testing import CliRunner
from known_answer_data import known_answer_rows
from models_helpers import fetch_dicts

from creator_sync.cli import main
from creator_sync.models.adapters import redact_dsn


def test_models_command_builds_and_summarises(raw_db) -> None:
    path = raw_db(known_answer_rows())
    result = CliRunner().invoke(main, ["models", "--duckdb", path, "--as-of", "2024-03-31",
                                       "--timezone", "America/New_York"])
    assert result.exit_code == 0, result.output
    assert "analytics.revenue_daily" in result.output
    passed, total = map(int, re.search(r"Data tests: (\d+)/(\d+) passed", result.output).groups())
    assert total - passed == 2  # the two planted warnings, nothing else
    assert "WARN paid_payouts_reconcile" in result.output  # the planted 1-cent payout
    # headline figures close the output: in New York, MRR at the end of Mar 31 is still 4300
    assert "MRR on 2024-03-31: USD 43.00 from 3 active subscriptions" in result.output
    assert "Unreconciled payouts: 1" in result.output
    (row,) = fetch_dicts(path, "select count(*) as n from analytics.mrr_monthly")
    assert row["n"] == 3


def test_strict_fails_with_the_failing_rows(raw_db) -> None:
    path = raw_db(known_answer_rows())
    result = CliRunner().invoke(main, ["models", "--duckdb", path, "--as-of", "2024-03-31",
                                       "--strict"])
    assert result.exit_code == 1
    assert "paid_payouts_reconcile: 1 failing row(s)" in result.output
    assert "'payout_id': 'PO4'" in result.output


def test_clear_errors_for_bad_input(tmp_path, raw_db) -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["models", "--duckdb", str(tmp_path / "none.duckdb")])
    assert missing.exit_code == 1 and "no such DuckDB file" in missing.output
    path = raw_db(known_answer_rows())
    bad_date = runner.invoke(main, ["models", "--duckdb", path, "--as-of", "31/03/2024"])
    assert bad_date.exit_code == 2 and "YYYY-MM-DD" in bad_date.output
    bad_delay = runner.invoke(main, ["models", "--duckdb", path, "--settlement-delay-days", "-1"])
    assert bad_delay.exit_code == 2


def test_postgres_errors_never_show_the_password() -> None:
    result = CliRunner().invoke(main, ["models", "--destination", "postgres", "--postgres-dsn",
                                       "host=127.0.0.1 port=notaport password=s3cret-pw"])
    assert result.exit_code == 1
    assert "s3cret-pw" not in result.output
    assert redact_dsn('dsn "postgresql://u:s3cret-pw@h:5/db"') == 'dsn "postgresql://u:***@h:5/db"'


def test_settlement_delay_is_observed_unless_overridden(raw_db) -> None:
    from known_answer_lines_data import lines_rows

    path = raw_db(lines_rows())
    runner = CliRunner()
    observed = runner.invoke(main, ["models", "--duckdb", path, "--as-of", "2024-05-10"])
    assert observed.exit_code == 0, observed.output
    assert "settlement delay observed from payout lines, else 2 days" in observed.output
    # PO1 (an unmatched sale line) only: PO4, without lines, holds under the observed 3 days
    assert "Unreconciled payouts: 1" in observed.output
    # how: PO1-PO3 by their lines (PO1 not: its unmatched sale; PO2 failed and rolled forward),
    # PO4 by the rule
    assert ("Reconciliation method: 3 itemised by their lines (2 reconcile), "
            "1 by the settlement rule (1 reconcile)") in observed.output.splitlines()
    # passing the default value explicitly is an override: PO4's rule no longer holds
    forced = runner.invoke(main, ["models", "--duckdb", path, "--as-of", "2024-05-10",
                                  "--settlement-delay-days", "2"])
    assert forced.exit_code == 0, forced.output
    assert "settlement delay 2 days (override)" in forced.output
    assert "Unreconciled payouts: 2" in forced.output
    assert ("Reconciliation method: 3 itemised by their lines (2 reconcile), "
            "1 by the settlement rule (0 reconcile)") in forced.output.splitlines()


def test_postgres_without_credentials_is_a_configuration_error(tmp_path, monkeypatch) -> None:
    for var in ("CREATOR_SYNC_POSTGRES_DSN", "DESTINATION__POSTGRES__CREDENTIALS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["models", "--destination", "postgres"])
    assert result.exit_code == 2, result.output
    assert "no postgres credentials found" in result.output
    assert "[flag=--postgres-dsn]" in result.output


def test_the_zone_is_a_setting_and_a_change_of_zone_is_said(raw_db) -> None:
    """Issue 32, point 3: `[creator_sync] timezone` (here its environment variable) makes a
    plain `models` build in that zone; a build in another zone than the previous one says so in
    one line, and a build in the same zone says nothing."""
    path = raw_db(known_answer_rows())
    runner = CliRunner()
    args = ["models", "--duckdb", path, "--as-of", "2024-03-31"]
    first = runner.invoke(main, args, env={"CREATOR_SYNC__TIMEZONE": "America/New_York"})
    assert first.exit_code == 0, first.output
    assert "timezone America/New_York" in first.output and "previous build" not in first.output
    (row,) = fetch_dicts(path, "select timezone from analytics.build_metadata")
    assert row["timezone"] == "America/New_York"

    plain = runner.invoke(main, args, env={"CREATOR_SYNC__TIMEZONE": "America/New_York"})
    assert "previous build" not in plain.output

    moved = runner.invoke(main, [*args, "--timezone", "UTC"],
                          env={"CREATOR_SYNC__TIMEZONE": "America/New_York"})  # the flag wins
    assert moved.exit_code == 0, moved.output
    said = [line for line in moved.output.splitlines() if "previous build" in line]
    assert said == ["note: reporting time zone UTC, the previous build used America/New_York: "
                    "daily and monthly figures now count UTC days (set [creator_sync] timezone "
                    "to keep one)"]
    (row,) = fetch_dicts(path, "select timezone from analytics.build_metadata")
    assert row["timezone"] == "UTC"

    bad = runner.invoke(main, args, env={"CREATOR_SYNC__TIMEZONE": "Mars/Base"})
    assert bad.exit_code == 2 and "[env=CREATOR_SYNC__TIMEZONE]" in bad.output


def test_a_destination_the_runner_does_not_build_goes_to_dbt_or_says_how(
    tmp_path, monkeypatch
) -> None:
    """BigQuery, Snowflake, MotherDuck...: dlt's dbt runner builds the package with the pipeline's
    credentials; never a silent no-op. Here no pipeline was synced, then dbt is missing."""
    import creator_sync.models.dbt_route as route

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["models", "--destination", "bigquery"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "no pipeline creator_sync_creator_platform" in line
    assert "creator-sync sync --destination bigquery" in line and "Traceback" not in line

    monkeypatch.setattr(route, "find_spec", lambda name: None)
    result = CliRunner().invoke(main, ["models", "--destination", "snowflake"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert 'pip install "creator-sync[dbt]"' in line and "snowflake" in line


def test_a_healthy_sync_builds_without_a_missing_table_line(tmp_path, sandbox_raw_duckdb) -> None:
    """Tables a healthy account never creates (declared `absent_when`) are not called missing;
    a table whose data is really absent still is."""
    import shutil

    import duckdb

    path = tmp_path / "w.duckdb"
    shutil.copy(sandbox_raw_duckdb, path)
    built = CliRunner().invoke(main, ["models", "--duckdb", str(path)])
    assert built.exit_code == 0, built.output
    assert "not loaded" not in built.output

    with duckdb.connect(str(path)) as con:
        schema = con.execute("select schema_name from duckdb_schemas() where schema_name "
                             "like 'creator%' limit 1").fetchone()[0]
        con.execute(f'drop table "{schema}".transactions')
    built = CliRunner().invoke(main, ["models", "--duckdb", str(path)])
    assert built.exit_code == 0, built.output
    assert "raw tables not loaded (treated as empty): transactions\n" in built.output


def test_an_unset_zone_and_tax_rule_are_the_packages_own(raw_db, monkeypatch, tmp_path) -> None:
    """Issue 41: the reporting zone and the tax rule are written once, as the dbt package's vars
    (sql/dbt_project.yml); the app's settings have no default of their own, and a plain `models`
    (no flag, no variable, no file) builds with the package's: UTC, amounts including tax."""
    from creator_sync.common.settings import Settings, by_key
    from creator_sync.models.project import PACKAGE_VARS
    from creator_sync.models.runner import Params

    assert by_key("timezone").default is None and by_key("amounts_include_tax").default is None
    assert "creator_platform_reporting_timezone" in by_key("timezone").default_text
    zone = PACKAGE_VARS["creator_platform_reporting_timezone"]
    assert zone == "UTC" and PACKAGE_VARS["creator_platform_amounts_include_tax"] is True
    for var in ("CREATOR_SYNC__TIMEZONE", "CREATOR_SYNC__AMOUNTS_INCLUDE_TAX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    assert Settings()["timezone"] is None
    assert Params(timezone=None, amounts_include_tax=None) == Params()
    assert (Params().timezone, Params().amounts_include_tax) == ("UTC", True)
    path = raw_db(known_answer_rows())
    result = CliRunner().invoke(main, ["models", "--duckdb", path, "--as-of", "2024-03-31"])
    assert result.exit_code == 0, result.output
    assert "(timezone UTC," in result.output
    (row,) = fetch_dicts(path, "select timezone, amounts_include_tax from analytics.build_metadata")
    assert row == {"timezone": "UTC", "amounts_include_tax": True}
