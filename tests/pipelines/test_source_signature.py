"""Issue 33 point 1: each setting is declared once, in `config.SETTINGS`. The source's signature
is built from the table (a parameter per key of `[sources.creator_platform]`, dlt's markers on the
required ones), the CLI passes them all through it, a user's call resolves them from config and
environment like a dlt verified source, and a bad value gives the CLI's one line."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pipeline_fakes import FAKE_SECRET

from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import SyncSettings, source_arguments
from creator_sync.sources.creator_platform import (
    BadSetting,
    ConfigurationError,
    Runtime,
    Secret,
    SourceOptions,
    creator_platform_source,
    sync_run,
)
from creator_sync.sources.creator_platform.config import (
    SETTINGS,
    SOURCE_SECTION,
    SOURCE_SETTINGS,
    by_key,
    checked,
    known_keys,
)

# a run's flag, a subsection, what the warehouse holds (read by the host), the host's hooks
NOT_CONFIGURATION = ["full_refresh", "lookback_days", "kept_tables", "webhook_written_keys", "host"]
WAREHOUSE_FACTS = {"kept_tables", "webhook_written_keys"}
PARAMETERS = inspect.signature(creator_platform_source).parameters


def test_the_signature_is_the_table():
    assert list(PARAMETERS) == [s.key for s in SOURCE_SETTINGS] + NOT_CONFIGURATION
    # the keys the unknown-key warning knows are exactly the source's configured arguments
    assert known_keys()[SOURCE_SECTION] == {*PARAMETERS} - {"full_refresh", "host"} - WAREHOUSE_FACTS
    for item in SOURCE_SETTINGS:
        default = PARAMETERS[item.key].default
        if item.required:
            marker = "dlt.secrets.value" if item.secret else "dlt.config.value"
            assert marker in repr(default), item.key
        else:
            assert default == item.default, item.key


def test_the_carriers_are_derived_from_the_table():
    """No copy classes: SyncSettings and SourceOptions have a field per setting, its default the
    table's."""
    sync_fields = {f.name: f for f in SyncSettings.__dataclass_fields__.values()}
    for item in SOURCE_SETTINGS:
        assert sync_fields[item.key].default == item.default, item.key
        assert sync_fields[item.key].repr is not item.secret, item.key
    options = SourceOptions()
    for item in SOURCE_SETTINGS:
        if not item.client:
            assert getattr(options, item.key) == item.default, item.key
    assert {s.section for s in SETTINGS} == {SOURCE_SECTION, "creator_sync"}


def test_cli_passes_every_argument_explicitly(tmp_path: Path):
    settings = SyncSettings(base_url="http://127.0.0.1:9", client_id="c",
                            client_secret=Secret("s3cret-value"),
                            warehouse=resolve_warehouse(duckdb=str(tmp_path / "w.duckdb")),
                            resources=("contacts",), lookback_days={"contacts": 2.5})
    args = source_arguments(settings)
    assert set(args) == set(PARAMETERS) - {"host"} - WAREHOUSE_FACTS
    assert args["client_secret"] == "s3cret-value" and args["resources"] == ["contacts"]
    assert args["payouts_path"] is None and args["page_size"] == PARAMETERS["page_size"].default
    assert args["lookback_days"] == {"contacts": 2.5}
    assert "s3cret-value" not in repr(settings)


def test_user_call_resolves_from_environment(monkeypatch, fake_api):
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_ID", "cid")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_SECRET", FAKE_SECRET)
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__PAGE_SIZE", "37")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__PAYOUTS_PATH", "v1/acme_payments_payouts/")
    source = creator_platform_source(resources=["contacts"],
                                     host=Runtime(transport=fake_api.transport()))
    run = sync_run(source)
    try:
        assert run.options.page_size == 37 and run.options.resources == ("contacts",)
        assert run.options.payouts_path == "/acme_payments_payouts"  # normalised by its kind
        assert list(source.resources) == ["contacts"]
        assert FAKE_SECRET not in repr(run) + repr(run.options)
    finally:
        run.close()


@pytest.mark.parametrize("bad", [{"page_size": 0}, {"resources": ["nope"]}, {"pii": "blur"},
                                 {"concurrency": 1000}, {"resources": [","]},
                                 {"payouts_path": "/a b"}, {"lookback_days": {"nope": 1}}])
def test_bad_arguments_fail_before_any_request(bad):
    with pytest.raises(ConfigurationError):
        creator_platform_source(base_url="http://127.0.0.1:9", client_id="c", client_secret="s", **bad)


