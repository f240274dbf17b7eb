"""Issue 16 point 1: one signature. Every setting of `[sources.creator_platform]` is an argument
of `creator_platform_source` with the same default, the CLI passes them all through it, and a
user's call resolves them from config and environment like a dlt verified source."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pipeline_fakes import FAKE_SECRET

from creator_sync.common.config import SETTINGS, SOURCE_SECTION, known_keys
from creator_sync.common.warehouse import resolve_warehouse
from creator_sync.pipelines.sync import SOURCE_PARAMETERS, SyncSettings, source_arguments
from creator_sync.sources.creator_platform import Secret, creator_platform_source, sync_run
from creator_sync.sources.creator_platform.errors import ConfigurationError

FLAG_ONLY = {"full_refresh"}  # a flag of one run (`--full-refresh`), never configured


def test_settings_table_and_signature_agree():
    configured = {s.key: s for s in SETTINGS if s.section == SOURCE_SECTION}
    # the keys the unknown-key warning knows are exactly the source's arguments
    assert known_keys()[SOURCE_SECTION] == set(SOURCE_PARAMETERS) - FLAG_ONLY
    for key, item in configured.items():
        default = SOURCE_PARAMETERS[key].default
        if item.default is not None:  # written once: the table refers to the source's constant
            assert default == item.default, key


def test_cli_passes_every_argument_explicitly(tmp_path: Path):
    settings = SyncSettings(base_url="http://127.0.0.1:9", client_id="c",
                            client_secret=Secret("s3cret-value"),
                            warehouse=resolve_warehouse(duckdb=str(tmp_path / "w.duckdb")),
                            resources=("contacts",), lookback_days={"contacts": 2.5})
    args = source_arguments(settings)
    assert set(args) == set(SOURCE_PARAMETERS)
    assert args["client_secret"] == "s3cret-value" and args["resources"] == ["contacts"]
    assert args["payouts_path"] == SOURCE_PARAMETERS["payouts_path"].default
    assert args["lookback_days"] == {"contacts": 2.5}
    assert "s3cret-value" not in repr(settings)


def test_user_call_resolves_from_environment(monkeypatch, fake_api):
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_ID", "cid")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_SECRET", FAKE_SECRET)
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__PAGE_SIZE", "37")
    from creator_sync.sources.creator_platform import Runtime

    source = creator_platform_source(resources=["contacts"],
                                     host=Runtime(transport=fake_api.transport()))
    run = sync_run(source)
    try:
        assert run.options.page_size == 37 and run.options.resources == ("contacts",)
        assert list(source.resources) == ["contacts"]
        assert FAKE_SECRET not in repr(run) + repr(run.options)
    finally:
        run.close()


@pytest.mark.parametrize("bad", [{"page_size": 0}, {"resources": ["nope"]}, {"pii": "blur"},
                                 {"concurrency": 1000}, {"resources": [","]}])
def test_bad_arguments_fail_before_any_request(bad):
    with pytest.raises(ConfigurationError):
        creator_platform_source(base_url="http://127.0.0.1:9", client_id="c", client_secret="s", **bad)


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
