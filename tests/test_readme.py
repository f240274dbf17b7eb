"""Issue 12 point 2, issue 32 point 4: the README and the docs pages are a test.

Every command block of the README, then of each page under docs/ in the order of the README's
"Read on" table, runs LITERALLY, in document order, as a new user would paste it, against one
in-process sandbox:

- the README's "Quick start" runs in a copy of the repository (it starts "from a clone");
  everything after it runs in an empty directory, the user's own, in one shell session: the
  README's real account sets that directory up with `creator-sync init`, and every docs page
  says that its examples run there, after it;
- `bash`/`sh` blocks run in one shell session (exports and `cd` carry over from block to block),
  `python` blocks with the session's `python`, a `toml` block whose first line names a file
  (`# .dlt/config.toml`) is appended to that file, the `cron` line runs without its schedule;
- substituted are only the API base URL (`https://api.your-platform.example`) and the client
  secret (`YOUR_CLIENT_SECRET`); the README's client id is registered with the sandbox as it is,
  and the cron line's absolute paths (`/srv/...`, `/etc/...`, `/var/log/...`) are mapped into
  the test's directory. Nothing else is added: no flag the docs do not show.
- `<!-- readme-test: skip (why) -->` before a block: not run (at most two a page, each where
  running it adds nothing: a server on a fixed port, the whole suite, what another test runs);
  `<!-- readme-test: background (why) -->`: a server, started, checked ready, and stopped with
  SIGTERM after the blocks that follow it ran.

The environment is what the install gives: the virtualenv's `bin` first on PATH (an activated
venv) and a `.venv` in each directory (the README's `.venv/bin/...`); no `duckdb` CLI.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
READ_ON = "## Read on"
CLONE_SECTIONS = ("Quick start",)
SKIPS_PER_PAGE = 2
PLACEHOLDER_URL = "https://api.your-platform.example"
PLACEHOLDER_SECRET = "YOUR_CLIENT_SECRET"
README_CLIENT_ID = "YOUR_CLIENT_ID"
RUNNABLE = ("bash", "sh", "cron", "toml", "python")
MARKER = re.compile(r"<!--\s*readme-test:\s*(skip|background)\b(.*?)-->")
CRON_PATHS = ("/srv/creator-sync", "/etc/creator-sync/secret", "/var/log/creator-sync.log")
BLOCK_TIMEOUT = 600


@dataclass
class Block:
    line: int
    section: str
    lang: str
    code: str
    marker: str | None = None
    page: str = "README.md"


def doc_pages() -> list[Path]:
    """The README, then the docs pages in the order of its "Read on" table."""
    table = README.read_text().split(READ_ON, 1)[1].split("\n## ", 1)[0]
    listed = [REPO / name for name in re.findall(r"^\| \[(docs/[\w-]+\.md)\]", table, re.M)]
    return [README, *listed]


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    """Fenced blocks of a page with their section and test marker, in order."""
    blocks: list[Block] = []
    section, marker = "", None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if line.startswith("## "):
            section = line[3:].strip()
        found = MARKER.search(stripped)
        if found:
            marker = found.group(1)
        elif stripped.startswith("```"):
            indent = len(line) - len(line.lstrip())
            lang, body, start = stripped[3:].strip(), [], i + 1
            i += 1
            while not lines[i].strip().startswith("```"):
                body.append(lines[i][indent:])
                i += 1
            blocks.append(Block(start, section, lang, "\n".join(body) + "\n", marker, page))
            marker = None
        elif stripped:
            marker = None if not stripped.startswith("<!--") else marker
        i += 1
    return blocks


@dataclass
class Session:
    """One shell session: environment and working directory carry over between blocks."""

    cwd: Path
    env: dict[str, str]
    state: Path
    outputs: list[str] = field(default_factory=list)
    background: list[tuple[subprocess.Popen, Path]] = field(default_factory=list)

    def _script(self, code: str) -> str:
        return (f"trap 'env -0 > \"{self.state}/env\"; pwd > \"{self.state}/cwd\"' EXIT\n"
                f"set -eo pipefail\n{code}")

    def bash(self, code: str, where: str) -> str:
        result = subprocess.run(["bash", "-c", self._script(code)], cwd=self.cwd, env=self.env,
                                capture_output=True, text=True, timeout=BLOCK_TIMEOUT,
                                stdin=subprocess.DEVNULL)
        output = result.stdout + result.stderr
        self.outputs.append(output)
        assert result.returncode == 0, f"{where} failed (rc={result.returncode}):\n{output[-4000:]}"
        assert "Traceback" not in output, f"{where} printed a traceback:\n{output[-4000:]}"
        raw = (self.state / "env").read_bytes().split(b"\0")
        self.env = dict(item.decode().split("=", 1) for item in raw if b"=" in item)
        self.cwd = Path((self.state / "cwd").read_text().strip())
        return output

    def start(self, code: str, where: str, ready: str) -> None:
        log = self.state / f"background-{len(self.background)}.out"
        with log.open("w") as out:
            proc = subprocess.Popen(["bash", "-c", f"set -eo pipefail\n{code}"], cwd=self.cwd,
                                    env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.background.append((proc, log))
        deadline = time.monotonic() + 60
        while ready not in log.read_text():
            assert proc.poll() is None, f"{where} ended early:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"{where} never became ready:\n{log.read_text()}"
            time.sleep(0.2)

    def stop_background(self) -> list[str]:
        outputs = []
        for proc, log in self.background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)  # the shell and the server it started
            deadline = time.monotonic() + 60
            while proc.poll() is None or _group_alive(proc.pid):  # reap the shell first
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)  # the server drains after the shell is gone
            if _group_alive(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
            outputs.append(log.read_text())
        self.background.clear()
        return outputs


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _clone(dst: Path) -> Path:
    """The repository's tracked files, as a fresh clone has them, with the installed .venv."""
    files = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)
    for name in ("pyproject.toml", "requirements.lock"):  # older than the venv's stamp: make
        os.utime(dst / name, (0, 0))  # must not reinstall into the shared virtualenv
    (dst / ".venv").symlink_to(sys.prefix)
    return dst