def test_a_python_caller_gets_the_cli_line():
    """`creator_platform_source(page_size=0)` and `creator-sync sync --page-size 0` say the same,
    each naming where the value came from."""
    with pytest.raises(BadSetting) as caught:
        creator_platform_source(base_url="http://127.0.0.1:9", client_id="c", client_secret="s",
                                page_size=0)
    assert str(caught.value) == ("page_size must be a whole number from 1 to 1000, got 0 "
                                 "[key=sources.creator_platform.page_size]")
    from click.testing import CliRunner

    from creator_sync.cli import main

    out = CliRunner().invoke(main, ["sync", "--page-size", "0", "--base-url",
                                    "https://api.example.com", "--client-id", "x"])
    assert out.exit_code == 2
    assert out.output == ("error: page_size must be a whole number from 1 to 1000, got 0 "
                          "[flag=--page-size]\n")


@pytest.mark.parametrize("key, raw", [("page_size", " 37 "), ("rate_limit", "0"),
                                      ("rate_limit", "120"), ("resources", "sites, me,sites"),
                                      ("site_ids", '["1", "2"]'), ("payouts_path", "v1/acme_payments_payouts/"),
                                      ("adaptive_rate", "off"), ("pii", "hash"), ("timeout", "2.5")])
def test_a_checked_value_passes_its_check_again_unchanged(key, raw):
    """The CLI resolves a value, then hands it to the source, which checks its arguments: one
    function per kind, whose result is its own fixed point, so the value is the same."""
    item = by_key(key)
    once = checked(item, raw, "flag")
    assert checked(item, once, "argument") == once
    as_passed = list(once) if isinstance(once, tuple) else once  # as the CLI passes it
    assert checked(item, as_passed, "argument") == once


def test_signature_has_the_dlt_markers():
    params = inspect.signature(creator_platform_source).parameters
    assert "dlt.secrets.value" in repr(params["client_secret"].default)
    assert "dlt.config.value" in repr(params["base_url"].default)


def test_warehouse_facts_reach_the_source_as_arguments(fake_api):
    """State reaches the source one way (issue 33, point 2): what the warehouse holds comes as
    arguments, what earlier runs learnt as dlt state; `Runtime` carries hooks only."""
    from dataclasses import fields

    from creator_sync.sources.creator_platform import Runtime

    assert {f.name for f in fields(Runtime)} == {
        "stats", "transport", "verify", "on_page", "stop", "limiter"}
    source = creator_platform_source(
        base_url="http://127.0.0.1:9", client_id="cid", client_secret=FAKE_SECRET,
        resources=["contacts"], kept_tables=["contacts", "sites"],
        webhook_written_keys={"contacts": ["3000000201"]}, host=Runtime(transport=fake_api.transport()))
    run = sync_run(source)
    try:
        assert run.options.kept_tables == frozenset({"contacts", "sites"})
        assert run.options.webhook_written_keys == {"contacts": frozenset({"3000000201"})}
    finally:
        run.close()
    plain = creator_platform_source(base_url="http://127.0.0.1:9", client_id="cid",
                                    client_secret=FAKE_SECRET, resources=["contacts"],
                                    host=Runtime(transport=fake_api.transport()))
    run = sync_run(plain)
    try:  # a plain call knows nothing of the warehouse: every table is merged
        assert run.options.kept_tables is None and run.options.webhook_written_keys == {}
    finally:
        run.close()


def test_each_source_carries_its_own_run(fake_api):
    """The run reaches `finish_sync` through the source object the call returned, built by the
    source function itself (no thread-local hand-over, no override of dlt's `from_data`): sources
    built at once on several threads each carry their own."""
    from concurrent.futures import ThreadPoolExecutor

    from creator_sync.sources.creator_platform import Runtime
    from creator_sync.sources.creator_platform.source import CreatorPlatformSource

    assert "from_data" not in vars(CreatorPlatformSource)

    def build(name: str):
        return creator_platform_source(base_url="http://127.0.0.1:9", client_id="cid",
                                       client_secret=FAKE_SECRET, resources=[name],
                                       host=Runtime(transport=fake_api.transport()))

    names = ["contacts", "products", "sites", "contacts"]
    with ThreadPoolExecutor(4) as pool:
        sources = list(pool.map(build, names))
    runs = [sync_run(s) for s in sources]
    try:
        assert len({id(r) for r in runs}) == len(runs)
        assert [list(s.resources) for s in sources] == [[n] for n in names]
        assert [r.options.resources for r in runs] == [(n,) for n in names]
    finally:
        for r in runs:
            r.close()
