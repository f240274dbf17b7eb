"""A long sync keeps its progress (issue 30): rounds that commit what was read, listings that go
on from their place, a time budget that ends a run `partial` and a next run that completes it,
to the same warehouse as one uninterrupted sync."""

from __future__ import annotations

import threading
import time

import httpx
from sandbox_helpers import query, settings, snapshot, sync

from creator_sync.pipelines.status import status_rows
from creator_sync.pipelines.sync import run_sync
from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform.checkpoint import RESUME_KEY

NOW = "2026-03-01T12:00:00Z"


def statuses(db) -> dict[str, str]:
    return dict(query(db, "select resource, status from creator_platform.sync_resources"))


def places(db, done: bool = False) -> int:
    """Listings whose place the committed state keeps (a stopped listing's page; `done`: or
    a site's listing completed while its resource was not)."""
    rows = query(db, "select state from creator_platform._dlt_pipeline_state "
                     "order by created_at desc limit 1")
    from dlt.common.versioned_state import decompress_state

    state = decompress_state(rows[0][0])
    count = 0
    for resource in state["sources"]["creator_platform"].get("resources", {}).values():
        for site_state in resource.values():
            if isinstance(site_state, dict) and isinstance(site_state.get(RESUME_KEY), dict) \
                    and (site_state[RESUME_KEY].get("page") or done):
                count += 1
    return count


def test_rounds_commit_as_they_go_and_equal_one_sync(tmp_path):
    """Every listing stops after each page (`checkpoint_every` 0): many rounds, each its own
    load with the state; the warehouse equals one uninterrupted sync, table by table, and
    every resource ends `synced`; nothing is left half-read."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW)
    try:
        whole = tmp_path / "whole.duckdb"
        one = sync(handle, whole, page_size=10)
        rounds = tmp_path / "rounds.duckdb"
        many = sync(handle, rounds, page_size=10, checkpoint_every=0.0)
        assert len(many.load_ids) > 3 * len(one.load_ids)  # committed round by round
        assert snapshot(rounds) == snapshot(whole)
        assert set(statuses(rounds).values()) == {"synced"}
        assert not many.partial and places(rounds) == 0
        # each round goes on from the last page read, read again with its detail reads, and
        # reads at least one new page; pages fetched ahead of a stop are dropped; it takes a
        # token and lists the sites. This extreme (a checkpoint after every page) reads about
        # every page twice or thrice: bounded, never a loop
        assert many.stats.requests < 3 * one.stats.requests
    finally:
        handle.stop()


def test_a_budget_ends_partial_and_the_next_runs_complete_it(tmp_path):
    """`max_duration`: a run stops reading at its budget, commits, and says `partial` and what
    is left; `sync_resources` says so per resource. Runs repeated until none is partial give the
    warehouse of one uninterrupted sync, without reading it twice."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW, latency_ms=20)
    try:
        whole = tmp_path / "whole.duckdb"
        reference = sync(handle, whole, page_size=5)
        # what any run reads anyway (token, sites, whole small tables, windows): a run with
        # nothing new
        nothing_new = sync(handle, whole, page_size=5)
        fixed = nothing_new.stats.requests
        # what a run costs anyway plus about a third of the rest of an uninterrupted sync: a few
        # runs, each going forward (on a loaded machine the fixed part grows too, and a budget
        # below it would end every run before it lists)
        fixed_s = nothing_new.stats.elapsed
        budget = max(2.0, fixed_s + (reference.stats.elapsed - fixed_s) / 3)
        db = tmp_path / "budget.duckdb"
        runs, requests, seen_partial, history = 0, 0, False, []
        while True:
            runs += 1
            assert runs <= 60, f"the budgeted runs never completed ({budget:.1f} s): {history[-3:]}"
            result = sync(handle, db, page_size=5, max_duration=budget, checkpoint_every=1.0)
            requests += result.stats.requests
            history.append((round(result.stats.elapsed, 1), result.stats.requests, result.partial))
            if not result.partial:
                break
            # every run goes forward: it commits what it read (never a loop of empty runs)
            assert result.load_ids, f"run {runs} committed nothing in {budget:.1f} s"
            seen_partial = True
            recorded = statuses(db)
            assert {n: recorded[n] for n in result.partial} == dict.fromkeys(result.partial, "partial")
            assert all(left.startswith("left: ") for left in result.partial.values())
            shown = {r["resource"]: r for r in status_rows(result.warehouse)}  # `status`
            assert {n for n, r in shown.items() if r["status"] == "partial"} == set(result.partial)
            assert all(f"left: {shown[n]['left']}" == left for n, left in result.partial.items())
            assert all(shown[n]["last_synced_at"] is None for n in result.partial if runs == 1)
        assert seen_partial, f"a {budget:.1f} s budget held a whole sync"
        assert snapshot(db) == snapshot(whole)
        assert set(statuses(db).values()) == {"synced"}
        assert places(db) == 0
        # one sync's reads, and per run what a run reads anyway plus the page a stopped
        # listing reads again (a few listings each): nothing read twice beyond that
        assert requests <= reference.stats.requests + runs * (fixed + 10), (runs, fixed)
    finally:
        handle.stop()


