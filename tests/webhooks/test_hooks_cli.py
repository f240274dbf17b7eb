"""`creator-sync hooks`: create/list/delete/sample against the sandbox, one-line errors."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from creator_sync.cli import main
from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform import api_client

TARGET = "https://hooks.example.com/hooks/cli-secret-0123456789"


@pytest.fixture(scope="module")
def api():
    handle = start_sandbox(scale="tiny", sites=2, seed=7)
    try:
        with api_client(handle.base_url, "sandbox", "sandbox-secret") as client:
            sites = [s["id"] for s in client.get("/sites")["data"]]
        yield handle.base_url, sites
    finally:
        handle.stop()


def run(base_url: str, *args: str, client: str = "sandbox", env: dict | None = None):
    creds = ["--base-url", base_url, "--client-id", client, "--client-secret", f"{client}-secret"]
    return CliRunner().invoke(main, ["hooks", *args[:1], *creds, *args[1:]], env=env)


def test_create_list_delete_round_trip(api):
    base_url, sites = api
    created = run(base_url, "create", "--event", "tag_added", "--target-url", TARGET,
                  "--site-id", sites[0], "--resource-id", "123456")
    assert created.exit_code == 0, created.output
    hook_id = created.output.split()[2]

    listed = run(base_url, "list", "--json")
    hooks = {h["id"]: h for h in orjson.loads(listed.output)}
    assert hooks[hook_id]["attributes"]["event"] == "tag_added"
    assert str(hooks[hook_id]["attributes"]["resource_id"]) == "123456"
    other_site = orjson.loads(run(base_url, "list", "--site-id", sites[1], "--json").output)
    assert hook_id not in {h["id"] for h in other_site}
    text = run(base_url, "list").output
    assert "cli-secret-0123456789" not in text and "/hooks/***" in text

    deleted = run(base_url, "delete", hook_id)
    assert deleted.exit_code == 0, deleted.output
    assert hook_id not in {h["id"] for h in orjson.loads(run(base_url, "list", "--json").output)}


def test_flags_before_the_subcommand_and_env_config_work(api):
    base_url, _sites = api
    env = {"SOURCES__CREATOR_PLATFORM__CLIENT_SECRET": "sandbox-secret"}
    result = CliRunner().invoke(
        main,
        ["hooks", "--base-url", base_url, "--client-id", "sandbox", "sample", "purchase"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    payload = orjson.loads(result.output)
    assert payload[0]["type"] == "purchases"
    assert any(r["type"] == "customers" for r in payload)


def test_missing_scope_names_the_scope_and_the_client(api):
    base_url, sites = api
    result = run(base_url, "create", "--event", "purchase", "--target-url", TARGET,
                 "--site-id", sites[0], client="limited")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0] == (
        "error: creating a 'purchase' hook needs scope view:purchases, which client 'limited' lacks"
    )
    assert "limited-secret" not in result.output

    both = run(base_url, "create", "--event", "order_created", "--target-url", TARGET,
               "--site-id", sites[0], client="limited")
    assert "needs scopes view:transactions and view:orders" in both.output


def test_limited_client_may_create_contact_events(api):
    base_url, sites = api
    result = run(base_url, "create", "--event", "tag_removed", "--target-url", TARGET,
                 "--site-id", sites[1], client="limited")
    assert result.exit_code == 0, result.output


def test_validation_errors_are_one_line_with_the_pointer(api):
    base_url, sites = api
    result = run(base_url, "create", "--event", "purchase", "--target-url", "not-a-url",
                 "--site-id", sites[0])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert "rejected as invalid at /data/attributes/target_url" in result.output

    unknown_site = run(base_url, "create", "--event", "purchase", "--target-url", TARGET,
                       "--site-id", "999")
    assert "/data/relationships/site/data/id" in unknown_site.output


def test_unknown_event_is_refused_before_calling_the_api(api):
    base_url, sites = api
    result = run(base_url, "create", "--event", "refund", "--target-url", TARGET,
                 "--site-id", sites[0])
    # a usage error (exit 2) naming the flag and the known events, as docs/webhooks.md's table says
    assert result.exit_code == 2, result.output
    assert "'--event'" in result.output and "'refund' is not one of 'purchase', 'payment_succeeded'" in result.output
    assert result.output.count("\n") == 1
    sample = run(base_url, "sample", "refund")
    assert sample.exit_code == 2 and "'refund' is not one of" in sample.output


def test_missing_base_url_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("SOURCES__CREATOR_PLATFORM__BASE_URL", raising=False)
    result = CliRunner().invoke(main, ["hooks", "list"])
    assert result.exit_code != 0
    assert "no API base URL" in result.output


@pytest.mark.parametrize(("where", "value", "named"), [
    ("flag", "notaurl", "[flag=--base-url]"),
    ("flag", "http://example.com", "[flag=--base-url]"),  # plain http off loopback
    ("env", "ftp://x", "[env=SOURCES__CREATOR_PLATFORM__BASE_URL]"),
])
def test_a_bad_base_url_names_where_it_came_from(monkeypatch, where, value, named):
    """As `sync` does: one line naming the flag or the variable, a usage error (exit 2)."""
    monkeypatch.delenv("SOURCES__CREATOR_PLATFORM__BASE_URL", raising=False)
    if where == "flag":
        result = run(value, "list")
    else:
        result = CliRunner().invoke(main, ["hooks", "list", "--client-id", "sandbox",
                                           "--client-secret", "sandbox-secret"],
                                    env={"SOURCES__CREATOR_PLATFORM__BASE_URL": value})
    assert result.exit_code == 2, result.output
    assert named in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_create_is_idempotent(api):
    base_url, sites = api
    args = ("create", "--event", "form_submission", "--target-url", TARGET + "-idem",
            "--site-id", sites[1])
    first = run(base_url, *args)
    again = run(base_url, *args)
    assert first.output.startswith("created hook ")
    hook_id = first.output.split()[2]
    assert again.exit_code == 0
    assert again.output.startswith(f"hook already exists: {hook_id} ")
    narrower = run(base_url, *args, "--resource-id", "42")  # a different hook: created
    assert narrower.output.startswith("created hook ")


def test_every_sample_payload_loads_without_dead_letters(api, tmp_path):
    """The six `_sample` payloads are what deliveries carry: each must load cleanly."""
    import duckdb

    from creator_sync.pipelines.webhooks.events import EVENTS
    from creator_sync.pipelines.webhooks.journal import Journal, JournalReader
    from creator_sync.pipelines.webhooks.loader import Loader
    from creator_sync.pipelines.webhooks.records import encode, parse_delivery, utcnow
    from creator_sync.sources.creator_platform.endpoints import type_info

    base_url, _sites = api
    journal = Journal(tmp_path / "journal")
    expected_tables = set()
    for event in EVENTS:
        result = run(base_url, "sample", event)
        assert result.exit_code == 0, result.output
        payload = orjson.loads(result.output)
        expected_tables |= {type_info(r["type"]).table for r in payload}
        body = orjson.dumps({"id": str(payload[0]["id"]), "event": event, "payload": payload})
        journal.append([encode(parse_delivery(body, utcnow()))])
    Loader(journal, tmp_path / "s.duckdb").load(JournalReader(journal, 0).read(10))
    journal.close()
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM creator_platform.webhook_dead_letters").fetchone() == (0,)
        events = {r[0] for r in con.execute("SELECT event FROM creator_platform.webhook_events").fetchall()}
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'creator_platform'").fetchall()}
    assert events == set(EVENTS)
    assert expected_tables <= tables
    assert {"orders_order_items", "orders_payment_transactions", "contacts_tags"} <= tables


def test_scope_message_prefers_the_scopes_the_api_names():
    from creator_sync.pipelines.webhooks.hooks_api import explain
    from creator_sync.sources.creator_platform.errors import ApiError

    exc = ApiError("forbidden", status=403, detail="hook needs the scope(s) view:orders")
    message = str(explain(exc, "creating a 'order_created' hook", "order_created", "ops"))
    assert message == "creating a 'order_created' hook needs scope view:orders, which client 'ops' lacks"
    silent = ApiError("forbidden", status=403)
    assert "needs scopes view:transactions and view:orders" in str(
        explain(silent, "creating a 'order_created' hook", "order_created", "ops")
    )


def test_plain_http_target_off_loopback_is_warned_about(api):
    base_url, sites = api
    result = CliRunner().invoke(main, [
        "hooks", "create", "--base-url", base_url, "--client-id", "sandbox",
        "--client-secret", "sandbox-secret", "--event", "purchase", "--site-id", sites[0],
        "--target-url", "http://hooks.example.com/hooks/plain-0123456789abcdef"])
    assert result.exit_code == 0
    assert "warning: the target URL is plain http://" in result.output
    local = run(base_url, "create", "--event", "purchase", "--site-id", sites[0],
                "--target-url", "http://127.0.0.1:9/hooks/local-0123456789abcdef")
    assert "warning" not in local.output


def test_list_json_masks_the_secret_like_the_text_output(api):
    """Issue 12 point 5: `hooks list --json` printed the target URL's secret segment in full."""
    base_url, sites = api
    created = run(base_url, "create", "--event", "purchase", "--target-url",
                  "https://hooks.example.com/hooks/json-secret-0123456789", "--site-id", sites[0])
    assert created.exit_code == 0, created.output
    listed = run(base_url, "list", "--json")
    assert listed.exit_code == 0, listed.output
    hooks = orjson.loads(listed.output)
    assert "json-secret-0123456789" not in listed.output
    assert any(h["attributes"]["target_url"] == "https://hooks.example.com/hooks/***" for h in hooks)


