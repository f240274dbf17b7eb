"""`creator-sync init` (issue 32, point 1): set up once in an empty directory, then every
command runs with no flag. Run as a user would: the console script, in a directory of its own,
against a sandbox whose payouts sit under the brand word `acme`."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest
from cli_run import clean_env, error_lines, run_cli

from creator_sync.common.duckdb_names import connect_warehouse

SECRET = "sandbox-secret"


def _init(work: Path, *args: str, env: dict[str, str] | None = None):
    return run_cli(work, "init", *args, env=env, secret=None, timeout=120)


def _flags(base_url: str, secret: str = SECRET) -> list[str]:
    return ["--base-url", base_url, "--client-id", "sandbox", "--client-secret", secret, "--yes"]


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text())


@pytest.fixture
def acme(sandbox_factory):
    return sandbox_factory(brand="acme", sites=2)


@pytest.mark.slow
def test_init_then_every_command_runs_with_no_flag(acme, tmp_path: Path) -> None:
    work = tmp_path / "project"
    env = clean_env(tmp_path / "home")
    done = _init(work, *_flags(acme.base_url), env=env)
    assert done.returncode == 0, done.stderr
    # what it found, and the next command
    assert "credentials: ok" in done.stdout
    assert "sites: 2 (2200000000 " in done.stdout and "every site is synced" in done.stdout
    assert "payouts: /acme_payments_payouts (from the processor named in transactions)" in done.stdout
    assert done.stdout.rstrip().endswith("next: creator-sync sync")
    assert SECRET not in done.stdout + done.stderr

    config, secrets = work / ".dlt" / "config.toml", work / ".dlt" / "secrets.toml"
    assert _toml(config) == {
        "sources": {"creator_platform": {"base_url": acme.base_url, "client_id": "sandbox",
                                         "payouts_path": "/acme_payments_payouts"}},
        "creator_sync": {"timezone": "UTC"},
    }  # no site pinned, no secret
    assert _toml(secrets) == {"sources": {"creator_platform": {"client_secret": SECRET}}}
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert "secrets.toml" in (work / ".dlt" / ".gitignore").read_text().splitlines()

    for command in (["sync"], ["hooks", "list"], ["models"], ["report"]):
        ran = run_cli(work, *command, env=env, secret=None)
        assert ran.returncode == 0, (command, ran.stderr)
    db = work / "creator_platform.duckdb"
    with connect_warehouse(db, read_only=True) as con:
        assert con.execute("select count(*) from creator_platform.payouts").fetchone()[0] > 0
        assert con.execute("select timezone from analytics.build_metadata").fetchone() == ("UTC",)
    assert (work / "report.html").is_file()


def test_a_wrong_secret_is_one_line_and_writes_nothing(acme, tmp_path: Path) -> None:
    work = tmp_path / "project"
    done = _init(work, *_flags(acme.base_url, secret="wrong-secret"))
    assert done.returncode == 1
    (line,) = error_lines(done)
    assert line.startswith("error: the platform refused client 'sandbox'")
    assert "nothing was written" in line and "wrong-secret" not in line
    assert "Traceback" not in done.stderr
    assert not (work / ".dlt").exists()


def test_an_unreachable_host_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    work = tmp_path / "project"
    done = _init(work, *_flags(f"http://127.0.0.1:{port}"))
    assert done.returncode == 1
    (line,) = error_lines(done)
    assert line.startswith("error: ") and "nothing was written" in line
    assert not (work / ".dlt").exists()


def test_a_wrong_zone_is_refused_before_the_platform_is_asked(tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:  # asking this host would fail at run time (exit 1)
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    work = tmp_path / "project"
    done = _init(work, *_flags(f"http://127.0.0.1:{port}"), "--timezone", "Mars/Olympus")
    assert done.returncode == 2, done.stderr
    (line,) = error_lines(done)
    assert "--timezone" in line and "Mars/Olympus" in line
    assert "checking" not in done.stdout
    assert not (work / ".dlt").exists()


def test_without_a_terminal_a_missing_setting_is_a_usage_error(tmp_path: Path) -> None:
    work = tmp_path / "project"
    done = _init(work, "--client-id", "sandbox", "--client-secret", SECRET)
    assert done.returncode == 2
    (line,) = error_lines(done)
    assert "no API base URL: pass --base-url" in line
    assert not (work / ".dlt").exists()


def test_a_rerun_updates_in_place_and_keeps_the_users_keys_and_comments(acme, tmp_path: Path):
    work = tmp_path / "project"
    dlt_dir = work / ".dlt"
    dlt_dir.mkdir(parents=True)
    (dlt_dir / "config.toml").write_text(
        "# my project\n"
        "[runtime]\n"
        "log_level = \"WARNING\"  # quiet\n"
        "\n"
        "[sources.creator_platform]\n"
        "# where the API is\n"
        "base_url = \"https://old.example.com\"\n"
        "page_size = 50\n"
        "client_secret = \"misplaced\"\n"
        "\n"
        "[creator_sync]\n"
        "timezone = \"America/New_York\"\n"
    )
    (dlt_dir / "secrets.toml").write_text(
        "[sources.creator_platform]\nclient_id = \"sandbox\"\npii_salt = \"salty\"\n")
    done = _init(work, "--base-url", acme.base_url, "--client-secret", SECRET, "--yes",
                 "--timezone", "Europe/Paris")
    assert done.returncode == 0, done.stderr
    # it shows what changed
    assert "base_url = " + acme.base_url + "  (was https://old.example.com)" in done.stdout
    assert "creator_sync.timezone = Europe/Paris  (was America/New_York)" in done.stdout
    assert "client_id = sandbox  (unchanged)" in done.stdout
    assert "misplaced" not in done.stdout and SECRET not in done.stdout

    config = (dlt_dir / "config.toml").read_text()
    for kept in ("# my project", "log_level = \"WARNING\"  # quiet", "# where the API is",
                 "page_size = 50"):
        assert kept in config
    values, secrets = _toml(dlt_dir / "config.toml"), _toml(dlt_dir / "secrets.toml")
    source = values["sources"]["creator_platform"]
    assert source["base_url"] == acme.base_url and source["client_id"] == "sandbox"
    assert "client_secret" not in source  # the secret lives in secrets.toml only
    assert values["creator_sync"] == {"timezone": "Europe/Paris"}
    assert secrets["sources"]["creator_platform"] == {"pii_salt": "salty", "client_secret": SECRET}
    assert config.count("base_url") == 1 and config.count("timezone") == 1

    again = _init(work, "--yes")  # every value from the files now
    assert again.returncode == 0, again.stderr
    assert "(was" not in again.stdout and "(new)" not in again.stdout
    assert (dlt_dir / "config.toml").read_text() == config


@pytest.mark.parametrize("layout", [
    # dotted keys at the top (dlt reads them alike): a `[sources.creator_platform]` header
    # written above them once moved every key to sources.creator_platform.sources.creator_platform
    "# mine\nsources.creator_platform.base_url = \"https://old.example.com\"\n"
    "sources.creator_platform.client_secret = \"misplaced\"\n"
    "sources.creator_platform.lookback_days.contacts = 30\ncreator_sync.stale_after_days = 3\n",
    "# mine\n[sources]\ncreator_platform.base_url = \"https://old.example.com\"\n"
    "creator_platform.client_secret = \"misplaced\"\n"
    "creator_platform.lookback_days.contacts = 30\n[creator_sync]\nstale_after_days = 3\n",
    "# mine\n[sources.creator_platform.lookback_days]\ncontacts = 30\n"
    "[creator_sync]\nstale_after_days = 3\n",
    "# mine\nsources = {creator_platform = {lookback_days = {contacts = 30}}}\n"
    "creator_sync = {stale_after_days = 3}\n",
])
def test_settings_are_written_into_any_layout_the_user_chose(tmp_path: Path, layout: str) -> None:
    """However the user wrote their keys (headers, dotted keys, inline tables), init's keys land
    where dlt reads them and the user's own keep their meaning and their comments."""
    from creator_sync.init_command import write_settings

    folder = tmp_path / ".dlt"
    folder.mkdir()
    (folder / "config.toml").write_text(layout)
    write_settings(folder, {"sources.creator_platform": {"base_url": "https://api.acme.example",
                                                         "client_id": "sandbox"},
                            "creator_sync": {"timezone": "Europe/Paris"}},
                   {"sources.creator_platform": {"client_secret": SECRET}})
    text = (folder / "config.toml").read_text()
    assert _toml(folder / "config.toml") == {
        "sources": {"creator_platform": {"base_url": "https://api.acme.example",
                                         "client_id": "sandbox",
                                         "lookback_days": {"contacts": 30}}},
        "creator_sync": {"stale_after_days": 3, "timezone": "Europe/Paris"},
    }, text
    assert text.startswith("# mine\n") and text.count("base_url") == 1
    assert _toml(folder / "secrets.toml") == {
        "sources": {"creator_platform": {"client_secret": SECRET}}}


