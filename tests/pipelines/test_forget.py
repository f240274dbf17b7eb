"""Issue 40 point 3: `creator-sync forget` erases one person everywhere the product keeps them.

As a user runs it: init, sync, listen receiving a delivery that names a customer, models and
report; then `forget --email` while listen still runs. Afterwards no byte of any file under the
working directory holds their email or name (the DuckDB file, rewritten whole, included), the
models and the report build, the money is as it was, a second `forget` says they are already
erased, an unknown person is one line and exit 1, and a full sync that brings them back from
the platform erases them again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from cli_run import SANDBOX_ID, SANDBOX_SECRET, clean_env, error_lines, run_cli

from creator_sync.common.duckdb_names import connect_warehouse
from creator_sync.pipelines.webhooks.testing import ListenProcess

pytestmark = pytest.mark.slow
HOOK_SECRET = "forget-test-hook-secret-012345"
MONEY = ("SELECT currency, sum(net_in_cents), sum(gross_in_cents) FROM analytics.revenue_daily "
         "GROUP BY 1 ORDER BY 1")


def _ok(result) -> str:
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    return result.stdout


def _rows(db: Path, sql: str) -> list[tuple]:
    con = connect_warehouse(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _files_naming(root: Path, *texts: str) -> list[str]:
    needles = [t.encode() for t in texts] + [t.lower().encode() for t in texts]
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and any(n in p.read_bytes() for n in needles))


def _wait_loaded(db: Path, rid: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if _rows(db, f"SELECT count(*) FROM creator_platform.webhook_events "
                         f"WHERE resource_id = '{rid}'")[0][0]:
                return
        except Exception:  # the receiver holds the file for a moment: ask again
            pass
        time.sleep(0.2)
    raise AssertionError("the delivery was not loaded")


def _synced_project(sandbox, tmp_path) -> tuple[Path, dict[str, str]]:
    """A project directory `init`ed against `sandbox` and synced once, and its environment."""
    work = tmp_path / "project"
    env = clean_env(tmp_path / "home")
    _ok(run_cli(work, "init", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                "--client-secret", SANDBOX_SECRET, "--yes", env=env, secret=None))
    _ok(run_cli(work, "sync", "--no-progress", env=env, secret=None))
    return work, env


def test_forget_leaves_the_person_in_no_file(sandbox_factory, tmp_path) -> None:
    work, env = _synced_project(sandbox_factory(sites=1), tmp_path)
    payload = json.loads(_ok(run_cli(work, "hooks", "sample", "purchase", env=env, secret=None)))
    customer = next(r for r in payload if r["type"] == "customers")
    email, name = customer["attributes"]["email"], customer["attributes"]["name"]
    db = work / "creator_platform.duckdb"
    # the person's name is theirs alone here, so every byte of it can go
    assert _rows(db, f"SELECT count(*) FROM creator_platform.contacts WHERE name = '{name}'"
                 )[0][0] == 1

    with ListenProcess(None, HOOK_SECRET, cwd=work, env=env) as listen:
        body = {"id": payload[0]["id"], "event": "purchase", "payload": payload}
        assert httpx.post(listen.url, json=body, timeout=10).status_code == 200
        _wait_loaded(db, payload[0]["id"])
        _ok(run_cli(work, "models", env=env, secret=None))
        _ok(run_cli(work, "report", env=env, secret=None))
        money = _rows(db, MONEY)
        assert _files_naming(work, email, name)  # the journal, the warehouse: they are there

        done = run_cli(work, "forget", "--email", email, env=env, secret=None)
        out = _ok(done)
        assert f"forgot email {email}: contact" in out and "by the running listen" in out
        assert listen.terminate() == 143

    assert _files_naming(work, email, name) == []
    assert _files_naming(tmp_path / "home", email, name) == []
    assert _rows(db, MONEY) == money  # keys and money stay: the books add up as before
    _ok(run_cli(work, "models", env=env, secret=None))
    _ok(run_cli(work, "report", env=env, secret=None))
    assert _rows(db, MONEY) == money
    assert _files_naming(work, email, name) == []

    again = _ok(run_cli(work, "forget", "--email", email, env=env, secret=None))
    assert "already erased" in again

    unknown = run_cli(work, "forget", "--email", "nobody@example.invalid", env=env, secret=None)
    assert unknown.returncode == 1
    (line,) = error_lines(unknown)
    assert "no person with email nobody@example.invalid" in line

    # the platform still lists them: a full sync reads them again, and they are erased again
    _ok(run_cli(work, "sync", "--full-refresh", "--no-progress", env=env, secret=None))
    assert _rows(db, "SELECT count(*) FROM creator_platform.customers WHERE lower(email) = "
                 f"'{email.lower()}' OR name = '{name}'")[0][0] == 0


def test_forget_names_what_it_needs(tmp_path) -> None:
    done = run_cli(tmp_path, "forget")
    assert done.returncode == 2
    (line,) = error_lines(done)
    assert "--email" in line
    nothing = run_cli(tmp_path, "forget", "--email", "a@example.com")
    assert nothing.returncode == 1
    (line,) = error_lines(nothing)
    assert "no such DuckDB file" in line


def test_forget_keeps_a_name_another_person_shares_and_succeeds(sandbox_factory, tmp_path) -> None:
    """docs/privacy.md: a name another person shares stays in their rows and `forget` says
    where; that name left in the warehouse file is no failure (exit 0), the email is gone."""
    work, env = _synced_project(sandbox_factory(sites=1), tmp_path)
    db = work / "creator_platform.duckdb"
    name, email = _rows(db, "SELECT name, min(email) FROM creator_platform.contacts WHERE email "
                        "IS NOT NULL GROUP BY name HAVING count(*) > 1 ORDER BY name LIMIT 1")[0]

    out = _ok(run_cli(work, "forget", "--email", email, env=env, secret=None))
    assert f"forgot email {email}: contact" in out
    assert "still named in (a name another person shares): " in out
    assert _files_naming(work, email) == []
    assert _files_naming(work, name) == ["creator_platform.duckdb"]  # the others' rows
    assert _rows(db, f"SELECT count(*) FROM creator_platform.contacts WHERE name = '{name}'"
                 )[0][0] >= 1
