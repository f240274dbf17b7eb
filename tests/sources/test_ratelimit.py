"""The adaptive rate limiter against scripted 429 sequences, on a fake clock.

Single-thread tests script every answer and assert the rate trajectory (slow start, the cut on a
429, Retry-After, the probe, additive increase, the hard cap). The threaded tests run workers in
virtual time against the sandbox's own window limiter, so minutes of pacing take a moment.
"""

from __future__ import annotations

import itertools
import random
import threading
import time

import pytest
from virtualtime import VirtualTime

from creator_sync.sandbox.ratelimit import RateLimiter as WindowLimit
from creator_sync.sources.creator_platform import ratelimit as rl
from creator_sync.sources.creator_platform.ratelimit import LimiterClosed, Permit, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def limiter(clock: Clock, per_minute: float | None = None, **kw) -> RateLimiter:
    return RateLimiter(per_minute, clock=clock, sleep=clock.sleep, rng=random.Random(7), **kw)


def answer(lim: RateLimiter, clock: Clock, count: int, over_s: float) -> None:
    """`count` requests sent and answered 200, spread evenly over `over_s` seconds."""
    for _ in range(count):
        permit = lim.acquire()
        lim.on_response(permit, 200)
        clock.now += over_s / count


def test_slow_start_doubles_every_half_second_while_requests_wait():
    clock = Clock()
    lim = limiter(clock)
    assert lim.rate_per_minute == rl.START_PER_MINUTE
    while clock.now < 1.0:
        lim.on_response(lim.acquire(), 200)
    # two doublings in one second of requests held back by the pacer
    assert 3.6 * rl.START_PER_MINUTE < lim.rate_per_minute < 4.4 * rl.START_PER_MINUTE
    gaps = [s for s in clock.slept if s > 0]
    assert gaps[0] == pytest.approx(60 / rl.START_PER_MINUTE)  # paced from the first request
    assert gaps[-1] < gaps[0] / 3


def test_rate_does_not_grow_while_demand_is_below_it():
    clock = Clock()
    lim = limiter(clock)
    for _ in range(20):
        lim.on_response(lim.acquire(), 200)
        clock.now += 1.0  # one request a second: the pacer never holds anyone back
    assert lim.rate_per_minute == rl.START_PER_MINUTE
    assert not clock.slept


def test_slow_start_grows_while_half_the_rate_is_in_use():
    """30 requests a second under a pace of 40: never held, yet three quarters of the rate is in
    use (RFC 7661's test), so slow start goes on, up to twice the demand and no further."""
    clock = Clock()
    lim = limiter(clock)
    while clock.now < 5.0:
        lim.on_response(lim.acquire(), 200)
        clock.now += 1 / 30
    assert not clock.slept
    assert 55 <= lim.rate_per_minute / 60 <= 70


def test_first_429_cuts_to_what_the_minute_let_through_once_per_event():
    clock = Clock()
    lim = limiter(clock)
    in_flight = [lim.acquire() for _ in range(3)]  # sent before the first 429 comes back
    answer(lim, clock, 100, over_s=2.0)
    lim.on_response(lim.acquire(), 429)
    # a per-minute window admitted 100: ride 0.9 of that, not 0.9 of slow start's pace
    assert lim.rate_per_minute == pytest.approx(rl.DECREASE * 100)
    for permit in in_flight:  # the same event: no further cut
        lim.on_response(permit, 429)
    assert lim.rate_per_minute == pytest.approx(90)
    report = lim.report()
    assert report.found_per_minute == 100 and report.throttled == 4
    assert report.describe() == "rate: ~100 req/min found (adaptive; 4 x 429)"


def test_retry_after_holds_everyone_then_one_probe_then_pacing():
    clock = Clock()
    lim = limiter(clock)
    answer(lim, clock, 100, over_s=2.0)
    refused = lim.acquire()  # (it may wait for its slot: the 429 comes after that)
    hit_at = clock.now
    lim.on_response(refused, 429, retry_after=30.0)
    probe = lim.acquire()
    assert probe.probe and clock.now == pytest.approx(hit_at + 30.0)

    def no_more(seconds: float) -> None:  # a second caller must wait for the probe's answer
        assert seconds == rl.PROBE_POLL_S
        raise TimeoutError

    lim._sleep = no_more
    with pytest.raises(TimeoutError):
        lim.acquire()
    lim._sleep = clock.sleep
    lim.on_response(probe, 200)
    started = clock.now
    lim.acquire()
    assert not lim.acquire().probe
    # paced at 90/min (with no cap, a slot may go BURST_S early)
    assert clock.now - started == pytest.approx(2 * 60 / 90 - rl.BURST_S, rel=0.01)


