"""The PostgreSQL DSN is a setting like every other (`creator_sync.postgres_dsn`, env
`CREATOR_SYNC__POSTGRES_DSN`, flag `--postgres-dsn`, `.dlt/secrets.toml`); the name it had
before, `CREATOR_SYNC_POSTGRES_DSN`, still works and says it is deprecated (issue 38, point 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import clean_env, run_cli

from creator_sync.common.settings import Settings, by_key, unknown_key_warnings
from creator_sync.common.warehouse import Warehouse
from creator_sync.common.warehouse_db import postgres_dsn

UNREACHABLE = "postgresql://nobody:s3cret-pw@127.0.0.1:9/nowhere"
DEPRECATED = "warning: CREATOR_SYNC_POSTGRES_DSN is deprecated (it still works): set " \
             "CREATOR_SYNC__POSTGRES_DSN instead"


def test_the_dsn_is_a_secret_setting_of_the_warehouse_section():
    item = by_key("postgres_dsn")
    assert (item.env, item.flag, item.secret) == ("CREATOR_SYNC__POSTGRES_DSN", "--postgres-dsn",
                                                   True)


def test_the_new_name_wins_and_the_old_one_is_an_alias(monkeypatch):
    def resolved() -> str:
        dsn = Settings(destination="postgres")["postgres_dsn"]
        return postgres_dsn(Warehouse("postgres", "d", None, "p", "/x", postgres_dsn=dsn))

    monkeypatch.setenv("CREATOR_SYNC_POSTGRES_DSN", "postgresql://old@h/db")
    assert resolved() == "postgresql://old@h/db"
    assert DEPRECATED in unknown_key_warnings()
    monkeypatch.setenv("CREATOR_SYNC__POSTGRES_DSN", "postgresql://new@h/db")
    assert resolved() == "postgresql://new@h/db"
    monkeypatch.delenv("CREATOR_SYNC_POSTGRES_DSN")
    assert not [line for line in unknown_key_warnings() if "POSTGRES_DSN" in line]


@pytest.mark.parametrize("command", ["models", "report", "status"])
@pytest.mark.parametrize("variable", ["CREATOR_SYNC__POSTGRES_DSN", "CREATOR_SYNC_POSTGRES_DSN"])
def test_each_name_reaches_the_commands(tmp_path: Path, command: str, variable: str) -> None:
    """Both names point `models`, `report` and `status` at the server (here one that does not answer: a
    run-time failure, exit 1, without the password); only the old one warns."""
    work = tmp_path / "team"
    (work / ".dlt").mkdir(parents=True)
    (work / ".dlt" / "config.toml").write_text('[creator_sync]\ndestination = "postgres"\n')
    result = run_cli(work, command, env=clean_env(tmp_path / "home", **{variable: UNREACHABLE}))
    assert result.returncode == 1, result.stderr
    assert "cannot connect to postgres" in result.stderr and "s3cret-pw" not in result.stderr
    assert (DEPRECATED in result.stderr) == (variable == "CREATOR_SYNC_POSTGRES_DSN")
