"""A refused filter falls back (issue 40, point 5): a platform that answers blog posts'
`filter[updated_at_gt]` with a 400 gets full listings instead, remembered in state, one line
in the summary, and the run succeeds with every blog post loaded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cli_run import run_cli
from sandbox_helpers import api_client, query, sync

from creator_sync.sources.creator_platform.endpoints import RESOURCES
from creator_sync.sources.creator_platform.incremental import REFUSED_KEY, RefusedFilter, plan

REFUSE = "blog_posts:updated_at_gt"


def _blog_posts(db) -> set[tuple[str, str]]:
    return set(query(db, "select id, title from creator_platform.blog_posts"))


def _api_posts(sandbox) -> set[tuple[str, str]]:
    with api_client(sandbox) as client:
        posts = [p for site in (s["id"] for s in client.get("/sites")["data"])
                 for p in client.get("/blog_posts", {"filter[site_id]": site,
                                                     "page[size]": 100})["data"]]
    return {(p["id"], p["attributes"]["title"]) for p in posts}


def test_an_incremental_run_refused_the_filter_loads_every_blog_post(sandbox_factory, tmp_path):
    sandbox = sandbox_factory(sites=2, refuse_filters=REFUSE)
    db = tmp_path / "w.duckdb"
    first = sync(sandbox, db, resources=["blog_posts"])  # a first sync: no filter sent
    assert not first.failed and not first.notices
    table = sandbox.store.tables["blog_posts"]
    table.cols["number"][0] += 1000  # a post edited on the platform (its title changes)
    table.cols["updated_at"][0] = sandbox.store.now
    sandbox.store.data_version += 1
    assert _blog_posts(db) != _api_posts(sandbox)
    second = sync(sandbox, db, resources=["blog_posts"])
    assert not second.failed and second.outcomes["blog_posts"].status == "synced"
    lines = [n for n in second.notices if "refused" in n]
    assert lines == ["blog_posts: the platform refused filter[updated_at_gt] (HTTP 400): read by "
                     "full listings instead (remembered; the filter is tried again in 7 days)"]
    assert _blog_posts(db) == _api_posts(sandbox)  # every post, as the platform has it now
    assert all(p.startswith("full listing: the platform refused") for k, p in
               second.plans.items() if k.startswith("blog_posts/"))
    third = sync(sandbox, db, resources=["blog_posts"])  # remembered: no 400, no line
    assert not third.failed and not third.notices
    assert all(p.startswith("full listing: the platform refused") for k, p in
               third.plans.items() if k.startswith("blog_posts/"))


def test_the_cli_exits_0_with_one_line(sandbox_factory, tmp_path):
    sandbox = sandbox_factory(sites=1, refuse_filters=REFUSE)
    args = ("sync", "--base-url", sandbox.base_url, "--client-id", "sandbox", "--resources",
            "blog_posts", "--no-progress")
    assert run_cli(tmp_path / "work", *args).returncode == 0
    done = run_cli(tmp_path / "work", *args)
    assert done.returncode == 0, done.stderr
    assert sum("refused filter[updated_at_gt]" in x for x in done.stdout.splitlines()) == 1
    assert "error" not in done.stderr.lower()


class _Refusal:
    def __init__(self, status: int, detail: str = "") -> None:
        self.status, self.detail = status, detail


@pytest.mark.parametrize(("status", "carried", "refused"), [
    (400, True, True), (400, False, False), (404, True, False), (500, True, False)])
def test_only_a_400_on_a_request_that_carries_the_filter_is_a_refusal(status, carried, refused):
    seen = RefusedFilter(RESOURCES["blog_posts"], {})
    params = {"filter[updated_at_gt]": "2026-01-01T00:00:00Z"} if carried else {"sort": "x"}
    assert seen.refuses(_Refusal(status), params) is refused


def test_every_windowed_resource_falls_back_to_full_listings():
    """Every resource read with a server filter plans full listings once it was refused (not
    blog posts only), and windows again without the refusal."""
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    filtered = [r for r in RESOURCES.values() if r.incremental.filter_param]
    assert {r.name for r in filtered} >= {"blog_posts", "purchases", "orders", "transactions",
                                          "payouts", "contacts", "customers"}
    for resource in filtered:
        state = {"cursor": "2026-03-01T00:00:00Z", "last_full_at": "2026-02-28T12:00:00Z",
                 "last_deep_at": "2026-03-01T00:00:00Z"}
        windowed = plan(resource, state, now=now)
        assert not windowed.full and resource.incremental.filter_param in windowed.params
        refused = plan(resource, state, now=now, refused=True)
        assert refused.full and refused.params == {}, resource.name
        assert refused.reason == f"full listing: the platform refused {resource.incremental.filter_param}"


def test_a_refusal_is_remembered_and_tried_again_after_a_week():
    state: dict = {}
    seen = RefusedFilter(RESOURCES["blog_posts"], state)
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    class Report:
        def __init__(self) -> None:
            self.notices: list[str] = []

        def add_notice(self, text: str) -> None:
            self.notices.append(text)

    report = Report()
    seen.remember(now, _Refusal(400, "filter[updated_at_gt] is not a permitted filter"), report)
    assert state[REFUSED_KEY]["param"] == "filter[updated_at_gt]" and len(report.notices) == 1
    assert seen.active(now + timedelta(days=6, hours=23))
    assert not seen.active(now + timedelta(days=7))
    seen.remember(now + timedelta(hours=1), _Refusal(400), report)  # again while remembered
    assert len(report.notices) == 1
