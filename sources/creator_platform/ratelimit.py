"""Client-side pacing shared by every thread of a run: finds the platform's rate limit and rides it.

The platform publishes no limit (addendum A7); its clients assume about 100 requests per minute.
One `RateLimiter` paces the list and the detail pools together, so the budget is one budget:

- **Pacing, not bursts.** Requests are spaced `1 / rate` apart whatever the number of threads, so
  16 detail workers never send 16 requests at once into a per-minute window. Without a cap the
  schedule may run `BURST_S` ahead of the clock (GCRA's tolerance): a page's detail reads go
  together once the rate allows that many in `BURST_S`, instead of the last one waiting most of
  a round trip; any minute still sees at most `rate x (60 + BURST_S) + 1` requests. Under a
  `--rate-limit` cap, spacing stays strict.
- **Slow start.** With no 429 seen yet, the rate starts at `START_PER_MINUTE` and doubles every
  `DOUBLING_S` of the time it holds requests back, or while the requests of the last
  `DOUBLING_S` use at least half of it (RFC 7661's test of a window in use): bursty demand is
  rarely waiting when the next burst asks, and counting only that left its bursts paced for
  most of a run. It never grows while demand is below half the rate. Why this
  start and not the ~100/min clients assume: a per-minute window admits its whole allowance at
  any speed, so the start rate does not decide *whether* the first 429 comes, only how many
  requests are in flight when it does; that number is about (start rate + 1.4 x the limit per
  second) x the round trip, so it is the doubling time, not the start, that keeps it small. A
  platform without a limit is served at full speed within about two seconds.
- **Multiplicative decrease on a 429.** The rate becomes `DECREASE` x the smaller of the current
  rate and what the platform let through in the last minute (our answered requests), which *is*
  its limit when it counts per minute: leaving slow start that is far below the rate, since the
  allowance went out in seconds. 429s of requests sent before a cut (in flight when it came)
  cut nothing more. A 429 that no per-minute count explains (fewer than `MIN_WINDOW_COUNT`
  answers in the minute, or refusals above `STORM_SHARE` of them: an overloaded platform) cuts
  the rate only, and is waited out like a transient error.
- **Additive increase.** Then the rate climbs linearly, regaining the cut in `RECOVER_S` (a
  per-minute window needs a minute to show whether a rate fits); after that, still without a
  429, it doubles every `PROBE_UP_S`, so a limit underestimated (or raised) is found again
  within minutes.
- **After a 429 nobody sends** until `Retry-After` has passed; without that header, until our
  oldest request answered in the last minute is a minute old (when a per-minute window has room
  again), at least one request interval; a 429 no count explains waits 1 s. Then one request
  probes alone; if it is refused too, the wait doubles (with jitter, at most `MAX_PROBE_WAIT_S`);
  when it succeeds, pacing resumes.
- **A hard cap.** `per_minute` (`--rate-limit`) is never exceeded (`headroom` keeps us just
  under it); below it the rate still adapts. `adaptive=False` keeps the rate fixed: the cap,
  or no pacing at all without one.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

WINDOW_S = 60.0  # limits are stated per minute; what the platform let through is counted over it
START_PER_MINUTE = 2400.0  # slow start's first rate (40/s), doubled every DOUBLING_S
DOUBLING_S = 0.5
BURST_S = 0.05  # with no cap, a burst of rate x this goes at once (GCRA's tolerance): see above
DECREASE = 0.9  # multiplicative decrease on a 429 (0.5 would ride a per-minute window at ~0.75)
RECOVER_S = 60.0  # additive increase: the cut is regained in this long
PROBE_UP_S = 10.0  # then, still no 429: the rate doubles every this long
MIN_WINDOW_COUNT = 20  # fewer answers in the last minute than this: the 429 is no per-minute count
STORM_SHARE = 0.25  # more 429s than this per answer in the last minute: a storm, not a count
MIN_PER_MINUTE = 6.0  # never pace slower than one request per 10 s
MAX_PROBE_WAIT_S = 60.0
PROBE_POLL_S = 0.02  # how often waiting threads look whether the probe came back
PROBE_LOST_S = 120.0  # a probe unanswered this long is lost: another one goes


@dataclass(frozen=True)
class Permit:
    """One request's ticket: the regime it was sent under, and whether it is the lone probe."""

    epoch: int
    probe: bool = False


