"""Issue 16 point 1: the source in a user's own dlt pipeline, as docs/sync.md shows it.

The page's script runs literally (only the base URL and the secret substituted), in an empty
directory configured as `creator-sync init` leaves it, against a sandbox; what it loads must
equal what `creator-sync sync` loads from the same sandbox, table by table. Then the page's
`dlt pipeline ... info` line must work on the CLI's pipeline, and nothing the user's run left
behind (dlt's trace.pickle included) may hold the client secret.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from sandbox_helpers import CLIENT_ID, CLIENT_SECRET, snapshot

from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform.dlt_logs import HintMergeFilter

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Use the source in your own dlt pipeline"
PLACEHOLDER_URL = "https://api.your-platform.example"
PLACEHOLDER_SECRET = "YOUR_CLIENT_SECRET"
BIN = Path(sys.executable).parent


def section_blocks(lang: str) -> list[str]:
    text = (REPO / "docs" / "sync.md").read_text()
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", body, re.S)


def user_dir(tmp: Path, base_url: str) -> Path:
    """An empty directory configured as `creator-sync init` leaves it (config.toml, secrets.toml)."""
    (tmp / ".dlt").mkdir(parents=True)
    (tmp / ".dlt" / "config.toml").write_text(
        f'[sources.creator_platform]\nbase_url = "{base_url}"\nclient_id = "{CLIENT_ID}"\n')
    (tmp / ".dlt" / "secrets.toml").write_text(
        f'[sources.creator_platform]\nclient_secret = "{CLIENT_SECRET}"\n')
    return tmp


def run(cmd: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "CREATOR_SYNC"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{cmd} failed ({done.returncode}):\n{out[-4000:]}"
    assert "Traceback" not in out, out[-4000:]
    return out


@pytest.fixture(scope="module")
def sandbox():
    handle = start_sandbox(scale="tiny", sites=2, seed=16, now="2026-03-01T12:00:00Z")
    yield handle
    handle.stop()


def test_readme_script_loads_what_the_cli_loads(sandbox, tmp_path):
    [script] = section_blocks("python")
    assert len([ln for ln in script.strip().splitlines()]) <= 10
    script = script.replace(PLACEHOLDER_URL, sandbox.base_url).replace(PLACEHOLDER_SECRET, CLIENT_SECRET)
    mine = user_dir(tmp_path / "user", sandbox.base_url)
    (mine / "load.py").write_text(script)
    out = run([sys.executable, "load.py"], mine)
    # json-hinted columns travel as arrow text on purpose: dlt must not warn about it (it did,
    # 12 [WARNING] lines, when only the CLI filtered them)
    assert "when merging arrow schema" not in out, out[-4000:]

    cli = user_dir(tmp_path / "cli", sandbox.base_url)
    assert "when merging arrow schema" not in run([str(BIN / "creator-sync"), "sync"], cli)

    # a copy under another name: the default file is named like its dataset (DuckDB would
    # need catalog-qualified names to read it)
    cli_db = shutil.copy(cli / "creator_platform.duckdb", tmp_path / "cli_copy.duckdb")
    theirs, ours = snapshot(cli_db), snapshot(mine / "my_creator_platform.duckdb")
    assert sorted(ours) == sorted(theirs)
    for table in theirs:
        assert ours[table] == theirs[table], f"{table} differs"
    assert sum(len(rows) for rows in theirs.values()) > 100  # the sandbox really had data

    # finish_sync ran: the bookkeeping the models read is the CLI's
    def bookkeeping(db: Path) -> list[tuple]:
        with duckdb.connect(str(db), read_only=True) as con:
            return con.execute(
                "select resource, status, rows_loaded, complete_through_at from "
                "creator_platform.sync_resources order by resource").fetchall()
    assert bookkeeping(mine / "my_creator_platform.duckdb") == bookkeeping(cli_db)

    # finish_sync took the DuckDB warehouse lock (the one `listen` and `sync` take)
    assert (mine / "my_creator_platform.duckdb.lock").exists()

    # no file of the user's run holds the secret (dlt's trace.pickle included)
    traces = list((mine / ".dlt-pipelines").rglob("trace.pickle"))
    assert traces
    for path in mine.rglob("*"):
        if path.is_file() and path.name != "secrets.toml":
            assert CLIENT_SECRET.encode() not in path.read_bytes(), path

    # the page's `dlt pipeline ... info` on the CLI's pipeline
    [info_block] = section_blocks("bash")
    command = info_block.strip().replace(".venv/bin/dlt", str(BIN / "dlt"))
    out = run(["bash", "-c", command], cli)
    assert "creator_sync_creator_platform" in out and "transactions" in out.lower()


# A user's own modules named like the repository's folders (issue 32, point 6: `common.py`
# beside the README's script broke it with "No module named 'common.locking'").
USER_MODULES = ("common", "models", "pipelines", "report", "sandbox", "sources")
USER_SCRIPT = """\
import common  # the user's own helpers, named like our folders
import models

import dlt
from creator_sync.models.runner import run_models
from creator_sync.pipelines.postload import finish_sync
from creator_sync.sources.creator_platform import creator_platform_source

source = creator_platform_source()
pipeline = dlt.pipeline("my_creator_platform", destination="duckdb", dataset_name="creator_platform",
                        pipelines_dir=".dlt-pipelines")
info = pipeline.run(source)
finish_sync(pipeline, source, info)
built = run_models("my_creator_platform.duckdb")
print("user modules:", common.WHO, models.WHO)
print("models built:", ",".join(sorted(built.row_counts)))
"""


def shadow(where: Path) -> None:
    """The user's `common.py`, `models/` and the other names of our folders, in `where`."""
    for name in USER_MODULES:
        if name == "models":
            (where / name).mkdir()
            (where / name / "__init__.py").write_text('WHO = "user"\n')
        else:
            (where / f"{name}.py").write_text('WHO = "user"\n')


def test_a_users_common_py_and_models_folder_do_not_shadow_ours(sandbox, tmp_path):
    """The user's script imports the source, runs it, finishes the sync and builds the models
    from its own folder, beside its own `common.py` and `models/`: ours live in `creator_sync`
    only, theirs stay theirs."""
    mine = user_dir(tmp_path / "user", sandbox.base_url)
    shadow(mine)
    (mine / "load.py").write_text(USER_SCRIPT)
    out = run([sys.executable, "load.py"], mine)
    assert "user modules: user user" in out, out[-4000:]
    built = set(re.search(r"models built: (\S+)", out).group(1).split(","))
    marts = {path.stem for path in (REPO / "sql" / "models" / "marts").glob("*.sql")}
    assert marts and marts <= built, out[-4000:]
    with duckdb.connect(str(mine / "my_creator_platform.duckdb"), read_only=True) as con:
        (rows,) = con.execute("select count(*) from creator_platform.transactions").fetchone()
    assert rows > 0


def test_hint_merge_filter_drops_only_this_sources_warning():
    def record(resource: str) -> logging.LogRecord:
        return logging.LogRecord(
            "dlt", logging.WARNING, __file__, 1,
            f"In resource: {resource}, when merging arrow schema with dlt schema, several "
            "column hints were different.", None, None)
    keep = HintMergeFilter().filter
    assert not keep(record("customers")) and not keep(record("podcasts"))
    # the source's own resources that write the collections' tables (tombstones, re-reads)
    assert not keep(record("deletions")) and not keep(record("customers_refresh"))
    assert keep(record("someone_elses_resource"))  # a user's own resources still warn
    assert keep(logging.LogRecord("dlt", logging.WARNING, __file__, 1, "other", None, None))
