"""Incremental windows that cost one page when nothing is new: ordinary vs deep runs,
newest-first listings that stop at the window's start, tail reads of unsortable endpoints, and
course includes merged into one read with a remembered split fallback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import orjson
from fakeapi import DATE, FakeApi, record

from creator_sync.sources.creator_platform import CreatorPlatformClient, api_client
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.details import detail_gate, read_detail, save_gate
from creator_sync.sources.creator_platform.endpoints import DAY_S, RECENT_LOOKBACK_S, RESOURCES
from creator_sync.sources.creator_platform.incremental import advance, plan
from creator_sync.sources.creator_platform.pagination import iter_pages, iter_window

NOW = datetime(2025, 6, 10, 12, 0, tzinfo=UTC)
T0 = datetime(2025, 6, 1, 0, 0, tzinfo=UTC)


def client_for(api: FakeApi) -> CreatorPlatformClient:
    return api_client("http://127.0.0.1:9", api.client_id, Secret(api.client_secret),
                      transport=api.transport(), backoff_initial=0.001)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def list_requests(api: FakeApi, collection: str) -> list[httpx.Request]:
    return [r for r in api.requests if r.url.path == f"/v1/{collection}"]


# ------------------------------------------------------------------ plans: ordinary vs deep
def test_ordinary_runs_look_back_a_minute_and_deep_runs_the_configured_window():
    recent = {"cursor": "2025-06-10T11:00:00Z", "last_full_at": "2025-06-08T00:00:00Z",
              "last_deep_at": "2025-06-10T06:00:00Z"}
    p = plan(RESOURCES["orders"], recent, now=NOW)
    assert not p.full and not p.deep
    assert p.params == {"filter[created_at_gteq]": "2025-06-10T10:59:00Z"}
    assert p.since == datetime(2025, 6, 10, 10, 59, tzinfo=UTC)
    # created_in_last counts whole days: 1 h 1 min -> 1 day, +1 day of slack
    assert plan(RESOURCES["contacts"], recent, now=NOW).params == {"filter[created_in_last]": 2}
    # payouts keep 3 days on ordinary runs: statuses move until the funds arrive
    assert plan(RESOURCES["payouts"], recent, now=NOW).params == {"filter[start_date]": "2025-06-07"}

    stale = dict(recent, last_deep_at="2025-06-09T11:59:00Z")  # a day ago: deep
    p = plan(RESOURCES["orders"], stale, now=NOW)
    assert p.deep and p.params == {"filter[created_at_gteq]": "2025-05-27T11:00:00Z"}  # 14 d
    assert plan(RESOURCES["contacts"], stale, now=NOW).params == {"filter[created_in_last]": 32}
    # a configured look-back shorter than a minute also bounds ordinary runs
    assert plan(RESOURCES["orders"], recent, now=NOW, lookback_s=0).params == {
        "filter[created_at_gteq]": "2025-06-10T11:00:00Z"}


def test_deep_runs_are_stamped_and_state_without_a_stamp_runs_deep():
    st = {"cursor": "2025-06-10T11:00:00Z", "last_full_at": "2025-06-10T00:00:00Z"}
    p = plan(RESOURCES["transactions"], st, now=NOW)
    assert not p.deep  # the full run of this morning counts as deep
    advance(st, p, None, now=NOW)
    assert "last_deep_at" not in st
    old = {"cursor": "2025-06-10T11:00:00Z", "last_full_at": "2025-06-05T00:00:00Z"}
    p = plan(RESOURCES["transactions"], old, now=NOW)
    assert p.deep
    advance(old, p, None, now=NOW)
    assert old["last_deep_at"] == _iso(NOW)
    p = plan(RESOURCES["transactions"], old, now=NOW + timedelta(hours=1))
    assert not p.deep and p.params == {"filter[start_date]": "2025-06-10"}


def test_the_cursor_moves_to_the_start_of_the_listing_never_past_it():
    """A listing returns everything stamped before it started: the next window begins a
    look-back before that clock (not before the newest record), and updates made during the
    run (stamped after it) are read again (drills finding 8)."""
    st = {"cursor": "2025-06-10T08:00:00Z", "last_full_at": "2025-06-10T00:00:00Z"}
    p = plan(RESOURCES["purchases"], st, now=NOW)
    started = datetime(2025, 6, 10, 11, 0, tzinfo=UTC)
    advance(st, p, datetime(2025, 6, 10, 9, 0, tzinfo=UTC), now=NOW, started=started)
    assert st["cursor"] == "2025-06-10T11:00:00Z"  # not 09:00: nothing between was missed
    advance(st, p, datetime(2025, 6, 10, 18, 0, tzinfo=UTC), now=NOW, started=started)
    assert st["cursor"] == "2025-06-10T11:00:00Z"  # an update during the run: not past it
    advance(st, p, None, now=NOW, started=datetime(2025, 6, 10, 10, 0, tzinfo=UTC))
    assert st["cursor"] == "2025-06-10T11:00:00Z"  # never back
    assert plan(RESOURCES["purchases"], st, now=NOW).params == {
        "filter[updated_at_gte]": "2025-06-10T10:59:00Z"}


def test_form_submissions_are_read_newest_first_without_a_server_filter():
    st = {"cursor": "2025-06-10T11:00:00Z", "last_full_at": "2025-06-09T00:00:00Z"}
    p = plan(RESOURCES["form_submissions"], st, now=NOW)
    assert not p.full and p.params == {}
    assert p.since == datetime(2025, 6, 10, 11, 0, tzinfo=UTC) - timedelta(seconds=RECENT_LOOKBACK_S)
    assert RESOURCES["form_submissions"].incremental.order == "desc"
    assert plan(RESOURCES["form_submissions"], {}, now=NOW).full  # first run: full listing
    weekly = dict(st, last_full_at="2025-06-02T00:00:00Z")
    assert plan(RESOURCES["form_submissions"], weekly, now=NOW).full


# ------------------------------------------------------------------ newest-first listings
def submissions_api(n: int) -> FakeApi:
    """`n` submissions one minute apart, stored newest first (what sort=-created_at returns)."""
    api = FakeApi()
    rows = [record("form_submissions", 3_000_000_000 + i, created_at=_iso(T0 + timedelta(minutes=i)))
            for i in range(n)]
    api.collections["form_submissions"] = rows[::-1]
    return api


def test_desc_window_with_nothing_new_reads_one_page():
    api = submissions_api(2_000)
    since = T0 + timedelta(minutes=1_990)  # the 10 newest are in the window
    with client_for(api) as client:
        pages = list(iter_window(client, RESOURCES["form_submissions"], {}, order="desc",
                                 field="created_at", since=since, page_size=100))
    assert [p.number for p in pages] == [1]
    (req,) = list_requests(api, "form_submissions")
    assert req.url.params["sort"] == "-created_at"


def test_desc_window_reads_down_to_the_first_page_older_than_since():
    api = submissions_api(2_000)
    since = T0 + timedelta(minutes=2_000 - 250)  # 250 records in the window: pages 1-3
    ended = []
    with client_for(api) as client:
        pages = list(iter_window(client, RESOURCES["form_submissions"], {}, order="desc",
                                 field="created_at", since=since, page_size=100,
                                 on_end=ended.append))
    ids = {r["id"] for p in pages for r in p.data}
    assert [p.number for p in pages] == [1, 2, 3]
    assert {str(3_000_000_000 + i) for i in range(1_750, 2_000)} <= ids
    assert not ended  # stopped early: not a complete listing (no drift check, no deletions)
    assert len(list_requests(api, "form_submissions")) <= 3 + client.concurrency  # read-ahead


def test_desc_window_of_a_server_ignoring_the_sort_reads_every_page():
    """The pages come oldest first although `sort=-created_at` was asked: stopping at the first
    page older than the window would miss every new record, so the listing goes on."""
    api = submissions_api(500)
    api.collections["form_submissions"].reverse()  # oldest first, whatever the sort says
    since = T0 + timedelta(minutes=490)
    with client_for(api) as client:
        pages = list(iter_window(client, RESOURCES["form_submissions"], {}, order="desc",
                                 field="created_at", since=since, page_size=100))
    assert [p.number for p in pages] == [1, 2, 3, 4, 5]
    assert str(3_000_000_000 + 499) in {r["id"] for p in pages for r in p.data}


# ------------------------------------------------------------------ tail reads (no sort)
def transactions_api(n: int) -> FakeApi:
    api = FakeApi()
    api.collections["transactions"] = [
        record("transactions", 3_000_000_000 + i, created_at=_iso(T0 + timedelta(minutes=i)))
        for i in range(n)]
    return api


def tail(api: FakeApi, since: datetime) -> tuple[list[int], set[str], list]:
    ended: list = []
    with client_for(api) as client:
        pages = list(iter_window(client, RESOURCES["transactions"], {"filter[site_id]": "1"},
                                 order="tail", field="created_at", since=since, page_size=100,
                                 on_end=ended.append))
    return [p.number for p in pages], {r["id"] for p in pages for r in p.data}, ended


def test_tail_read_takes_page_one_then_the_last_pages_until_older_than_since():
    api = transactions_api(1_050)  # 11 pages, the last holds 50
    numbers, ids, ended = tail(api, T0 + timedelta(minutes=1_050 - 120))
    assert numbers == [1, 11, 10]  # page 10 starts at minute 900, below the window
    assert {str(3_000_000_000 + i) for i in range(930, 1_050)} <= ids
    assert not ended
    assert len(list_requests(api, "transactions")) == 3
    numbers, _, _ = tail(transactions_api(1_050), T0 + timedelta(minutes=1_049))
    assert numbers == [1, 11]  # nothing new: two requests


def test_tail_read_falls_back_to_the_whole_window_when_the_order_is_not_oldest_first():
    api = transactions_api(450)
    rows = api.collections["transactions"]
    rows[420], rows[10] = rows[10], rows[420]  # a new record on page 1: not oldest first
    _, ids, ended = tail(api, T0 + timedelta(minutes=440))
    assert len(ids) == 450 and ended
    api = transactions_api(450)
    rows = api.collections["transactions"]
    rows[420], rows[310] = rows[310], rows[420]  # disorder on a tail page only
    _, ids, ended = tail(api, T0 + timedelta(minutes=400))
    assert len(ids) == 450 and ended


def test_tail_read_falls_back_when_a_record_is_inserted_mid_listing():
    """A payment completing late is listed in the middle: it would push the record before the
    last page onto a page already read. The total moved, so the window is read in full."""
    api = transactions_api(450)
    late = record("transactions", 2_999_999_999, created_at=_iso(T0))

    def insert(request: httpx.Request) -> None:
        if request.url.params.get("page[number]") == "5" and late not in api.collections["transactions"]:
            api.collections["transactions"].insert(100, late)
        return None

    api.hook = insert
    _, ids, ended = tail(api, T0 + timedelta(minutes=300))
    assert {str(3_000_000_000 + i) for i in range(300, 450)} <= ids
    assert late["id"] in ids and ended


def test_a_full_last_page_whose_total_is_all_read_ends_the_listing():
    """Payouts accept no page[size]: a single page of 4 with a total of 4 needs no probe."""
    api = FakeApi()
    api.collections["platform_payments_payouts"] = [
        record("platform_payments_payouts", 5_000_000_000 + i) for i in range(4)]
    api.meta_shape = lambda _c, number, _size, total, pages: {
        "total": total, "pagination": {"current": number, "first": 1, "last": max(pages, 1),
                                       "records": 4}}
    api.max_page_size = 4
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["payouts"], {"filter[site_id]": "1"},
                                page_size=100))
    assert [p.number for p in pages] == [1]
    assert len(list_requests(api, "platform_payments_payouts")) == 1


# ------------------------------------------------------------------ course includes
def courses_api(large: set[str]) -> FakeApi:
    """Courses 1-3; the server cannot build the merged include of `large` ones (HTTP 500)."""
    api = FakeApi()
    for cid in ("1", "2", "3"):
        api.details[("courses", cid)] = {
            "data": record("courses", cid, title=f"course {cid}"),
            "included": [record("modules", f"1{cid}", title="m")],
        }

    def fail_merged(request: httpx.Request) -> httpx.Response | None:
        parts = request.url.path.split("/")
        if len(parts) == 4 and parts[3] in large and "," in request.url.params.get("include", ""):
            return httpx.Response(500, content=orjson.dumps({"errors": [{"detail": "too big"}]}),
                                  headers={"Date": DATE})
        return None

    api.hook = fail_merged
    return api


def includes_asked(api: FakeApi, cid: str) -> list[str]:
    return [r.url.params["include"] for r in api.requests if r.url.path == f"/v1/courses/{cid}"]


def test_courses_are_read_once_with_every_include():
    api = courses_api(large=set())
    course = RESOURCES["courses"]
    with client_for(api) as client:
        groups = read_detail(client, course, "1")
    assert includes_asked(api, "1") == ["modules,lessons,lessons.media"]
    assert [r["id"] for r in groups[0][1]] == ["1", "11"]  # the record, then what it includes


def test_a_large_course_is_read_in_groups_after_a_500_and_remembered_per_course():
    api = courses_api(large={"2"})
    course = RESOURCES["courses"]
    state: dict = {"detail_hash": {}, "detail_full_at": _iso(NOW)}
    gate = detail_gate(course, state, full_listing=False, force=False, now=NOW, started=NOW,
                       refresh_every_s=7 * DAY_S)
    with client_for(api) as client:
        for cid in ("1", "2"):
            gate.needs(record("courses", cid))
            groups = read_detail(client, course, cid, gate)
            assert groups[-1][1][0]["id"] == cid  # the record itself is always there
    merged = "modules,lessons,lessons.media"
    assert includes_asked(api, "1") == [merged]
    asked = includes_asked(api, "2")
    assert asked[-2:] == ["modules", "lessons.media"] and set(asked[:-2]) == {merged}
    assert len(asked) - 2 <= 2  # few attempts at the merged read, no long backoff
    save_gate(state, gate, started=NOW)
    assert state["detail_split"] == ["2"]

    api.requests.clear()
    gate = detail_gate(course, state, full_listing=False, force=True, now=NOW, started=NOW,
                       refresh_every_s=7 * DAY_S)
    with client_for(api) as client:
        gate.needs(record("courses", "2"))
        read_detail(client, course, "2", gate)
    assert includes_asked(api, "2") == ["modules", "lessons.media"]  # asked the right way first


def test_an_ordinary_run_keeps_the_hashes_of_orders_its_short_window_did_not_list():
    """Else the next deep run (14-day window) takes every order of the last hour for a new one
    and re-reads its items: 290 needless single reads at `small`."""
    orders = RESOURCES["orders"]
    listed = record("orders", "10", created_at=_iso(NOW))
    state = {"detail_hash": {"9": "ab" * 8}, "detail_since": _iso(NOW - timedelta(hours=2))}
    gate = detail_gate(orders, state, full_listing=False, force=False, now=NOW, started=NOW,
                       refresh_every_s=None)
    assert gate.needs(listed)
    save_gate(state, gate, started=NOW, complete=False)
    assert set(state["detail_hash"]) == {"9", "10"}
    gate = detail_gate(orders, state, full_listing=False, force=False, now=NOW, started=NOW,
                       refresh_every_s=None)
    assert not gate.needs(listed)  # unchanged since the last run
    save_gate(state, gate, started=NOW, complete=True)  # a deep run lists the whole window
    assert set(state["detail_hash"]) == {"10"}