@dataclass(frozen=True)
class RateReport:
    """What the run learnt about the platform's limit (for the summary and RunStats)."""

    mode: str  # "adaptive" or "fixed"
    cap_per_minute: float | None  # --rate-limit
    found_per_minute: float | None  # answered in the minute before the last 429; None: no 429
    rate_per_minute: float | None  # the pace at the end (None: unpaced)
    peak_per_minute: int  # most requests answered in any trailing minute
    throttled: int  # 429 responses
    answered: int = 0  # requests answered (not 429) in the API's budget
    span_s: float = 0.0  # from the first such answer to the last

    def describe(self) -> str:
        """One summary line, e.g. `rate: ~100 req/min found (adaptive; 3 x 429)`.

        Without a 429, the busiest minute's count is a rate only for a run that lasted a
        minute; a shorter run states its requests and how long they took (845 requests in
        4 s are 12,675 req/min, not "up to 845")."""
        how = self.mode if self.cap_per_minute is None else (
            f"{self.mode}, capped at {self.cap_per_minute:g} by --rate-limit")
        if self.found_per_minute is not None:
            return f"rate: ~{self.found_per_minute:.0f} req/min found ({how}; {self.throttled} x 429)"
        if self.span_s >= WINDOW_S:
            return (f"rate: no limit found, up to {self.peak_per_minute} req/min "
                    f"({how}; {self.throttled} x 429)")
        took = f"{self.span_s:.0f} s" if self.span_s >= 1 else "under a second"
        pace = (f", {self.answered * 60 / self.span_s:.0f} req/min"
                if self.span_s >= 1 and self.answered > 1 else "")
        return (f"rate: no limit found, {self.answered} request(s) in {took}{pace} "
                f"({how}; {self.throttled} x 429)")


class LimiterClosed(Exception):
    """A request asked to be sent after the run began to stop (`RateLimiter.close`)."""