def test_without_retry_after_waits_until_the_minute_has_room():
    clock = Clock()
    lim = limiter(clock)
    answer(lim, clock, 100, over_s=2.0)  # first answer at t=0
    lim.on_response(lim.acquire(), 429)
    probe = lim.acquire()
    assert probe.probe
    assert clock.now == pytest.approx(60.0)  # when the oldest answer leaves a 60 s window
    lim.on_response(probe, 429)  # a little early (our oldest answer was not the server's)
    assert lim.acquire().probe
    assert 61.0 <= clock.now <= 61.25  # backs off from 1 s, not from the minute's wait


def test_refused_probes_double_the_wait_with_jitter():
    clock = Clock()
    lim = limiter(clock)
    lim.on_response(lim.acquire(), 429)  # no answers yet: no per-minute count explains it
    waits = []
    for _ in range(5):
        before = clock.now
        probe = lim.acquire()
        waits.append(clock.now - before)
        lim.on_response(probe, 429)
    assert 1.0 <= waits[0] <= 1.25
    for previous, wait in itertools.pairwise(waits):
        assert 2 * previous <= wait <= 2.5 * previous
    assert lim.rate_per_minute == pytest.approx(rl.DECREASE * rl.START_PER_MINUTE)  # cut once


def test_additive_increase_regains_the_cut_then_probes_upward():
    clock = Clock()
    lim = limiter(clock)
    answer(lim, clock, 100, over_s=2.0)
    lim.on_response(lim.acquire(), 429, retry_after=0.0)
    cut_at = clock.now
    lim.on_response(lim.acquire(), 200)  # the probe
    trajectory = {}
    while clock.now < cut_at + rl.RECOVER_S + rl.PROBE_UP_S:
        lim.on_response(lim.acquire(), 200)
        trajectory[int(clock.now - cut_at)] = lim.rate_per_minute
    assert trajectory[30] == pytest.approx(95, abs=1)  # linear: half the cut back in half the time
    assert trajectory[59] == pytest.approx(100, abs=1)
    assert trajectory[int(rl.RECOVER_S + rl.PROBE_UP_S) - 1] == pytest.approx(200, rel=0.1)


def test_each_later_429_cuts_by_the_decrease():
    clock = Clock()
    lim = limiter(clock)
    answer(lim, clock, 100, over_s=2.0)
    lim.on_response(lim.acquire(), 429, retry_after=0.0)
    lim.on_response(lim.acquire(), 200)
    clock.now += 120  # the minute has emptied; 50 answers in the next one, then a 429
    answer(lim, clock, 50, over_s=30.0)
    before = lim.rate_per_minute
    lim.on_response(lim.acquire(), 429, retry_after=0.0)
    assert lim.rate_per_minute == pytest.approx(rl.DECREASE * min(before, 50))
    assert lim.report().found_per_minute == 50


def test_a_storm_of_429s_is_backed_off_not_taken_for_the_limit():
    clock = Clock()
    lim = limiter(clock)
    for _ in range(30):  # as many refusals as answers in the last minute: an overloaded platform
        lim.on_response(Permit(-1), 200)
        lim.on_response(Permit(-1), 429)  # (sent before any cut: these cut nothing)
    lim.on_response(lim.acquire(), 200)  # the probe that reopened
    before = lim.rate_per_minute
    assert before == rl.START_PER_MINUTE
    lim.on_response(lim.acquire(), 429)
    assert lim.rate_per_minute == pytest.approx(rl.DECREASE * before)  # not 0.9 x 30/min
    assert lim.report().found_per_minute is None
    started = clock.now
    assert lim.acquire().probe and 1.0 <= clock.now - started <= 1.25  # not a minute