def test_a_pinned_site_must_be_the_accounts(acme, tmp_path: Path) -> None:
    work = tmp_path / "project"
    done = _init(work, *_flags(acme.base_url), "--site-id", "42")
    assert done.returncode == 2
    assert "site 42 is not one of this account's sites" in error_lines(done)[0]
    assert not (work / ".dlt").exists()
    pinned = _init(work, *_flags(acme.base_url), "--site-id", "2200000001")
    assert pinned.returncode == 0, pinned.stderr
    assert "pinned to 2200000001" in pinned.stdout
    assert _toml(work / ".dlt" / "config.toml")["sources"]["creator_platform"]["site_ids"] == [
        "2200000001"]


def _on_a_terminal(work: Path, answers: list[str], env: dict[str, str]) -> tuple[int, str]:
    """`creator-sync init` on a pseudo-terminal, each answer typed after its prompt shows."""
    import os
    import pty
    import select
    import subprocess
    import time

    from cli_run import EXE

    master, slave = pty.openpty()
    proc = subprocess.Popen([EXE, "init"], stdin=slave, stdout=slave, stderr=slave, cwd=work,
                            env=env)
    os.close(slave)
    seen = b""

    def read_until(marker: bytes, seconds: float = 30) -> None:
        nonlocal seen
        end = time.monotonic() + seconds
        while marker not in seen and time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    return

    for prompt, answer in answers:
        read_until(prompt.encode())
        seen = seen.replace(prompt.encode(), b"<asked>", 1)
        os.write(master, answer.encode() + b"\n")
    read_until(b"next: creator-sync sync")
    code = proc.wait(timeout=60)
    os.close(master)
    return code, seen.decode(errors="replace")


