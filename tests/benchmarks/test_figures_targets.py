"""Issue 15's figures: each printed with its target and a status from the measurements
(fast, no sandbox); which of ours and the peer runs first alternates from round to round."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from csbench import figures
from csbench.measure import Measurement, Request
from csbench.suite import Bench, Options, Results


def _options(tmp_path: Path, scale: str = "small", phases: tuple[str, ...] = ("cpu",)) -> Options:
    return Options(scale=scale, runs=1, seed=42, sites=2, latency_ms=50, rate_limit=600,
                   rate_window_s=45, concurrency=None, peer_parallelized=False,
                   workdir=tmp_path, client_timeout_s=60, phases=phases, adaptive_limits=())


def _run(label: str, wall: float, cpu: float, rss: float, requests: int = 3) -> Measurement:
    m = Measurement(label, 0, wall, cpu, rss,
                    requests=[Request(i, i + 0.1, "GET", "/v1/x", "", 200) for i in range(requests)])
    m.load_avg = 1.0
    return m


def _by_key(results: Results, options: Options) -> dict[str, figures.Figure]:
    return {f.key: f for f in figures.compute(results, options)}


def test_nothing_new_is_judged_against_its_absolute_targets_at_small(tmp_path) -> None:
    results = Results()
    results.measurements["ours_cpu"].append(_run("ours_cpu", 30, 20, 300))
    results.measurements["ours_incr_none_cpu"].append(_run("ours_incr_none_cpu", 2.9, 2.6, 200))
    figs = _by_key(results, _options(tmp_path))
    wall, cpu = figs["nothing_new_wall_s"], figs["nothing_new_cpu_s"]
    assert (wall.value, wall.target, wall.status) == (2.9, "≤ 3.0 s", "met")
    assert (cpu.value, cpu.target, cpu.status) == (2.6, "≤ 2.5 s", "MISSED")
    # at another scale the same seconds are information, not a verdict
    other = _by_key(results, _options(tmp_path, scale="tiny"))
    assert other["nothing_new_cpu_s"].status == "info"


def test_peer_ratios_use_the_quarter_targets(tmp_path) -> None:
    results = Results()
    results.facts["records"] = 100_000
    results.measurements["ours_cpu"].append(_run("ours_cpu", 30, 24, 300))
    results.measurements["peer_cpu"].append(_run("peer_cpu", 90, 80, 500))
    figs = _by_key(results, _options(tmp_path))
    assert figs["cpu_vs_peer"].target == "≤ 0.25"
    assert figs["cpu_vs_peer"].status == "MISSED"  # 0.30
    results.measurements["ours_cpu"][0].cpu_s = 19.0
    assert _by_key(results, _options(tmp_path))["cpu_vs_peer"].status == "met"
    assert figs["wall_vs_peer"].target == "≤ 0.25"


def test_large_figures_compare_with_this_runs_scale_and_report_wall_and_requests(tmp_path) -> None:
    options = _options(tmp_path, phases=("cpu", "large"))
    results = Results()
    results.measurements["ours_cpu"].append(_run("ours_cpu", 30, 20, 300))
    assert _by_key(results, options)["rss_large"].status == "n/a"  # never a number from nothing
    results.measurements["ours_large"].append(_run("ours_large", 4000, 3000, 420, requests=7))
    figs = _by_key(results, options)
    assert figs["rss_large"].value == 1.4 and figs["rss_large"].status == "MISSED"
    assert figs["large_wall"].value == 4000 and figs["large_requests"].value == 7
    assert "large" not in {f.key.split("_")[0] for f in figures.compute(results, _options(tmp_path))}


def test_ours_and_the_peer_swap_order_every_other_round(tmp_path) -> None:
    bench = Bench(_options(tmp_path))
    order: list[str] = []

    def fake_measure(label, target, run_dir, env=None, stop_after_s=None):
        order.append(label)
        m = _run(label, 1, 1, 1)
        bench.results.measurements[label].append(m)
        return m

    bench.measure = fake_measure  # type: ignore[method-assign]
    bench.note_request_floor = lambda sandbox, measured: None  # type: ignore[method-assign]
    bench.results.facts["records"] = 1  # no census against a real sandbox

    class FakeSandbox:
        base_url = "http://127.0.0.1:9"

    for _ in range(3):
        bench.cpu_round(FakeSandbox())  # type: ignore[arg-type]
    firsts = [label for label in order if label in {"ours_cpu", "peer_cpu"}]
    assert firsts == ["ours_cpu", "peer_cpu", "peer_cpu", "ours_cpu", "ours_cpu", "peer_cpu"]
    assert order.count("ours_incr_none_cpu") == 3  # nothing new, after every full run