def test_hard_cap_is_never_exceeded():
    clock = Clock()
    lim = limiter(clock, per_minute=300)
    assert lim.rate_per_minute == pytest.approx(291)  # 0.97 x the cap, below slow start's start
    answer(lim, clock, 100, over_s=20.0)
    lim.on_response(lim.acquire(), 429, retry_after=0.0)
    lim.on_response(lim.acquire(), 200)
    assert lim.rate_per_minute == pytest.approx(rl.DECREASE * 100)
    while clock.now < 300:  # minutes without a 429: additive, then upward probing
        lim.on_response(lim.acquire(), 200)
    assert lim.rate_per_minute == pytest.approx(291)
    assert lim.report().describe().endswith("(adaptive, capped at 300 by --rate-limit; 1 x 429)")


def test_fixed_mode_keeps_its_rate_through_429s():
    clock = Clock()
    lim = limiter(clock, per_minute=600, adaptive=False)
    answer(lim, clock, 100, over_s=10.0)
    lim.on_response(lim.acquire(), 429, retry_after=1.0)
    assert lim.rate_per_minute == pytest.approx(582)
    assert lim.acquire().probe  # still waits and probes
    unpaced = limiter(clock, adaptive=False)
    unpaced.on_response(unpaced.acquire(), 429)
    assert unpaced.rate_per_minute is None
    assert unpaced.report().describe().startswith("rate: no limit found")


def test_no_429_report_names_the_busiest_minute():
    clock = Clock()
    lim = limiter(clock)
    answer(lim, clock, 250, over_s=50.0)
    answer(lim, clock, 20, over_s=40.0)  # the run lasts more than a minute
    assert lim.report().describe() == "rate: no limit found, up to 255 req/min (adaptive; 0 x 429)"


def test_no_429_report_of_a_run_shorter_than_a_minute_states_a_true_rate():
    """Issue 38, point 5: "up to 845 req/min" after a 4-second sync was a count, not a rate."""
    clock = Clock()
    lim = limiter(clock, adaptive=False)  # unpaced: the answers come when `answer` says
    answer(lim, clock, 845, over_s=4.0 * 845 / 844)  # the last answer 4 s after the first
    assert lim.report().describe() == ("rate: no limit found, 845 request(s) in 4 s, "
                                       "12675 req/min (fixed; 0 x 429)")
    few = limiter(Clock(), adaptive=False)
    answer(few, few._clock, 3, over_s=0.2)
    assert few.report().describe() == ("rate: no limit found, 3 request(s) in under a second "
                                       "(fixed; 0 x 429)")


# ---------------------------------------------------------------- threads in virtual time
def ride(per_minute: int, *, retry_after: bool, kind: str = "sliding", workers: int = 16,
         seconds: float = 300.0, rtt: float = 0.02, cap: float | None = None):
    """`workers` threads send through one limiter to a windowed limit for `seconds`."""
    vt = VirtualTime()
    server = WindowLimit(per_minute, 60.0, kind, clock=vt.clock)
    lim = RateLimiter(cap, clock=vt.clock, sleep=vt.sleep, rng=random.Random(3))
    log: list[tuple[float, int]] = []

    def worker() -> None:
        while True:
            permit = lim.acquire()
            if vt.now >= seconds:
                lim.on_error(permit)
                return
            sent = vt.now
            vt.sleep(rtt / 2)
            refused = server.check("client")
            vt.sleep(rtt / 2)
            lim.on_response(permit, 429 if refused else 200,
                            float(refused) if refused and retry_after else None)
            log.append((sent, 429 if refused else 200))

    vt.run([worker] * workers)
    return lim, sorted(log)


@pytest.mark.parametrize("retry_after", [True, False])
@pytest.mark.parametrize("kind", ["sliding", "fixed"])
def test_rides_a_per_minute_window_it_was_not_told(kind, retry_after):
    lim, log = ride(100, retry_after=retry_after, kind=kind)
    ok = [t for t, status in log if status == 200]
    refused = len(log) - len(ok)
    achieved = (len(ok) - 1) / (ok[-1] - ok[0]) * 60
    assert achieved >= 0.85 * 100
    assert refused <= 0.03 * len(log), refused
    assert lim.report().found_per_minute >= 100
    if kind == "sliding":  # the server's own rule, checked on our log: never above the limit
        assert all(
            sum(1 for u in ok if t - 60 < u <= t) <= 100 for t in ok
        )