# ---- issue 32, point 8 ------------------------------------------------------------------------

def test_create_refuses_a_secret_listen_would_refuse(api):
    base_url, sites = api
    for target in ("https://hooks.example.com/hooks/x", "https://h.example.com/a/hooks/short"):
        result = run(base_url, "create", "--event", "purchase", "--target-url", target,
                     "--site-id", sites[0])
        assert result.exit_code == 2, result.output
        (line,) = result.output.strip().splitlines()
        assert "'--target-url'" in line and "at least 16 characters" in line
        assert "/hooks/x" not in line  # the (weak) secret is not printed either
    listed = orjson.loads(run(base_url, "list", "--json").output)
    assert not [h for h in listed if h["attributes"]["target_url"].endswith(("/x", "/short"))]


def test_several_events_on_every_site_at_once_and_again(api):
    base_url, sites = api
    target = "https://many.example.com/hooks/many-events-0123456789"
    first = run(base_url, "create", "--event", "purchase,payment_succeeded", "--target-url", target)
    assert first.exit_code == 0, first.output
    lines = first.output.strip().splitlines()
    assert sorted(line.split(" for ")[1] for line in lines[:-1]) == sorted(
        f"{event} on site {site}" for event in ("purchase", "payment_succeeded") for site in sites)
    assert all(line.startswith("created hook ") for line in lines[:-1])
    assert lines[-1] == "4 hook(s) created, 0 already there (2 event(s) x 2 site(s))"

    again = run(base_url, "create", "--event", "all", "--target-url", target,
                "--site-id", sites[0])
    assert again.exit_code == 0, again.output
    lines = again.output.strip().splitlines()
    kept = [line for line in lines if line.startswith("hook already exists:")]
    assert len(kept) == 2 and len(lines) == 7  # six events on one site, and the count
    assert lines[-1] == "4 hook(s) created, 2 already there (6 event(s) x 1 site(s))"
    listed = orjson.loads(run(base_url, "list", "--json").output)
    mine = [(h["attributes"]["event"], h["relationships"]["site"]["data"]["id"])
            for h in listed if h["attributes"]["target_url"] == "https://many.example.com/hooks/***"]
    assert len(mine) == len(set(mine)) == 4 + 4  # nothing doubled