class RateLimiter:
    """Thread-safe pacer: `acquire()` before each request, `on_response()` / `on_error()` after."""

    def __init__(
        self,
        per_minute: float | None = None,
        *,
        adaptive: bool = True,
        headroom: float = 0.97,
        start_per_minute: float = START_PER_MINUTE,
        doubling_s: float = DOUBLING_S,
        burst_s: float = BURST_S,
        decrease: float = DECREASE,
        recover_s: float = RECOVER_S,
        probe_up_s: float = PROBE_UP_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if per_minute is not None and per_minute <= 0:
            raise ValueError(f"rate limit must be positive requests/minute, got {per_minute}")
        if not 0 < decrease < 1:
            raise ValueError(f"decrease must be between 0 and 1, got {decrease}")
        self.per_minute = per_minute
        self.adaptive = adaptive
        self._cap = per_minute * headroom / 60.0 if per_minute else math.inf
        if adaptive:
            self._rate = min(self._cap, start_per_minute / 60.0)
        else:
            self._rate = self._cap  # inf: unpaced
        self._doubling_s = doubling_s
        self._burst_s = burst_s if per_minute is None else 0.0  # a user's cap: strict spacing
        self._decrease = decrease
        self._recover_s = recover_s
        self._probe_up_s = probe_up_s
        self._clock = clock
        self._closed = threading.Event()  # `close()`: a stopping run sends nothing more
        # set by `close()` and `cut_waits()`: the requests waiting then give up; a new one for
        # the requests asked after a cut
        self._wake = threading.Event()
        # set by `drop_held()` (and the two above): the requests waiting on a 429 hold then
        # give up; a new one for the requests held after it
        self._held = threading.Event()
        self._sleep = sleep  # None: a wait that `close()` and `cut_waits()` cut short
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._next = 0.0  # the next free send slot
        self._grown_at: float | None = None  # when the rate was last grown
        self._held_until = 0.0  # the slot of the last request the pace held back
        self._asked: deque[float] = deque()  # when requests asked, within the last doubling_s
        self._slow_start = adaptive
        self._epoch = 0  # bumped at every cut: 429s of older requests belong to that cut
        self._gen = 0  # bumped whenever the gate closes: reserved slots are void then
        self._gate_until = 0.0
        self._probing = False
        self._probe_out = False
        self._probe_sent = 0.0
        self._probe_wait = 0.0
        self._slope = 0.0
        self._cut_at = 0.0
        self._answered: deque[float] = deque()  # answer times within the last WINDOW_S
        self._refused: deque[float] = deque()  # 429 times within the last WINDOW_S
        self._peak = 0
        self._answered_total = 0
        self._first_answer: float | None = None
        self._last_answer = 0.0
        self._found: float | None = None
        self.throttled = 0

    # ------------------------------------------------------------------ reading
    @property
    def rate_per_minute(self) -> float | None:
        """The current pace; None when unpaced."""
        return None if math.isinf(self._rate) else self._rate * 60.0

    def report(self) -> RateReport:
        with self._lock:
            return RateReport(
                mode="adaptive" if self.adaptive else "fixed",
                cap_per_minute=self.per_minute,
                found_per_minute=self._found,
                rate_per_minute=self.rate_per_minute,
                peak_per_minute=self._peak,
                throttled=self.throttled,
                answered=self._answered_total,
                span_s=(self._last_answer - self._first_answer
                        if self._first_answer is not None else 0.0),
            )

    # ------------------------------------------------------------------ sending
    def close(self) -> None:
        """The run stops (time budget, signal): requests still waiting to be sent, and any
        asked for later, are refused (`LimiterClosed`) instead of held for the platform's
        window (a stopping run must not wait a minute for reads nobody wants)."""
        with self._lock:
            self._closed.set()
            self._wake.set()
            self._held.set()

    def cut_waits(self) -> None:
        """A round ends (a checkpoint): the requests still waiting to be sent were abandoned
        by their listings and are refused (`LimiterClosed`), so they neither send nor hold send
        slots; requests asked for later are paced as before (the limiter serves every round)."""
        with self._lock:
            self._wake.set()
            self._wake = threading.Event()
            self._held.set()
            self._held = threading.Event()

    def drop_held(self) -> None:
        """A checkpoint is due while a 429 holds requests (the gate, or the probe's wait): those
        are refused (`LimiterClosed`) now, not when the platform's window ends, so the round
        commits on time; the reads are made again next round. Requests only paced (a slot a
        fraction of a second away) are not touched, nor requests held after this call."""
        with self._lock:
            self._held.set()
            self._held = threading.Event()

    def _pause(self, wait: float, wake: threading.Event) -> None:
        if self._sleep is not None:
            self._sleep(wait)
        else:
            wake.wait(wait)

    def acquire(self, *, in_budget: bool = True) -> Permit:
        """Block until this caller may send; returns its permit. A request outside the API's
        budget (`in_budget=False`: the token endpoint) is not paced."""
        if not in_budget:
            return Permit(self._epoch)
        wake, held = self._wake, self._held
        while True:
            if self._closed.is_set() or wake.is_set():
                raise LimiterClosed("the run stops: no more requests")
            with self._lock:
                now = self._clock()
                on_hold = now < self._gate_until or self._probing
                if on_hold and held.is_set():
                    raise LimiterClosed("held by a 429 at a checkpoint: dropped")
                if now < self._gate_until:
                    wait, reserved = self._gate_until - now, None
                elif self._probing:
                    if not self._probe_out or now - self._probe_sent > PROBE_LOST_S:
                        self._probe_out, self._probe_sent = True, now
                        return Permit(self._epoch, probe=True)
                    wait, reserved = PROBE_POLL_S, None
                else:
                    self._grow(now)
                    if math.isinf(self._rate):
                        return Permit(self._epoch)
                    # the schedule (`_next`) may run `_burst_s` ahead of the clock (GCRA)
                    slot = max(now, self._next - self._burst_s)
                    self._next = max(now, self._next) + 1.0 / self._rate
                    if slot <= now:
                        return Permit(self._epoch)
                    self._held_until = slot
                    wait, reserved = slot - now, self._gen
            self._pause(wait, held if on_hold else wake)
            if self._closed.is_set() or wake.is_set():  # woken by `close` or `cut_waits`
                raise LimiterClosed("the run stops: no more requests")
            if reserved is not None:
                with self._lock:
                    if reserved == self._gen:  # no 429 while we slept: the slot is ours
                        return Permit(self._epoch)

    def _grow(self, now: float) -> None:
        """Raise the rate for the time it held requests back (slow start or additive).

        That time is how long, since the last call, a held request was still waiting for its
        slot (`_held_until`): a burst of 16 detail reads is held for 15 intervals although all
        16 ask at once. In slow start, the time since the last call also counts while the
        requests asked in the last `doubling_s` used at least half the rate (RFC 7661's test of a
        window in use): bursty demand is rarely held when its bursts come, and crediting only
        held time left its bursts paced for most of a run."""
        last, self._grown_at = self._grown_at, now
        asked = self._asked
        asked.append(now)
        while asked[0] <= now - self._doubling_s:
            asked.popleft()
        if not self.adaptive or last is None or self._rate >= self._cap:
            return
        if self._slow_start and len(asked) >= 0.5 * self._rate * self._doubling_s:
            elapsed = now - last  # half the rate in use: growing it is proven within 2x
        elif self._held_until > last:
            elapsed = min(now, self._held_until) - last
        else:
            return  # demand stayed below the rate: raising it would prove nothing
        if self._slow_start:
            self._rate = min(self._cap, self._rate * 2.0 ** (elapsed / self._doubling_s))
        elif now - self._cut_at < self._recover_s:
            self._rate = min(self._cap, self._rate + self._slope * elapsed)
        else:  # a whole recovery without a 429: the limit is higher than we thought
            self._rate = min(self._cap, self._rate * 2.0 ** (elapsed / self._probe_up_s))

    # ------------------------------------------------------------------ answers
    def on_response(self, permit: Permit, status: int, retry_after: float | None = None,
                    *, in_budget: bool = True) -> None:
        """Account for an answer; a 429 cuts the rate (once per cut) and closes the gate.

        `in_budget=False`: an answer the platform counts on another budget (the token endpoint):
        it still reopens after a probe, but is not counted as what the platform let through."""
        with self._lock:
            now = self._clock()
            answered, refused = self._answered, self._refused
            for times in (answered, refused):
                while times and times[0] <= now - WINDOW_S:
                    times.popleft()
            if status != 429:
                if in_budget:
                    answered.append(now)
                    self._peak = max(self._peak, len(answered))
                    self._answered_total += 1
                    if self._first_answer is None:
                        self._first_answer = now
                    self._last_answer = now
                if permit.probe:
                    self._probing = self._probe_out = False
                    self._probe_wait = 0.0
                    self._next = now + (0.0 if math.isinf(self._rate) else 1.0 / self._rate)
                    self._grown_at = now
                return
            self.throttled += 1
            refused.append(now)
            counted = self._counted()
            # sent under the current rate, and not a probe (a refused probe says the window is
            # still full, not that we sent too fast): a new event
            fresh = permit.epoch == self._epoch and not permit.probe
            if fresh:
                self._cut(now, counted)
            if retry_after is not None:
                wait = retry_after
            elif fresh and counted:  # (a refused probe after it backs off from 1 s)
                wait = self._window_wait(now)
            elif permit.probe or fresh:
                wait = max(2.0 * self._probe_wait, 1.0) * self._rng.uniform(1.0, 1.25)
                wait = self._probe_wait = min(MAX_PROBE_WAIT_S, wait)
            else:
                wait = 0.0  # in flight when the gate closed: the gate already covers it
            self._gate_until = max(self._gate_until, now + wait)
            self._probing = True
            if permit.probe:
                self._probe_out = False
            self._gen += 1

    def _counted(self) -> bool:
        """Does a full per-minute count explain this 429? Enough answers in the last minute, and
        few refusals among them: an overloaded platform refusing every other request (a 429
        storm) is not a count being full, and its 429s are backed off like transient errors."""
        answered = len(self._answered)
        return answered >= MIN_WINDOW_COUNT and len(self._refused) <= STORM_SHARE * answered

    def on_error(self, permit: Permit) -> None:
        """No answer at all (timeout, reset): a probe that got none frees the next one."""
        if permit.probe:
            with self._lock:
                self._probe_out = False

    def _cut(self, now: float, counted: bool) -> None:
        """Multiplicative decrease, once per event, of the rate or, when a per-minute count
        explains the 429, of what the platform let through in the last minute if that is less
        (leaving slow start, it is much less: the whole allowance went out in a few seconds)."""
        self._epoch += 1
        window_count = len(self._answered)
        if counted:
            self._found = float(window_count)
        if not self.adaptive:
            return
        basis = self._rate
        if counted:
            basis = min(basis, window_count / WINDOW_S)
        self._slow_start = False
        self._rate = min(self._cap, max(MIN_PER_MINUTE / 60.0, self._decrease * basis))
        self._slope = (1.0 - self._decrease) * basis / self._recover_s
        self._cut_at = now

    def _window_wait(self, now: float) -> float:
        """Without Retry-After: until a per-minute window has room again, judged by our own log."""
        interval = 0.0 if math.isinf(self._rate) else 1.0 / self._rate
        oldest = self._answered[0]
        return min(MAX_PROBE_WAIT_S, max(interval, oldest + WINDOW_S - now))