def test_on_a_terminal_it_asks_and_a_wrong_zone_is_asked_again(acme, tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    code, shown = _on_a_terminal(work, [
        ("API base URL", acme.base_url), ("Client id", "sandbox"), ("Client secret", SECRET),
        ("Reporting time zone", "Mars/Base"), ("Reporting time zone", "Europe/Berlin"),
    ], clean_env(tmp_path / "home"))
    assert code == 0, shown
    assert SECRET not in shown  # typed hidden
    assert "is not an IANA time zone" in shown
    assert _toml(work / ".dlt" / "config.toml")["creator_sync"] == {"timezone": "Europe/Berlin"}
    assert _toml(work / ".dlt" / "secrets.toml") == {
        "sources": {"creator_platform": {"client_secret": SECRET}}}


def test_a_secret_kept_in_the_environment_is_not_copied_to_disk(acme, tmp_path: Path) -> None:
    work = tmp_path / "project"
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__CLIENT_SECRET=SECRET)
    done = _init(work, "--base-url", acme.base_url, "--client-id", "sandbox", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert "client_secret: from SOURCES__CREATOR_PLATFORM__CLIENT_SECRET (kept there" in done.stdout
    assert not (work / ".dlt" / "secrets.toml").exists()
    assert SECRET not in (work / ".dlt" / "config.toml").read_text()
    ran = run_cli(work, "hooks", "list", env=env, secret=None)  # the environment still serves
    assert ran.returncode == 0, ran.stderr


def test_a_pin_set_before_is_shown_and_kept(acme, tmp_path: Path) -> None:
    work = tmp_path / "project"
    assert _init(work, *_flags(acme.base_url), "--site-id", "2200000001").returncode == 0
    again = _init(work, "--yes")
    assert again.returncode == 0, again.stderr
    assert "pinned to 2200000001 (site_ids, set before)" in again.stdout
    assert _toml(work / ".dlt" / "config.toml")["sources"]["creator_platform"]["site_ids"] == [
        "2200000001"]


def test_a_credential_without_the_payouts_scope_is_told_sync_skips_them(acme, tmp_path: Path):
    """The sandbox's `limited` client may read contacts only: init does not look for a payouts
    path it cannot read (a wrong word's 404 and the right word's 403 look alike), and says what
    sync will do instead of warning that payouts will fail."""
    work = tmp_path / "project"
    done = _init(work, "--base-url", acme.base_url, "--client-id", "limited",
                 "--client-secret", "limited-secret", "--yes")
    assert done.returncode == 0, done.stderr
    assert ("payouts: not read (the credential lacks the scope view:payouts; sync skips them)"
            in done.stdout)
    assert "warning" not in done.stderr, done.stderr
    assert "payouts_path" not in _toml(work / ".dlt" / "config.toml")["sources"]["creator_platform"]
