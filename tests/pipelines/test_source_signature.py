"""Issue 41 point 2: `creator_platform_source` is written out, as dlt verified sources are: its
parameters, their defaults and its docstring are in its `def`, the one place a source default is
written. The source's settings table (`config.SOURCE_SETTINGS`: kind, flag, help, secret) is what
the def, the CLI's flags and docs/setup.md are checked against (here, and tests/test_setup_doc.py):
every key is a parameter whose default its kind accepts, and every parameter a key or one of the
arguments that are not configuration; the CLI and the docs take each default from the def. A
user's call resolves them from config and environment like a dlt verified source, and a bad value
gives the CLI's one line."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import pytest
from dlt.common.typing import ConfigValueSentinel, TSecretStrValue
from pipeline_fakes import FAKE_SECRET

from creator_sync.pipelines.command_settings import SETTINGS, SOURCE_KEYS
from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import SYNC_KEYS, SyncSettings, source_arguments, sync_settings
from creator_sync.sources.creator_platform import (
    ConfigurationError,
    Runtime,
    Secret,
    SourceOptions,
    creator_platform_source,
    sync_run,
)
from creator_sync.sources.creator_platform.config import (
    SOURCE_SECTION,
    SOURCE_SETTINGS,
    source_known_keys,
)

ROOT = Path(__file__).resolve().parents[2]
# a run's flag, a subsection, what the warehouse holds (read by the host), an app setting the
# host passes (`[creator_sync] deleted_people`), the host's hooks
NOT_CONFIGURATION = ["full_refresh", "lookback_days", "kept_tables", "webhook_written_keys",
                     "deleted_people", "host"]
WAREHOUSE_FACTS = {"kept_tables", "webhook_written_keys"}
PARAMETERS = inspect.signature(creator_platform_source).parameters


def test_every_key_is_a_parameter_whose_default_its_kind_accepts_and_every_parameter_a_key():
    assert list(PARAMETERS) == [s.key for s in SOURCE_SETTINGS] + NOT_CONFIGURATION
    # the keys the unknown-key warning knows are exactly the source's configured arguments
    assert source_known_keys()[SOURCE_SECTION] == (
        {*PARAMETERS} - {"full_refresh", "deleted_people", "host"} - WAREHOUSE_FACTS)
    hints = typing.get_type_hints(creator_platform_source, include_extras=True)
    for item in SOURCE_SETTINGS:
        default = PARAMETERS[item.key].default
        if isinstance(default, ConfigValueSentinel):  # required: dlt injects it
            marker = "dlt.secrets.value" if item.secret else "dlt.config.value"
            assert marker in repr(default), item.key
        elif default is not None:  # the kind takes the def's default as it is
            checked = item.check(default)
            assert checked == default and type(checked) is type(default), item.key
        # the type dlt coerces a configured value to is the kind's (a secret: dlt's secret str)
        annotation = hints[item.key]
        wanted = item.check.annotation
        args = typing.get_args(annotation)
        if item.secret:  # dlt's secret text (`TSecretStrValue`), alone or with None
            assert TSecretStrValue in (annotation, *args), item.key
        else:
            assert annotation == wanted or wanted in args, (item.key, annotation, wanted)


def test_each_default_is_written_once_in_the_def():
    """The table writes no default and no `required`; the CLI's settings, its `--help` and
    docs/setup.md's rows take each from the def's signature."""
    assert all(item.default is None and not item.required for item in SOURCE_SETTINGS)
    for item in SOURCE_KEYS:
        default = PARAMETERS[item.key].default
        assert item.required == isinstance(default, ConfigValueSentinel), item.key
        if not item.required:
            assert item.default == default and type(item.default) is type(default), item.key
    from creator_sync.pipelines.sync import sync_command

    helps = {param.name: param.help for param in sync_command.params}
    assert "; default 100;" in helps["page_size"] and "; default 16;" in helps["detail_concurrency"]
    assert "[config sources.creator_platform.base_url; required]" in helps["base_url"]
    # nothing below the source holds a default of its own: the client and the listings take
    # every knob from their caller (the source, else `api_client` with the def's defaults)
    from creator_sync.sources.creator_platform import CreatorPlatformClient, api_client, iter_pages
    from creator_sync.sources.creator_platform.pagination import iter_window

    knobs = inspect.signature(CreatorPlatformClient).parameters
    for item in SOURCE_SETTINGS:
        if item.client:
            assert knobs[item.key].default is inspect.Parameter.empty, item.key
    for function in (iter_pages, iter_window):
        assert inspect.signature(function).parameters["page_size"].default is inspect.Parameter.empty
    with api_client("http://127.0.0.1:9", "cid", "secret", max_attempts=3) as client:
        assert client.concurrency == PARAMETERS["concurrency"].default
        assert client.detail_concurrency == PARAMETERS["detail_concurrency"].default
        assert client.max_attempts == 3


def test_the_def_is_written_out():
    """Nothing builds the signature at import time: no `__signature__`, no generated class."""
    for path in [*(ROOT / "sources").rglob("*.py"), *(ROOT / "pipelines").rglob("*.py"),
                 *(ROOT / "common").rglob("*.py")]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                assert node.attr != "__signature__", path
            if isinstance(node, ast.Attribute):
                assert node.attr != "make_dataclass", path
    tree = ast.parse((ROOT / "sources" / "creator_platform" / "source.py").read_text())
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)
            and n.name == "creator_platform_source"]
    assert len(defs) == 1
    written = [a.arg for a in defs[0].args.args]
    assert written == list(PARAMETERS)
    doc = ast.get_docstring(defs[0]) or ""
    assert all(f"{name}:" in doc for name in written), "every argument in the docstring"


def test_the_cli_flags_are_the_tables():
    """Every flag of `creator-sync sync` that is a setting is declared by its table entry."""
    from creator_sync.pipelines.sync import sync_command

    flags = {opt for param in sync_command.params for opt in param.opts}
    for item in SETTINGS:
        if item.flag and (item.section == SOURCE_SECTION or item.key in SYNC_KEYS):
            first = item.flag.split("/")[0]
            assert first in flags, item.key


def test_the_carriers_are_plain_dataclasses():
    """SourceOptions and SyncSettings are ordinary dataclasses; neither writes a setting's
    default again (the source builds SourceOptions from checked values; `sync_settings` takes
    the def's defaults)."""
    import dataclasses

    for cls in (SourceOptions, SyncSettings):
        assert dataclasses.is_dataclass(cls) and cls.__module__ != "types"
    options = {f.name: f for f in dataclasses.fields(SourceOptions)}
    for item in SOURCE_SETTINGS:
        if not item.client:
            assert options[item.key].default is dataclasses.MISSING, item.key
    settings = sync_settings(warehouse=resolve_warehouse(duckdb="/tmp/x.duckdb"))
    for item in SOURCE_SETTINGS:
        value = settings.source[item.key]
        default = PARAMETERS[item.key].default
        wanted = None if isinstance(default, ConfigValueSentinel) else default
        assert (value.reveal() or None if isinstance(value, Secret) else value) == wanted
    with pytest.raises(Exception, match=r"page_size must be a whole number .* \[argument=page_size\]"):
        sync_settings(warehouse=settings.warehouse, page_size=0)


def test_cli_passes_every_argument_explicitly(tmp_path: Path):
    settings = sync_settings(base_url="http://127.0.0.1:9", client_id="c",
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
        assert list(source.resources) == ["contacts", "deletions", "bookkeeping"]
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
    with pytest.raises(ConfigurationError) as caught:
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


def test_each_value_is_checked_once(monkeypatch, fake_api):
    """A flag's value is checked where the CLI resolves it, and the source takes it as checked
    (`Runtime(checked=True)`); a Python caller's argument is checked by the source. Either way
    the kind's function runs once per key."""
    from collections import Counter

    from creator_sync.common import settings as common_settings
    from creator_sync.pipelines.sync import resolve_settings
    from creator_sync.sources.creator_platform import config as source_config

    calls: Counter[str] = Counter()
    original = common_settings.checked

    def counted(item, raw, where):
        calls[item.key] += 1
        return original(item, raw, where)

    monkeypatch.setattr(common_settings, "checked", counted)
    monkeypatch.setattr(source_config, "checked", counted)
    settings = resolve_settings(base_url="http://127.0.0.1:9", client_id="cid",
                                client_secret=FAKE_SECRET, page_size=" 37 ", resources="contacts")
    run = sync_run(creator_platform_source(**source_arguments(settings), host=Runtime(
        transport=fake_api.transport(), checked=True)))
    run.close()
    assert run.options.page_size == 37 and calls["page_size"] == 1
    calls.clear()
    run = sync_run(creator_platform_source(
        base_url="http://127.0.0.1:9", client_id="cid", client_secret=FAKE_SECRET, page_size=37,
        resources=["contacts"], host=Runtime(transport=fake_api.transport())))
    run.close()
    assert run.options.page_size == 37 and calls["page_size"] == 1


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
        "stats", "transport", "verify", "on_page", "stop", "limiter", "checked", "warehouse_lock",
        "reads_held"}
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
        # (each with the source's `deletions`, which flags what its complete listings miss,
        # and `bookkeeping`, which writes what the run did)
        assert [list(s.resources) for s in sources] == [[n, "deletions", "bookkeeping"]
                                                        for n in names]
        assert [r.options.resources for r in runs] == [(n,) for n in names]
    finally:
        for r in runs:
            r.close()
