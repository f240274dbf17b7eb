"""The wheel is the product (issue 12, point 10): built from the source, installed with its
dependencies into a fresh virtualenv away from the source tree, `creator-sync demo` run in an
empty directory syncs the sandbox, builds the models from the SQL inside the wheel and writes
the report.

Needs the package index (PyPI) for the dependencies, pinned by requirements.lock; pip's cache
makes a rerun quick.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import duckdb
import pytest
from test_layers import modules

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What a wheel is built from: everything but caches, environments, build output, state, and the
# top-level tests and benchmarks (sql/tests holds the data tests: it ships).
ANYWHERE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache",
    ".ruff_cache", "*.duckdb*", ".creator-sync",
)


def not_source(folder: str, names: list[str]) -> set[str]:
    top = {"tests", "benchmarks"} if Path(folder) == ROOT else set()
    return set(ANYWHERE(folder, names)) | (top & set(names))


def run(*args: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """A command with a clean environment: nothing of this checkout on the import path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    )
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built by pip from a copy of the source (so stray files cannot leak in)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=not_source)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", work / "dist", source,
        cwd=work)
    (built,) = (work / "dist").glob("creator_sync-*.whl")
    return built


def test_the_wheel_ships_the_sql_models(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    in_repo = {
        f"creator_sync/models/sql/{p.relative_to(ROOT / 'sql').as_posix()}"
        for pattern in ("*.sql", "*.yml")  # the dbt project whole: models, macros, tests, YAML
        for p in (ROOT / "sql").rglob(pattern)
    }
    assert in_repo and in_repo <= names
    assert "creator_sync/models/sql/__init__.py" in names
    assert not any(n.startswith(("tests/", "benchmarks/", "sql/")) for n in names)


def test_the_wheel_installs_one_top_level_package(wheel: Path) -> None:
    """Only `creator_sync` (issue 32, point 6): a user's `common.py` or `models/` cannot shadow
    a package of ours, because none has such a name."""
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"creator_sync"}
    for folder in ("sources/creator_platform", "pipelines/webhooks", "common", "report", "sandbox"):
        assert {f"creator_sync/{folder}/{p.name}" for p in (ROOT / folder).glob("*.py")} <= set(
            names), folder
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")] or [None]
    if top_level is not None:
        assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["creator_sync"]


# Every module of the installed package, imported beside a user's own modules named like the
# repository's folders (the script's folder comes first on sys.path, as for any user script).
IMPORT_ALL = """\
import importlib, json, pkgutil, sys
import common, models, pipelines, report, sandbox, sources  # the user's
import creator_sync
names = [m.name for m in pkgutil.walk_packages(creator_sync.__path__, "creator_sync.")]
for name in names:
    importlib.import_module(name)
ours = [m for m in ("common", "models", "pipelines", "report", "sandbox", "sources")
        if getattr(sys.modules[m], "WHO", None) != "user"]
assert not ours, ours
print(json.dumps({"modules": names, "from": creator_sync.__file__}))
"""


def test_the_installed_wheel_runs_the_demo_with_models_and_report(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python, cli = venv / "bin" / "python", venv / "bin" / "creator-sync"
    run(python, "-m", "pip", "install", "--quiet", "--constraint", ROOT / "requirements.lock",
        wheel, cwd=tmp_path)

    empty = tmp_path / "empty"
    empty.mkdir()
    where = run(python, "-c", "import creator_sync.models.project as p; print(p.SQL_DIR)", cwd=empty)
    assert Path(where.stdout.strip()).is_relative_to(venv), "models must come from the install"

    user = tmp_path / "user"
    user.mkdir()
    for name in ("common", "pipelines", "report", "sandbox", "sources"):
        (user / f"{name}.py").write_text('WHO = "user"\n')
    (user / "models").mkdir()
    (user / "models" / "__init__.py").write_text('WHO = "user"\n')
    (user / "import_all.py").write_text(IMPORT_ALL)
    imported = json.loads(run(python, "import_all.py", cwd=user).stdout)
    assert set(imported["modules"]) == set(modules()) - {"creator_sync"}
    assert Path(imported["from"]).is_relative_to(venv)

    demo = run(cli, "demo", cwd=empty, timeout=300)
    assert "models: built schema `analytics`" in demo.stdout, demo.stdout
    assert "Built on " in demo.stdout and "Revenue excl. tax, 30 days " in demo.stdout
    report = empty / "demo-report.html"
    assert report.is_file() and "Finance report" in report.read_text()
    con = duckdb.connect(str(empty / "demo.duckdb"), read_only=True)
    try:
        (marts,) = con.execute(
            "select count(*) from information_schema.tables where table_schema = 'analytics' "
            "and table_type = 'BASE TABLE'"  # the marts, not their former names' views
        ).fetchone()
        (days,) = con.execute("select count(*) from analytics.revenue_daily").fetchone()
    finally:
        con.close()
    source_marts = len(list((ROOT / "sql" / "models" / "marts").glob("*.sql")))
    assert marts == source_marts and days > 0