def test_an_unknown_event_among_several_is_refused(api):
    base_url, _sites = api
    result = run(base_url, "create", "--event", "purchase,refund", "--target-url", TARGET)
    assert result.exit_code == 2
    assert "'refund' is not one of" in result.output and "'all'" in result.output


def test_a_host_that_fails_shows_each_retry_and_honours_the_retry_settings(tmp_path, monkeypatch):
    """`hooks` reads max_attempts and backoff_initial like `sync`, and each retry of a failure is
    a line on stderr as it happens (issue 32, point 7): a refused host was ~26 s of silence."""
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    env = {"SOURCES__CREATOR_PLATFORM__MAX_ATTEMPTS": "2",
           "SOURCES__CREATOR_PLATFORM__BACKOFF_INITIAL": "0.01"}
    result = run(f"http://127.0.0.1:{port}", "list", env=env)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[:-1] == ["retrying POST /v1/oauth/token now: connection problem: connection "
                          "refused (attempt 1 of at most 2, within 54 s)"], lines
    assert lines[-1].startswith("error: giving up after 2 attempts"), lines


def test_create_keeps_to_the_sites_sync_is_pinned_to(api):
    """A pin set by `init --site-id` (config `site_ids`) holds for `hooks create` too: a hook
    on a site sync does not read would land that site's deliveries anyway."""
    base_url, sites = api
    target = "https://pinned.example.com/hooks/pinned-site-0123456789"
    env = {"SOURCES__CREATOR_PLATFORM__SITE_IDS": sites[1]}
    made = run(base_url, "create", "--event", "purchase", "--target-url", target, env=env)
    assert made.exit_code == 0, made.output
    (line,) = made.output.strip().splitlines()  # one site: the pinned one
    assert line.startswith("created hook ") and line.endswith(f" for purchase on site {sites[1]}")
    flag_wins = run(base_url, "create", "--event", "purchase", "--target-url", target,
                    "--site-id", sites[0], env=env)
    assert flag_wins.exit_code == 0 and f"on site {sites[0]}" in flag_wins.output
    listed = orjson.loads(run(base_url, "list", "--json").output)
    mine = sorted(h["relationships"]["site"]["data"]["id"] for h in listed
                  if h["attributes"]["target_url"] == "https://pinned.example.com/hooks/***")
    assert mine == sorted([sites[0], sites[1]])
