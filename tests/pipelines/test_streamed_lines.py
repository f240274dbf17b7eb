"""A payout's lines read as a stream (docs/performance.md#memory): a detail's line array is parsed,
normalised
and batched in pieces of `PAGE_PART_ROWS` lines, each handed on before the next is parsed;
the warehouse gets exactly the rows the whole-body path gave, first load (append) and merge."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest
from test_payout_lines import PATH, SITE, line, payouts_world, query

import creator_sync.pipelines.sync as sync_module
from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import run_sync
from creator_sync.sources.creator_platform import endpoints, listing, unchanged
from creator_sync.sources.creator_platform.arrow_tables import rows_to_arrow
from creator_sync.sources.creator_platform.batches import Batches

PART = 100
LINES = {
    "3900000001": [line("Sale", f"{n}.{n % 100:02d}", "0.31", customer_id=2400000000 + n,
                        order_number=f"ORD-{n}") for n in range(1, 2_346)],
    "3900000002": [line("Refund", "-20.00", "0.00")],
    "3900000003": [],
}


def _warehouse(db):
    cols = ("payout_id, line_number, site_id, transaction_type, amount, sales_tax, fee, net, "
            "customer_id, customer_name, customer_email, offer_ids, offer_titles, created_at, "
            "quantity, order_number, exchange_rate, presented_amount")
    return (query(db, f"select {cols} from creator_platform.payout_lines order by 1, 2"),
            query(db, "select id, status, amount, site_id from creator_platform.payouts order by 1"))


@pytest.mark.parametrize("merged", [False, True])
def test_a_payout_of_thousands_of_lines_loads_in_bounded_pieces_as_the_whole_body_did(
    fake_api, settings_for, tmp_path, monkeypatch, merged
):
    payouts_world(fake_api, LINES)
    if merged:  # the destination's tables unknown: every table merges (no first-load append)
        monkeypatch.setattr(sync_module, "kept_tables", lambda *a, **k: None)

    # the reference: the whole body parsed at once, the payout one part
    whole = settings_for(resources=("payouts",), payouts_path=f"/{PATH}",
                         warehouse=resolve_warehouse(duckdb=str(tmp_path / "whole.duckdb")))
    with monkeypatch.context() as patched:
        patched.setattr(endpoints.Resource, "streamed_path", property(lambda self: None),
                        raising=False)
        assert run_sync(whole, transport=fake_api.transport(), show_progress=False).failed == {}
    expected = _warehouse(whole.warehouse.duckdb_path)
    assert len(expected[0]) == 2_345 + 1 + 0  # (the empty payout's marker row is deleted)

    pieces: list[tuple[int, int]] = []  # (rows, piece) of each part the page handed on
    page_rows = listing.Listing._page_rows

    def counted(self, run, page):
        for part in page_rows(self, run, page):
            rows, piece = part if isinstance(part, tuple) else (part, 0)
            pieces.append((sum(map(len, rows.values())), piece))
            yield part

    monkeypatch.setattr(listing, "PAGE_PART_ROWS", PART)
    monkeypatch.setattr(listing.Listing, "_page_rows", counted)
    streamed = settings_for(resources=("payouts",), payouts_path=f"/{PATH}")
    result = run_sync(streamed, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {} and result.without_lines == {}
    assert _warehouse(streamed.warehouse.duckdb_path) == expected
    lines, payouts = expected
    assert lines[1][4:8] == (Decimal("2.02"), Decimal("0"), Decimal("0.31"), Decimal("1.71"))
    assert [p[0] for p in payouts] == list(LINES) and all(p[3] == SITE for p in payouts)
    # the big payout came in pieces of at most PART lines, the others with the page's rows
    assert max(rows for rows, _ in pieces) <= PART
    assert [piece for _, piece in pieces].count(1) == 1
    assert sum(rows for rows, piece in pieces if piece) == 2_345


def test_pieces_of_one_parent_are_one_record_for_the_first_load_dedupe():
    """An appended table drops a parent emitted before (a re-read): a streamed payout's later
    pieces follow its first piece, kept the first time, all dropped when read again."""
    payouts = endpoints.RESOURCES["payouts"]
    batches = Batches(payouts, frozenset())

    def piece(first: int, count: int) -> pa.Table:
        rows = [{"payout_id": "7", "line_number": n, "site_id": SITE, "net": Decimal("1.5")}
                for n in range(first, first + count)]
        return rows_to_arrow({"payout_lines": rows})["payout_lines"]

    for _ in range(2):  # the payout read twice in one run (a drift pass)
        batches.add("payout_lines", piece(1, 3), 1)
        batches.add("payout_lines", piece(4, 3), 2)
        batches.add("payout_lines", piece(7, 1), 2)
    assert batches.appends("payout_lines", ["payout_id", "line_number"])
    table = batches.take("payout_lines")
    assert table is not None and table.column("line_number").to_pylist() == list(range(1, 8))


def test_a_piece_is_never_dropped_as_unchanged_nor_remembered():
    """A piece can equal a group the last run hashed (a payout that had just those lines):
    dropping it would let the next piece's merge delete the rest, so pieces always load."""
    lines = [{"payout_id": "7", "line_number": n, "net": Decimal(n)} for n in (1, 2)]
    known = unchanged.hashes({"payout_lines": lines})
    keep = unchanged.Unchanged(known, lambda t: True, lambda t, k: None)
    assert keep.filter(1, {"payout_lines": lines}) == {}  # whole and unchanged: dropped
    keep = unchanged.Unchanged(known, lambda t: True, lambda t, k: None)
    assert keep.passed({"payout_lines": lines}) == {"payout_lines": lines}
    keep.passed({"payout_lines": [{"payout_id": "7", "line_number": 3, "net": Decimal(3)}]})
    state: dict = {}
    keep.save(state)
    assert "payout_lines" not in state.get(unchanged.STATE_KEY, {})


def test_a_streamed_payout_with_a_line_that_cannot_be_read_is_set_aside(
    fake_api, settings_for, monkeypatch
):
    """A bad value in a line read in pieces (issue 40): the payout is set aside with the line's
    field named, the other payouts load, and the run succeeds."""
    bad = {pid: list(lines) for pid, lines in LINES.items()}
    bad["3900000001"] = [*bad["3900000001"][:250], {**bad["3900000001"][250], "fee": "n/a"},
                         *bad["3900000001"][251:]]
    payouts_world(fake_api, bad)
    monkeypatch.setattr(listing, "PAGE_PART_ROWS", PART)
    streamed = settings_for(resources=("payouts",), payouts_path=f"/{PATH}")
    result = run_sync(streamed, transport=fake_api.transport(), show_progress=False)
    db = streamed.warehouse.duckdb_path
    assert result.failed == {}
    assert query(db, "select record_id, field, value from creator_platform.rejected_records") == \
        [("3900000001", "transactions.fee", "n/a")]
    assert [p[0] for p in query(db, "select id from creator_platform.payouts order by 1")] == \
        ["3900000002", "3900000003"]
