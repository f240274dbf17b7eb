"""Detail pages handled in parts (docs/performance.md#memory): a page whose detail reads carry many
rows (a
payout's lines) is normalised and batched in parts of whole records, its reads run ahead by
rows, and its over-large tables are not held for `unchanged.py`; what loads must not change.

The limits are shrunk so that `tiny` takes every path that `large` takes at the defaults.
"""

from __future__ import annotations

from sandbox_helpers import snapshot, sync

from creator_sync.sources.creator_platform import listing, unchanged

DETAIL = ("payouts", "courses", "forms")  # every resource that reads details


def test_pages_in_parts_load_what_whole_pages_load_first_and_after_activity(
    sandbox_factory, tmp_path, monkeypatch
):
    sandbox = sandbox_factory(sites=2)
    whole, parts = tmp_path / "whole.duckdb", tmp_path / "parts.duckdb"
    sync(sandbox, whole, resources=DETAIL)

    seen = {"parts": 0, "pages": 0, "ahead": set()}
    page_rows = listing.Listing._page_rows

    def counted(self, run, page):
        seen["pages"] += 1
        for rows in page_rows(self, run, page):
            seen["parts"] += 1
            yield rows

    size = listing.DetailWindow.size

    def recorded(self):
        seen["ahead"].add(answer := size(self))
        return answer

    with monkeypatch.context() as patched:
        patched.setattr(listing, "PAGE_PART_ROWS", 3)
        patched.setattr(listing, "DETAIL_ROWS_AHEAD", 6)
        patched.setattr(unchanged, "HASHED_PAGE_ROWS_MAX", 4)
        patched.setattr(listing.Listing, "_page_rows", counted)
        patched.setattr(listing.DetailWindow, "size", recorded)
        first = sync(sandbox, parts, resources=DETAIL)
        assert first.failed == {}
        assert seen["parts"] > seen["pages"] > 0  # pages did go in parts
        assert 1 in seen["ahead"] and max(seen["ahead"]) < 16  # and reads ran ahead less
        assert snapshot(parts) == snapshot(whole)

        # later runs compare with the hashes the parts left (tables too big for them were
        # not remembered): still the same rows as a run with whole pages
        sandbox.activity(300)
        sync(sandbox, whole, resources=DETAIL)
        again = sync(sandbox, parts, resources=DETAIL)
        assert again.failed == {}
        assert snapshot(parts) == snapshot(whole)

    reference = tmp_path / "reference.duckdb"
    sync(sandbox, reference, resources=DETAIL)
    assert snapshot(parts) == snapshot(reference)


def test_a_page_table_past_the_held_limit_is_not_remembered_whole_or_in_part():
    """Its rows would grow with the data (a payout's lines): forgotten for the whole page, even
    when the rest of it comes in a later part; the page's other tables are remembered."""
    keep = unchanged.Unchanged(None, lambda t: True, lambda t, k: None)
    most = unchanged.HASHED_PAGE_ROWS_MAX
    lines = [{"payout_id": str(p), "line_number": n} for p in range(2) for n in range(most // 2 + 1)]
    keep.filter(1, {"payouts": [{"id": "0"}, {"id": "1"}], "payout_lines": lines})
    keep.filter(1, {"payouts": [{"id": "2"}],  # the page's next part
                    "payout_lines": [{"payout_id": "2", "line_number": 0}]})
    keep.filter(2, {"payouts": [{"id": "3"}], "payout_lines": [{"payout_id": "3", "line_number": 0}]})
    state: dict = {}
    keep.save(state)
    saved = state[unchanged.STATE_KEY]
    assert set(saved["payouts"]) == {"0", "1", "2", "3"}
    assert set(saved["payout_lines"]) == {"3"}  # page 2's few lines only


def test_detail_reads_run_ahead_by_rows():
    window = listing.DetailWindow(16)
    assert window.size() == 1  # nothing known: one read tells how big they are
    for _ in range(10):
        window.note(3)  # a course with a few modules
    assert window.size() == 16
    big = listing.DetailWindow(16)
    big.note(listing.DETAIL_ROWS_AHEAD // 4)  # a payout with thousands of lines
    assert big.size() == 4
    big.note(listing.DETAIL_ROWS_AHEAD * 3)
    assert big.size() == 1


def test_detail_window_follows_reads_that_grow():
    """Payouts listed in date order carry ever more lines: the window shrinks with the recent
    reads, not only with the mean of all reads so far (which lagged behind at `large`)."""
    window = listing.DetailWindow(16)
    for _ in range(40):
        window.note(listing.DETAIL_ROWS_AHEAD // 40)  # early payouts: a few hundred lines
    assert window.size() == 16
    for _ in range(4):
        window.note(listing.DETAIL_ROWS_AHEAD // 2)  # recent ones: thousands each
    mean = window.rows / window.reads
    assert int(listing.DETAIL_ROWS_AHEAD / mean) >= 8  # the mean alone would keep 8+ ahead
    assert window.size() <= 3
    for _ in range(40):  # and it widens again once reads are small
        window.note(10)
    assert window.size() == 16


def test_a_payout_of_larges_size_is_read_alone_and_normalised_as_its_own_part():
    """At `large` a payout carries ~1,700 lines on average (docs/performance.md#memory): no other
    is parsed
    ahead of it, and the part that holds its rows as dicts is that payout alone, so that the
    detail listings in flight hold one payout each, not several (docs/performance.md#memory)."""
    window = listing.DetailWindow(16)
    for _ in range(20):
        window.note(1_700)
    assert window.size() == 1
    assert listing.PAGE_PART_ROWS < 1_700  # one such payout passes it: a part of its own
    small = listing.DetailWindow(16)
    for _ in range(20):
        small.note(40)  # `small`'s payouts, courses: reads still run ahead in full
    assert small.size() == 16
