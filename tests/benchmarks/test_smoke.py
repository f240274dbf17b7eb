"""Smoke run of the benchmark suite at scale ``tiny``, so that ``benchmarks/run`` cannot rot.

It runs the real thing end to end (sandbox in its own process, ours, dlt's rest_api peer, the
httpx floors, incremental and rate-limited runs) and checks that the table carries every row
and every figure with a measured value. It does not check the targets: those are for
``benchmarks/run --scale small`` on a quiet machine, never for a timed unit test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "benchmarks" / "run"
sys.path.insert(0, str(REPO / "benchmarks"))

from csbench.figures import OPTIONAL_ROWS, ROWS  # noqa: E402
from csbench.suite import ADAPTIVE_LIMITS  # noqa: E402

pytestmark = pytest.mark.slow  # minutes: rate-limited runs wait on the sandbox's limiter

FIGURE_KEYS = {
    "wall_vs_peer",
    "wall_vs_floor_seq",
    "wall_vs_floor_conc",
    "rate_use",
    "no_limit_cost",
    "cpu_vs_peer",
    "rss_flat",
    "rss_vs_peer",
    "incr_requests",
    "ours_incr_none_wall",
    "ours_incr_1000_wall",
    "nothing_new_wall_s",
    "nothing_new_cpu_s",
}


COMMAND = ("--scale", "tiny", "--runs", "1", "--latency-ms", "20", "--rate-limit", "1200",
           "--adaptive-bound", "20")


@pytest.fixture(scope="module")
def smoke(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path_factory.mktemp("bench") / "tiny.json"
    result = subprocess.run(
        # 20 ms latency instead of 100; the capped run at 1,200/min instead of 600 (a tiny sync's
        # ~110 requests fit either: 5 s of pacing instead of 11); adaptive runs bounded at 20 s
        # instead of 45 (their 429 comes within seconds; the rest of the bound was a worker
        # waiting): the same code paths, a shorter smoke run
        [
            sys.executable,
            str(RUN),
            *COMMAND,
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (
        f"benchmarks/run failed:\n{result.stdout}\n{result.stderr[-4000:]}"
    )
    return result, json.loads(out.read_text())


@pytest.mark.timeout(660)
def test_table_has_every_row_with_measurements(smoke: tuple) -> None:
    result, payload = smoke
    rows = {row["label"]: row for row in payload["rows"]}
    for label, description in ROWS:
        if label in OPTIONAL_ROWS:
            continue
        assert label in rows, f"row {label} missing from the results"
        assert rows[label]["runs"] == 1, f"row {label} has no successful run: {rows[label]}"
        assert rows[label]["wall_s"] > 0
        assert rows[label]["cpu_s"] > 0
        assert rows[label]["max_rss_mib"] > 0
        assert rows[label]["requests"] > 0, f"row {label} made no request"
        assert description in result.stdout, f"row {description!r} not printed"


@pytest.mark.timeout(660)
def test_table_has_every_figure_with_a_value(smoke: tuple) -> None:
    result, payload = smoke
    figures = {figure["key"]: figure for figure in payload["figures"]}
    assert set(figures) >= FIGURE_KEYS, f"missing figures: {FIGURE_KEYS - set(figures)}"
    for key in FIGURE_KEYS:
        figure = figures[key]
        assert figure["value"] is not None, f"figure {key} has no value: {figure['note']}"
        assert math.isfinite(figure["value"]) and figure["value"] > 0, figure
        assert figure["status"] in {"met", "MISSED", "info"}, figure
        assert figure["name"] in result.stdout, f"figure {figure['name']!r} not printed"


@pytest.mark.timeout(660)
def test_adaptive_rate_settings_are_measured_with_and_without_retry_after(smoke: tuple) -> None:
    result, payload = smoke
    figures = {figure["key"]: figure for figure in payload["figures"]}
    rows = {row["label"]: row for row in payload["rows"]}
    for limit in ADAPTIVE_LIMITS["tiny"]:
        for header in ("ra", "nora"):
            label = f"adaptive_{limit}_{header}"
            assert rows[label]["runs"] == 1 and rows[label]["status_429"] > 0, rows[label]
            for what in ("use", "429", "failed"):
                figure = figures[f"{label}_{what}"]
                assert figure["value"] is not None, figure
                assert figure["name"] in result.stdout
            assert figures[f"{label}_failed"]["value"] == 0, figures[f"{label}_failed"]


@pytest.mark.timeout(660)
def test_header_names_machine_versions_and_command(smoke: tuple) -> None:
    result, payload = smoke
    assert f"command: benchmarks/run {' '.join(COMMAND)} --json " in result.stdout
    assert f"{payload['machine']['cores']} cores" in result.stdout
    assert f"dlt {payload['machine']['versions']['dlt']}" in result.stdout
    assert payload["facts"]["records"] > 0
    # the floor replays exactly the pages ours fetched: same request count, plus its token
    runs = payload["runs"]
    assert runs["floor_seq"][0]["requests"] == runs["floor_conc"][0]["requests"]