def bursts_of_reads(**kw) -> tuple[RateLimiter, list[float]]:
    """A page's 16 detail reads ask at once, every 100 ms, for 5 s, with no limit anywhere:
    the limiter, and how long each read of the last second waited for its slot."""
    vt = VirtualTime()
    lim = RateLimiter(clock=vt.clock, sleep=vt.sleep, rng=random.Random(3), **kw)
    waits: list[tuple[float, float]] = []

    def worker() -> None:
        while vt.now < 5.0:
            vt.sleep(round(vt.now // 0.1 + 1) * 0.1 - vt.now)  # the next page's reads are ready
            asked = vt.now
            permit = lim.acquire()
            waits.append((asked, vt.now - asked))
            vt.sleep(0.05)
            lim.on_response(permit, 200)

    vt.run([worker] * 16)
    return lim, [wait for asked, wait in waits if asked >= 4.0]


def test_slow_start_credits_the_time_a_burst_was_held():
    """Each burst is held for 15 intervals, although the next burst never finds the queue still
    full: that held time grows the rate (crediting only calls that found the queue full left it
    near the bursts' mean, ~140/s, and every burst paced over most of a round trip)."""
    lim, last_second = bursts_of_reads(burst_s=0.0)  # strict spacing: only the growth helps
    assert lim.rate_per_minute > 60 * 500
    assert max(last_second) < 0.03


def test_bursts_within_the_tolerance_go_at_once():
    """With no cap, the schedule may run BURST_S ahead (GCRA): once the rate allows a burst of
    16 in that time, a page's reads go together instead of spread over 15 intervals."""
    lim, last_second = bursts_of_reads()
    assert max(last_second) < 0.005  # spacing 16 reads at the rate would hold the last ~40 ms
    assert lim.rate_per_minute >= 60 * 15 / rl.BURST_S


def test_sixteen_workers_under_a_cap_do_not_burst():
    _lim, log = ride(1000, retry_after=True, workers=16, seconds=60.0, cap=100)
    starts = [t for t, _ in log]
    assert all(status == 200 for _, status in log)
    assert len(starts) == pytest.approx(97, abs=1)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) == pytest.approx(60 / 97, rel=0.01)


def test_answers_on_another_budget_are_not_counted_as_the_limit():
    clock = Clock()
    lim = limiter(clock)
    for _ in range(5):  # token grants: the platform limits those on their own budget
        lim.on_response(lim.acquire(), 200, in_budget=False)
    answer(lim, clock, 60, over_s=2.0)
    lim.on_response(lim.acquire(), 429)
    assert lim.report().found_per_minute == 60


def test_cut_waits_refuses_the_requests_waiting_then_paces_the_later_ones():
    """A checkpoint ends its round without the reads its listings abandoned: the requests
    waiting out a 429 hold give up (they neither send nor keep send slots), and the limiter
    goes on serving the next round, the hold still in force for it."""
    lim = RateLimiter(60, adaptive=False)  # the real clock: a wait that can be cut
    lim.on_response(lim.acquire(), 429, retry_after=0.5)  # every request held half a second
    outcomes: list[str] = []

    def wait() -> None:
        try:
            lim.acquire()
            outcomes.append("sent")
        except LimiterClosed:
            outcomes.append("refused")

    waiters = [threading.Thread(target=wait) for _ in range(3)]
    for t in waiters:
        t.start()
    time.sleep(0.1)  # all three are held by the hold
    assert outcomes == []
    lim.cut_waits()
    for t in waiters:
        t.join(timeout=5)
    assert outcomes == ["refused"] * 3
    lim.acquire()  # a later request waits out what is left of the hold, then is sent


def test_close_refuses_every_later_request_too():
    lim = RateLimiter(60, adaptive=False)
    lim.cut_waits()
    lim.acquire()  # a cut refuses only the requests waiting then
    lim.close()
    with pytest.raises(LimiterClosed):
        lim.acquire()
