"""Issue 12 point 3: one exit-code contract (0/1/2/130/143), one `error:` line, no traceback.

Usage mistakes exit 2 with one line naming the flag or the key; configuration values from
`.dlt/config.toml` or the environment get the same checks as flags; dlt's own log lines go to
the log file, never the terminal. (SIGINT/SIGTERM: tests/drills/test_drills_signals.py.)
"""

from __future__ import annotations

import re
import socket

import pytest
from cli_run import SANDBOX_ID, clean_env, error_lines, run_cli
from sandbox_helpers import api_client

from creator_sync.pipelines.command_settings import SETTINGS

CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]+(Error|Exception|Interrupt)\b|Traceback")
API = ["--base-url", "http://127.0.0.1:9", "--client-id", "x"]


def _usage_error(result, *words: str) -> str:
    lines = error_lines(result)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert not CLASS_NAME.search(result.stderr), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.mark.parametrize(("args", "words"), [
    (["--resources", "contacts,nope"], ["nope", "--resources"]),
    (["--resources", ","], ["--resources", "names nothing"]),
    (["--page-size", "0"], ["--page-size", "from 1 to"]),
    (["--page-size", "5000"], ["--page-size"]),
    (["--concurrency", "0"], ["--concurrency"]),
    (["--concurrency", "65"], ["--concurrency", "64"]),
    (["--detail-concurrency", "0"], ["--detail-concurrency"]),
    (["--detail-concurrency", "1000"], ["--detail-concurrency"]),
    (["--rate-limit", "-5"], ["--rate-limit"]),
    (["--pii", "mask"], ["--pii", "hash", "drop"]),
    (["--page-size", "ten"], ["--page-size"]),
])
def test_sync_usage_errors_exit_2_naming_the_flag(tmp_path, args, words):
    _usage_error(run_cli(tmp_path / "w", "sync", *API, *args), *words)


def test_missing_base_url_secret_and_plain_http_exit_2(tmp_path):
    _usage_error(run_cli(tmp_path / "a", "sync", "--client-id", "x"), "base URL")
    _usage_error(run_cli(tmp_path / "b", "sync", *API, secret=None), "client secret")
    _usage_error(run_cli(tmp_path / "c", "sync", "--base-url", "http://api.example.com",
                         "--client-id", "x"), "--insecure", "api.example.com")
    _usage_error(run_cli(tmp_path / "d", "hooks", "list", secret=None), "base URL")
    _usage_error(run_cli(tmp_path / "e", "hooks", "--base-url", "http://api.example.com",
                         "--client-id", "x", "list"), "--insecure")


def test_config_values_get_the_same_checks_naming_the_key(tmp_path):
    work = tmp_path / "w"
    (work / ".dlt").mkdir(parents=True)
    (work / ".dlt" / "config.toml").write_text(
        "[sources.creator_platform]\nbase_url = \"http://127.0.0.1:9\"\nclient_id = \"x\"\n"
        "concurrency = 0\n")
    _usage_error(run_cli(work, "sync"), "key=sources.creator_platform.concurrency")
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__PAGE_SIZE="-1",
                    SOURCES__CREATOR_PLATFORM__BASE_URL="http://127.0.0.1:9",
                    SOURCES__CREATOR_PLATFORM__CLIENT_ID="x")
    _usage_error(run_cli(tmp_path / "v", "sync", env=env), "env=SOURCES__CREATOR_PLATFORM__PAGE_SIZE")
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__RESOURCES=",",
                    SOURCES__CREATOR_PLATFORM__BASE_URL="http://127.0.0.1:9",
                    SOURCES__CREATOR_PLATFORM__CLIENT_ID="x")
    _usage_error(run_cli(tmp_path / "r", "sync", env=env), "resources")
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__PII="mask")
    _usage_error(run_cli(tmp_path / "l", "listen", "--port", "0", "--secret", "x" * 32, env=env,
                         timeout=60), "env=SOURCES__CREATOR_PLATFORM__PII")


def test_limits_are_data_written_once():
    limited = {s.key: s.check for s in SETTINGS if s.flag in (
        "--page-size", "--concurrency", "--detail-concurrency")}
    assert set(limited) == {"page_size", "concurrency", "detail_concurrency"}
    for check in limited.values():
        with pytest.raises(ValueError):
            check(0)


def test_a_site_the_account_does_not_have_exits_2_naming_its_sites(sandbox, tmp_path):
    result = run_cli(tmp_path / "w", "sync", "--base-url", sandbox.base_url, "--client-id",
                     SANDBOX_ID, "--site-id", "999", "--resources", "contacts")
    line = _usage_error(result, "999", "resource=sites")
    with api_client(sandbox) as api:
        sites = [str(s["id"]) for s in api.get("/sites")["data"]]
    assert sites and all(site in line for site in sites), (sites, line)


def test_short_webhook_secret_and_bad_pii_exit_2(tmp_path):
    _usage_error(run_cli(tmp_path / "a", "listen", "--port", "0", "--secret", "short", timeout=60), "16")
    _usage_error(run_cli(tmp_path / "b", "listen", "--port", "0", "--secret", "x" * 32, "--pii", "mask",
                         timeout=60),
                 "--pii")