def _substitute(code: str, base_url: str, secret: str) -> str:
    return code.replace(PLACEHOLDER_URL, base_url).replace(PLACEHOLDER_SECRET, secret)


def _cron_command(line: str, mapping: dict[str, str]) -> str:
    command = line.strip().split(None, 5)[5]  # drop the five schedule fields
    for path, local in mapping.items():
        command = command.replace(path, local)
    return command


@pytest.fixture
def readme_client(monkeypatch):
    """The README's client id, known to the sandbox with a secret unique to this test."""
    from creator_sync.sandbox import auth

    secret = f"readme-{secrets.token_hex(16)}"
    monkeypatch.setitem(auth.CLIENTS, README_CLIENT_ID, (secret, auth.ALL_SCOPES))
    return secret


def test_the_user_guide_runs_as_written(tmp_path, readme_client):
    from creator_sync.sandbox.testing import run_sandbox

    pages = doc_pages()
    missing = [page.name for page in pages if not page.is_file()]
    assert not missing, f"pages the README lists under Read on that do not exist: {missing}"
    blocks = [b for page in pages
              for b in readme_blocks(page.read_text(), page.relative_to(REPO).as_posix())]
    runnable = [b for b in blocks if b.lang in RUNNABLE]
    for page in {b.page for b in runnable}:
        skipped = [b.line for b in runnable if b.page == page and b.marker == "skip"]
        assert len(skipped) <= SKIPS_PER_PAGE, f"{page}: keep the skipped blocks few: {skipped}"
    secret = readme_client
    home = tmp_path / "home"
    home.mkdir()
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("SOURCES__", "DESTINATION__", "CREATOR_SYNC__", "RUNTIME__"))}
    base_env.update(HOME=str(home), DLT_DATA_DIR=str(home / ".dlt"), PYTHONUNBUFFERED="1",
                    RUNTIME__DLTHUB_TELEMETRY="false", NO_COLOR="1",
                    PATH=f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    clone = _clone(tmp_path / "clone")
    user_dir = tmp_path / "my-warehouse"
    user_dir.mkdir()
    (user_dir / ".venv").symlink_to(sys.prefix)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "secret").write_text(secret)
    mapping = dict(zip(CRON_PATHS, (str(user_dir), str(tmp_path / "etc" / "secret"),
                                    str(tmp_path / "cron.log")), strict=True))
    states = {name: tmp_path / f"state-{name}" for name in ("clone", "user")}
    for state in states.values():
        state.mkdir()
    sessions = {"clone": Session(clone, dict(base_env), states["clone"]),
                "user": Session(user_dir, dict(base_env), states["user"])}
    ran: list[Block] = []
    with run_sandbox(scale="tiny", sites=2, seed=42) as sandbox:
        for block in runnable:
            if block.marker == "skip":
                continue
            clone_block = block.page == "README.md" and block.section in CLONE_SECTIONS
            session = sessions["clone" if clone_block else "user"]
            where = f"{block.page} line {block.line} ({block.section}, {block.lang})"
            code = _substitute(block.code, sandbox.base_url, secret)
            if block.lang == "toml":
                target = code.splitlines()[0].lstrip("# ").strip()
                assert target.endswith(".toml"), f"{where}: name the file on its first line"
                path = session.cwd / target
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a") as handle:
                    handle.write(code)
            elif block.lang == "cron":
                session.bash(_cron_command(code, mapping), where)
            elif block.lang == "python":
                script = session.state / f"block-{len(ran)}.py"
                script.write_text(code)
                session.bash(f"python {script}", where)
            elif block.marker == "background":
                session.start(code, where, ready="ready at")
            else:
                session.bash(code, where)
            ran.append(block)
        stopped = sessions["user"].stop_background()

    sections = {(b.page, b.section) for b in ran}
    for wanted in ("Quick start", "Against a real account", "Scheduling"):
        assert ("README.md", wanted) in sections, (wanted, sections)
    for page in ("docs/sync.md", "docs/models.md", "docs/report.md", "docs/webhooks.md"):
        assert any(b.page == page for b in ran), f"no block of {page} ran"
    assert any(b.lang == "cron" for b in ran) and any(b.marker == "background" for b in ran)
    # what the guide promised is there
    assert (clone / "demo.duckdb").is_file() and (clone / "demo-report.html").is_file()
    assert (user_dir / "creator_platform.duckdb").is_file() and (user_dir / "report.html").is_file()
    assert "sites:" in (tmp_path / "cron.log").read_text()  # the cron run's summary
    assert stopped and all("stopped:" in out for out in stopped), stopped
    outputs = sessions["user"].outputs + stopped
    hook_secret = sessions["user"].env.get("CREATOR_SYNC_WEBHOOK_SECRET")
    assert hook_secret and all(hook_secret not in out for out in outputs)
    # no file but the user's own secrets holds the client secret, however many runs wrote
    for path in user_dir.rglob("*"):
        if path.is_file() and path.name != "secrets.toml":
            assert secret.encode() not in path.read_bytes(), path
    assert all(secret not in out for out in outputs)