class HeldPayoutDetails(httpx.BaseTransport):
    """The sandbox over HTTP; once the first round has read `free` payout details, the next
    one is refused for `HOLD_S` seconds (429, Retry-After), as a platform's rate limit refuses
    every request for its window. `round_two_at`: when the second round took its token (the
    first round had committed), on the same clock as `hold_until`."""

    HOLD_S = 12.0  # a round commits ~2.5 s after the hold begins (3x that on a loaded CI)

    def __init__(self, free: int) -> None:
        self.inner = httpx.HTTPTransport()
        self.free = free
        self.sent = self.tokens = 0
        self.hold_until: float | None = None
        self.round_two_at: float | None = None
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        now = time.monotonic()
        with self.lock:
            if request.url.path.endswith("/oauth/token"):
                self.tokens += 1
                if self.tokens == 2:
                    self.round_two_at = now
            elif "_payments_payouts/" in request.url.path:
                self.sent += 1
                if self.sent > self.free and self.hold_until is None:
                    self.hold_until = now + self.HOLD_S
                if self.hold_until is not None and now < self.hold_until:
                    return httpx.Response(429, headers={"retry-after": str(int(self.HOLD_S))},
                                          request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_checkpoint_does_not_wait_out_a_rate_limit_hold_and_loses_no_payout(tmp_path):
    """A checkpoint due while a 429 holds payout detail reads does not wait for the platform's
    window: the round commits the payouts handed on (each with its lines) before the hold
    ends, the place names only those, and a later round reads the others, so the warehouse
    equals one uninterrupted sync.

    Payouts, and contacts for a listing whose pages go forward before the checkpoint (a round
    that went nowhere does not commit): with every resource, the reads after the hold were
    paced at the ~30/min the platform let through before it, 100 s of a CI worker."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW)
    transport = HeldPayoutDetails(free=7)  # page 1 (5 payouts) and 2 of page 2
    some = {"page_size": 5, "resources": ("contacts", "payouts")}
    try:
        whole = tmp_path / "whole.duckdb"
        sync(handle, whole, **some)
        db = tmp_path / "held.duckdb"
        result = run_sync(settings(handle, db, checkpoint_every=2.0, **some),
                          transport=transport, show_progress=False)
    finally:
        handle.stop()
    assert transport.hold_until is not None, "no read was held: the drill proved nothing"
    assert transport.round_two_at is not None, "the run committed in one round"
    assert transport.round_two_at < transport.hold_until, "the first round waited out the hold"
    assert not result.partial
    assert snapshot(db) == snapshot(whole)
    assert places(db) == 0


def test_a_listing_by_updated_at_resumed_after_activity_skips_no_record(tmp_path, monkeypatch):
    """Purchases are listed oldest `updated_at` first. Activity between a stop and the rerun
    moves the records it updates from before the place to the end, so the records after the
    place move onto earlier pages, more than the one page read again. The rerun goes on from
    the place's `updated_at` (the server filter), not its page number: the warehouse holds every
    purchase a fresh sync after the same activity holds."""
    from creator_sync.pipelines import sync as sync_module

    handle = start_sandbox(scale="tiny", sites=1, seed=42, now=NOW)
    try:
        db = tmp_path / "resumed.duckdb"
        pages: list[tuple[str, int]] = []
        monkeypatch.setattr(sync_module, "_page_kill_hook",
                            lambda: lambda resource, number: pages.append((resource, number)))
        spent = sync_module.RunClock.spent
        monkeypatch.setattr(sync_module.RunClock, "spent",
                            lambda self: "budget" if len(pages) >= 14 else spent(self))
        first = sync(handle, db, page_size=3, resources=("purchases",))
        assert "purchases" in first.partial and places(db) == 1
        monkeypatch.undo()
        handle.activity(200)
        sync(handle, db, page_size=3, resources=("purchases",))
        fresh = tmp_path / "fresh.duckdb"
        sync(handle, fresh, page_size=3, resources=("purchases",))
    finally:
        handle.stop()
    have = {r[0] for r in query(db, "select id from creator_platform.purchases")}
    want = {r[0] for r in query(fresh, "select id from creator_platform.purchases")}
    assert want - have == set()
    assert snapshot(db)["purchases"] == snapshot(fresh)["purchases"]
    assert places(db) == 0


class HeldEverything(httpx.BaseTransport):
    """The sandbox over HTTP; the first `GET /v1/me` opens a `HOLD_S` window in which every
    API request is refused (429, Retry-After), as a platform's per-minute limit refuses all
    once spent. The `me` resource reads one object outside any listing's pages: before issue
    38 its wait was the platform's window, and the checkpoint waited with it."""

    HOLD_S = 12.0  # as HeldPayoutDetails

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.tokens = 0
        self.hold_until: float | None = None
        self.round_two_at: float | None = None
        self.after_hold = 0  # API requests sent once the hold was over
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        now = time.monotonic()
        with self.lock:
            if request.url.path.endswith("/oauth/token"):
                self.tokens += 1
                if self.tokens == 2:
                    self.round_two_at = now
            elif "/oauth/" not in request.url.path:
                if self.hold_until is not None and now >= self.hold_until:
                    self.after_hold += 1
                if request.url.path.endswith("/me") and self.hold_until is None:
                    self.hold_until = now + self.HOLD_S
                if self.hold_until is not None and now < self.hold_until:
                    return httpx.Response(429, headers={"retry-after": str(int(self.HOLD_S))},
                                          request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_checkpoint_commits_on_time_while_a_read_outside_the_pages_is_held(tmp_path):
    """Issue 38: a checkpoint due while a 429 holds a read no listing page waits on (here
    `/v1/me`) commits on time: the held read is dropped (the round's listings keep their
    places) and made again next round, so the warehouse equals one uninterrupted sync.

    The small resources before `me` (it is read last, four listings at a time: after pages
    went forward, or no round would commit) and contacts' many pages; not every resource, whose
    reads after the hold were paced at what the platform let through before it (~80 s)."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW)
    transport = HeldEverything()
    some = {"page_size": 5, "resources": ("contacts", "products", "custom_fields", "contact_tags",
                                          "website_pages", "landing_pages", "podcasts", "me")}
    try:
        whole = tmp_path / "whole.duckdb"
        sync(handle, whole, **some)
        db = tmp_path / "held.duckdb"
        result = run_sync(settings(handle, db, checkpoint_every=2.0, **some),
                          transport=transport, show_progress=False)
    finally:
        handle.stop()
    assert transport.hold_until is not None, "no read was held: the test proved nothing"
    assert transport.round_two_at is not None, "the run committed in one round"
    assert transport.round_two_at < transport.hold_until, "the first round waited out the hold"
    assert not result.partial and not result.failed
    assert snapshot(db) == snapshot(whole)


def test_sigterm_in_a_hold_stops_at_once_and_keeps_each_listings_place(tmp_path):
    """Issue 38: SIGTERM while a 429 holds the reads (a listing's next page or detail read, and
    `/v1/me` outside any page) stops the reading at once: nothing waits for the platform's
    window to end (the run sends nothing after it); each listing keeps its place, so the rerun
    reads less than a whole sync and the warehouse equals one uninterrupted sync."""
    import os
    import signal

    from creator_sync.pipelines.sync import CheckpointedStop

    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW)
    transport = HeldEverything()
    signalled: list[float] = []

    def signal_in_the_hold() -> None:
        while transport.hold_until is None:
            time.sleep(0.05)
        time.sleep(0.5)  # the reads asked meanwhile are held
        signalled.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGTERM)  # to the process, as `kill` sends it

    try:
        whole = tmp_path / "whole.duckdb"
        reference = sync(handle, whole, page_size=5)
        db = tmp_path / "held.duckdb"
        signaller = threading.Thread(target=signal_in_the_hold, daemon=True)
        signaller.start()
        stopped_at = None
        try:
            run_sync(settings(handle, db, page_size=5, checkpoint_every=600.0),
                     transport=transport, show_progress=False)
        except CheckpointedStop as stop:
            stopped_at = time.monotonic()
            assert stop.signum == signal.SIGTERM
        assert stopped_at is not None and signalled, "the run was not stopped by the signal"
        assert transport.after_hold == 0, "the stop waited out the 429 hold"
        assert places(db, done=True) > 0, "no listing kept its place"
        rerun = sync(handle, db, page_size=5)
    finally:
        handle.stop()
    assert not rerun.partial and rerun.stats.requests < reference.stats.requests
    assert snapshot(db) == snapshot(whole)


def test_a_checkpoint_drops_only_the_requests_a_429_holds():
    """`RateLimiter.drop_held`: a request held by a 429 is refused at once; one only paced (a
    slot a moment away) is not; one asked after the drop is held again."""
    from creator_sync.sources.creator_platform.ratelimit import LimiterClosed, RateLimiter

    def ask(limiter: RateLimiter, outcome: list[str]) -> threading.Thread:
        def run() -> None:
            try:
                limiter.acquire()
                outcome.append("sent")
            except LimiterClosed:
                outcome.append("refused")
        thread = threading.Thread(target=run)
        thread.start()
        return thread

    paced = RateLimiter(6, adaptive=False)  # one request per ~10 s
    paced.acquire()
    outcome: list[str] = []
    waiting = ask(paced, outcome)
    time.sleep(0.2)
    paced.drop_held()
    time.sleep(0.2)
    assert outcome == [] and waiting.is_alive(), "a paced request was dropped"
    paced.close()
    waiting.join(5)
    assert outcome == ["refused"]

    held = RateLimiter(600)
    held.on_response(held.acquire(), 429, retry_after=60)
    outcome = []
    waiting = ask(held, outcome)
    time.sleep(0.2)
    assert outcome == [], "the 429 did not hold the request: the test proves nothing"
    started = time.monotonic()
    held.drop_held()
    waiting.join(5)
    assert outcome == ["refused"] and time.monotonic() - started < 2
    later: list[str] = []
    again = ask(held, later)
    time.sleep(0.3)
    assert later == [], "a request asked after the drop was refused too"
    held.close()
    again.join(5)


def test_a_signal_refuses_the_requests_a_429_holds_at_once():
    """SIGTERM while a 429 holds a later round's first request (its site discovery): the held
    request is refused at once, not when the platform's window ends, so the run exits within
    seconds (the drill measured 11.5-15 s)."""
    import signal

    from creator_sync.pipelines.sync import RunClock
    from creator_sync.sources.creator_platform.ratelimit import LimiterClosed, RateLimiter

    limiter = RateLimiter(600)
    limiter.on_response(limiter.acquire(), 429, retry_after=60)
    clock = RunClock(30.0, None, limiter)
    clock.starting = True  # a later round builds its source: token, site discovery
    outcome: list[str] = []

    def ask() -> None:
        try:
            limiter.acquire()
            outcome.append("sent")
        except LimiterClosed:
            outcome.append("refused")

    with clock.signals():
        asker = threading.Thread(target=ask)
        asker.start()
        time.sleep(0.2)
        assert outcome == [], "the 429 did not hold the request: the test proves nothing"
        signal.raise_signal(signal.SIGTERM)
        asker.join(10)
    assert not asker.is_alive() and outcome == ["refused"]
    assert clock.spent() == "signal"


def test_the_budget_refuses_the_requests_a_429_holds_at_a_round_start():
    """The budget ends while a 429 holds a later round's first request: the held request is
    refused when the budget ends, not when the platform's window does (a `--max-duration 40`
    run took 62 s waiting out such a hold)."""
    from creator_sync.pipelines.sync import RunClock
    from creator_sync.sources.creator_platform.ratelimit import LimiterClosed, RateLimiter

    limiter = RateLimiter(600)
    limiter.on_response(limiter.acquire(), 429, retry_after=60)
    clock = RunClock(30.0, 0.5, limiter)
    clock.next_round()
    clock.next_round()  # a later round
    outcome: list[str] = []
    started = time.monotonic()
    with clock.round_start():
        try:
            limiter.acquire()
            outcome.append("sent")
        except LimiterClosed:
            outcome.append("refused")
    waited = time.monotonic() - started
    assert outcome == ["refused"]
    assert waited < 10, f"held {waited:.1f} s: the 60 s hold was waited out"
    assert clock.spent() == "budget"


class CountedPayoutDetails(httpx.BaseTransport):
    """The sandbox over HTTP, counting payout detail reads per payout id."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.reads: dict[str, int] = {}
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if "_payments_payouts/" in request.url.path:
            with self.lock:
                rid = request.url.path.rsplit("/", 1)[1]
                self.reads[rid] = self.reads.get(rid, 0) + 1
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_payout_loaded_before_a_stop_is_not_read_again_after_activity(tmp_path):
    """A first sync stopped partway through the payouts keeps the hashes of the payouts it
    loaded with their lines. Eight days of activity later (the weekly full listing falls
    due), the rerun reads again only the details of payouts whose list record changed: it
    re-read every payout's detail before (the hashes of the part read before the stop were
    lost when the listing completed)."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW, latency_ms=20)
    try:
        db = tmp_path / "stopped.duckdb"
        first = sync(handle, db, page_size=5, resources=("payouts",), max_duration=1.5,
                     checkpoint_every=0.5)
        assert first.partial, "the budget held the whole listing: the test proves nothing"
        before = {r[0]: r[1:] for r in query(
            db, "select id, status, amount, initiated_date from creator_platform.payouts")}
        assert before, "nothing was loaded before the stop"
        handle.activity(200)  # 200 events of an hour: past the weekly full listing
        counted = CountedPayoutDetails()
        rerun = run_sync(settings(handle, db, page_size=5, resources=("payouts",)),
                         transport=counted, show_progress=False)
        reference = tmp_path / "fresh.duckdb"
        sync(handle, reference, page_size=5, resources=("payouts",))
    finally:
        handle.stop()
    assert not rerun.partial
    assert snapshot(db) == snapshot(reference)
    after = {r[0]: r[1:] for r in query(
        db, "select id, status, amount, initiated_date from creator_platform.payouts")}
    unchanged = {pid for pid, row in before.items() if after.get(pid) == row}
    assert unchanged, "activity changed every payout loaded: the test proves nothing"
    read_again = sorted(pid for pid in unchanged if counted.reads.get(str(pid)))
    assert not read_again, f"{len(read_again)} of {len(unchanged)} unchanged payouts re-read"


def test_contacts_stopped_across_a_due_full_listing_start_over_and_equal_a_fresh_sync(tmp_path):
    """Contacts show edits of older contacts only in a full listing. A first sync stopped
    partway through them, then 8 days of activity (edits, tags): the rerun lists them again
    from page 1 (a full listing fell due), and the warehouse equals a fresh sync. Caught up by
    a window instead, the edits before the stop would be missed."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW, latency_ms=60)
    wanted = ("contacts", "customers")
    try:
        db = tmp_path / "stopped.duckdb"
        first = sync(handle, db, page_size=2, resources=wanted, max_duration=1.0,
                     checkpoint_every=0.5)
        assert first.partial, "the budget held the whole listing: the test proves nothing"
        handle.activity(200)  # 200 events of an hour: past the weekly full listing
        rerun = sync(handle, db, page_size=2, resources=wanted)
        reference = tmp_path / "fresh.duckdb"
        sync(handle, reference, page_size=2, resources=wanted)
    finally:
        handle.stop()
    assert not rerun.partial
    assert any(reason.startswith("first sync") or reason.startswith("periodic full")
               for reason in rerun.plans.values()), rerun.plans
    assert snapshot(db) == snapshot(reference)


def test_a_weekly_full_listing_after_deep_runs_reads_no_unchanged_payout_again(tmp_path):
    """Payout details are read once per new payout and again only when its list record
    changed. A deep run (daily) lists only its 14-day window: the hashes of older payouts must
    survive it, else the weekly full listing after it re-reads every payout's detail (as the
    catch-up of a listing completed across runs did)."""
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now=NOW)
    try:
        db = tmp_path / "w.duckdb"
        sync(handle, db, page_size=5, resources=("payouts",))
        handle.activity(30)  # 30 hours: the next run is deep
        deep = sync(handle, db, page_size=5, resources=("payouts",))
        assert any("deep" in reason for reason in deep.plans.values()), deep.plans
        before = {r[0]: r[1:] for r in query(
            db, "select id, status, amount, initiated_date from creator_platform.payouts")}
        handle.activity(200)  # 8 days: the weekly full listing is due
        counted = CountedPayoutDetails()
        weekly = run_sync(settings(handle, db, page_size=5, resources=("payouts",)),
                          transport=counted, show_progress=False)
    finally:
        handle.stop()
    assert any(reason.startswith("periodic full") for reason in weekly.plans.values()), weekly.plans
    after = {r[0]: r[1:] for r in query(
        db, "select id, status, amount, initiated_date from creator_platform.payouts")}
    unchanged = {pid for pid, row in before.items() if after.get(pid) == row}
    assert unchanged
    read_again = sorted(pid for pid in unchanged if counted.reads.get(str(pid)))
    assert not read_again, f"{len(read_again)} of {len(unchanged)} unchanged payouts re-read"


def test_a_closed_session_sends_nothing_more():
    """A round ends at its checkpoint and revokes its session while reads abandoned in its
    pools may still run: they must send nothing more, neither with the revoked token (a 401
    spends the platform's rate budget: the adaptive benchmark counted 24-30 such answers in
    5 minutes at 100/min) nor by fetching a new token."""
    import pytest

    from creator_sync.sources.creator_platform import api_client
    from creator_sync.sources.creator_platform.ratelimit import LimiterClosed

    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        if request.url.path.endswith("/oauth/token"):
            return httpx.Response(200, json={"access_token": "t", "token_type": "bearer",
                                             "expires_in": 3600})
        return httpx.Response(200, json={"data": [], "meta": {}},
                              headers={"content-type": "application/vnd.api+json"})

    from sandbox_helpers import CLIENT_ID, CLIENT_SECRET

    from creator_sync.sources.creator_platform import Secret

    client = api_client("https://platform.test", CLIENT_ID, Secret(CLIENT_SECRET),
                        transport=httpx.MockTransport(answer))
    client.get("/products")
    assert any(p.endswith("/products") for p in sent)
    client.close()
    sent.clear()
    with pytest.raises(LimiterClosed):
        client.get("/products")
    assert sent == [], sent