def test_runtime_failure_exits_1_in_one_line_without_class_names(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__MAX_ATTEMPTS="2",
                    SOURCES__CREATOR_PLATFORM__BACKOFF_INITIAL="0.01")
    result = run_cli(tmp_path / "w", "sync", "--base-url", f"http://127.0.0.1:{port}",
                     "--client-id", "x", env=env)
    lines = error_lines(result)
    # each retry of the failure is one line as it happens (issue 32, point 7); then ONE error
    retries, errors = lines[:-1], lines[-1:]
    assert result.returncode == 1 and errors[0].startswith("error: "), result.stderr
    assert retries == ["retrying POST /v1/oauth/token now: connection problem: connection "
                       "refused (attempt 1 of at most 2, within 54 s)"], retries
    assert "connection refused" in errors[0] and not CLASS_NAME.search(result.stderr), errors[0]


def test_dlt_log_lines_go_to_the_log_file_not_the_terminal(sandbox, tmp_path):
    env = clean_env(tmp_path / "home", RUNTIME__LOG_LEVEL="INFO")
    work = tmp_path / "w"
    result = run_cli(work, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                     "--resources", "sites", "--no-progress", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    log = (work / ".creator-sync" / "creator_platform" / "last-sync.log").read_text()
    assert "dlt" in log and "INFO" in log  # dlt's own lines landed there


def test_unknown_keys_get_one_warning_naming_the_nearest_key(tmp_path):
    work = tmp_path / "w"
    (work / ".dlt").mkdir(parents=True)
    (work / ".dlt" / "config.toml").write_text(
        "[sources.creator_platform]\nconcurency = 2\n[creator_sync]\nduck_db = \"x.duckdb\"\n")
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__PAGESIZE="10")
    result = run_cli(work, "sync", *API, "--resources", ",", env=env)
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert any("sources.creator_platform.concurency" in w and "concurrency" in w for w in warnings)
    assert any("creator_sync.duck_db" in w and "did you mean duckdb" in w for w in warnings)
    assert any("SOURCES__CREATOR_PLATFORM__PAGESIZE" in w and "PAGE_SIZE" in w for w in warnings)
    assert len(warnings) == 3, result.stderr


@pytest.mark.parametrize("command", [["sync", *API], ["models"], ["report"], ["hooks", "list"]])
@pytest.mark.parametrize(("name", "text", "words"), [
    ("config.toml", "[sources.creator_platform\nbase_url = 'x'\n", ["config.toml", "line 1"]),
    ("secrets.toml", "[sources.creator_platform]\nclient_secret = \"abc\n", ["secrets.toml", "line 2"]),
])
def test_an_unreadable_dlt_file_is_a_configuration_error_naming_it(tmp_path, command, name, text, words):
    work = tmp_path / "w"
    (work / ".dlt").mkdir(parents=True)
    (work / ".dlt" / name).write_text(text)
    line = _usage_error(run_cli(work, *command, secret=None), "not valid TOML", *words)
    assert "abc" not in line  # the parser's words say where, never what


def test_an_unknown_destination_is_a_usage_error_naming_the_flag(tmp_path):
    _usage_error(run_cli(tmp_path / "w", "sync", *API, "--destination", "nosuchdest"),
                 "--destination", "nosuchdest")


def test_missing_destination_credentials_name_the_keys_not_dlts_classes(sandbox, tmp_path):
    result = run_cli(tmp_path / "w", "sync", "--base-url", sandbox.base_url, "--client-id",
                     SANDBOX_ID, "--destination", "postgres", "--resources", "sites")
    _usage_error(result, "[destination.postgres.credentials]", "password",
                 "DESTINATION__POSTGRES__CREDENTIALS__")


def test_a_list_setting_takes_dlts_json_list_from_the_environment(tmp_path):
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__RESOURCES='["sites", "nope"]')
    # parsed as a list: the unknown name is named alone, not the whole text
    line = _usage_error(run_cli(tmp_path / "w", "sync", *API, env=env), "nope")
    assert '["sites"' not in line


def test_no_command_prints_the_help_and_exits_2(tmp_path):
    for args in ([], ["hooks"]):
        result = run_cli(tmp_path / "w", *args)
        assert result.returncode == 2, result.stderr
        assert "Usage:" in result.stderr and "Commands:" in result.stderr
        assert "error:" not in result.stderr, result.stderr  # the help as click lays it out


def test_a_first_sync_that_fails_leaves_no_empty_warehouse(tmp_path, sandbox) -> None:
    """A refused credential on the first sync: exit 1, one line, and no empty `.duckdb` file
    that would make the next run look like a later one."""
    done = run_cli(tmp_path, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                   "--client-secret", "wrong-secret", "--no-progress", secret=None)
    assert done.returncode == 1, done.stderr
    assert len(error_lines(done)) == 1, done.stderr
    assert not list(tmp_path.glob("*.duckdb*[!k]")), sorted(p.name for p in tmp_path.iterdir())
    assert not (tmp_path / "creator_platform.duckdb").exists()
