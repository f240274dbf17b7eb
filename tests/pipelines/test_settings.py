"""Settings resolution: flags > env (dlt conventions) > defaults; clear usage errors."""

from __future__ import annotations

import click
import pytest

from creator_sync.pipelines.sync import resolve_settings


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no .dlt/ here
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__BASE_URL", "https://api.example.com")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_ID", "env-client")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_SECRET", "env-secret-value")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__LOOKBACK_DAYS__CONTACTS", "3")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CONCURRENCY", "6")
    return monkeypatch


def test_env_values_and_flag_overrides(env, tmp_path):
    s = resolve_settings(duckdb=str(tmp_path / "x.duckdb"))
    assert s.source["base_url"] == "https://api.example.com" and s.source["client_id"] == "env-client"
    assert s.source["client_secret"].reveal() == "env-secret-value"
    assert "env-secret-value" not in repr(s)
    assert s.source["concurrency"] == 6
    assert s.lookback_days == {"contacts": 3}
    assert s.warehouse.duckdb_path == str(tmp_path / "x.duckdb")
    assert s.warehouse.dataset == "creator_platform"
    s2 = resolve_settings(base_url="http://127.0.0.1:9", client_id="flag", concurrency=2,
                          site_ids=("1", "2"), resources="contacts,orders", dataset="raw")
    assert (s2.source["base_url"], s2.source["client_id"], s2.source["concurrency"]) == ("http://127.0.0.1:9", "flag", 2)
    assert s2.source["site_ids"] == ("1", "2") and s2.source["resources"] == ("contacts", "orders")
    assert s2.warehouse.dataset == "raw"


def test_missing_secret_and_unknown_resource_are_usage_errors(env):
    env.delenv("SOURCES__CREATOR_PLATFORM__CLIENT_SECRET")
    with pytest.raises(click.UsageError, match="SOURCES__CREATOR_PLATFORM__CLIENT_SECRET"):
        resolve_settings()
    with pytest.raises(click.UsageError, match="unknown resource"):
        resolve_settings(client_secret="x", resources="contacts,nope")


def test_two_warehouses_never_share_pipeline_state(env, tmp_path):
    a = resolve_settings(duckdb=str(tmp_path / "a.duckdb")).warehouse
    b = resolve_settings(duckdb=str(tmp_path / "b.duckdb")).warehouse
    assert a.pipelines_dir != b.pipelines_dir


def test_adaptive_rate_flag_env_and_bad_values(env):
    assert resolve_settings().source["adaptive_rate"] is True  # the default: find the limit
    assert resolve_settings(adaptive_rate=False).source["adaptive_rate"] is False  # --fixed-rate
    env.setenv("SOURCES__CREATOR_PLATFORM__ADAPTIVE_RATE", "false")  # env gives text
    assert resolve_settings().source["adaptive_rate"] is False
    assert resolve_settings(adaptive_rate=True).source["adaptive_rate"] is True  # the flag wins
    env.setenv("SOURCES__CREATOR_PLATFORM__ADAPTIVE_RATE", "sometimes")
    with pytest.raises(click.UsageError, match="adaptive_rate"):
        resolve_settings()


def test_payouts_path_from_env_or_flag_normalised_and_checked(env):
    assert resolve_settings().source["payouts_path"] is None  # unset: found by the sync (payouts_path.py)
    env.setenv("SOURCES__CREATOR_PLATFORM__PAYOUTS_PATH", "acme_payments_payouts")
    assert resolve_settings().source["payouts_path"] == "/acme_payments_payouts"
    flag = resolve_settings(payouts_path="/v1/brandx_payments_payouts/")
    assert flag.source["payouts_path"] == "/brandx_payments_payouts"  # the flag wins; /v1 and / tolerated
    with pytest.raises(click.UsageError, match=r"^payouts_path must be a path under /v1.*\[flag=--payouts-path\]$"):
        resolve_settings(payouts_path="/acme payouts?x=1")


def test_sync_help_types_numbers_and_lists_the_resources():
    """Issue 32, point 9: numeric flags show as numbers, not TEXT; --resources names them all."""
    from click.testing import CliRunner

    from creator_sync.cli import main
    from creator_sync.sources.creator_platform.endpoints import RESOURCES

    text = " ".join(CliRunner().invoke(main, ["sync", "--help"], terminal_width=400).output.split())
    for flag, kind in (("--concurrency", "INTEGER"), ("--detail-concurrency", "INTEGER"),
                       ("--page-size", "INTEGER"), ("--rate-limit", "NUMBER"),
                       ("--lock-timeout", "FLOAT"), ("--resources", "NAME[,NAME...]")):
        assert f"{flag} {kind} " in text, flag
    assert f"of: {', '.join(RESOURCES)}." in text
    # the value is still checked by the setting, whichever way it comes
    bad = CliRunner().invoke(main, ["sync", "--concurrency", "many", "--base-url",
                                    "https://api.example.com", "--client-id", "x"])
    assert bad.exit_code == 2 and "concurrency must be a whole number" in bad.output
    assert bad.output.strip().endswith("[flag=--concurrency]")


def test_a_bad_value_from_the_environment_names_the_variable(env):
    """The variable is in no file a user would search (a file's value names its key:
    tests/pipelines/test_cli_contract.py)."""
    from creator_sync.common.settings import BadSetting, Settings

    env.setenv("CREATOR_SYNC__TIMEZONE", "Mars/Base")
    with pytest.raises(BadSetting) as bad:
        Settings()["timezone"]
    assert bad.value.where == "env=CREATOR_SYNC__TIMEZONE"
    assert str(bad.value).startswith("timezone is not an IANA time zone")
