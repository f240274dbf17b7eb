"""Batches: which tables a first load appends, and the in-run dedupe that makes append safe."""

from __future__ import annotations

import pyarrow as pa

from creator_sync.sources.creator_platform.batches import Batches
from creator_sync.sources.creator_platform.endpoints import RESOURCES
from creator_sync.sources.creator_platform.key_sets import CompactKeySet, GatheredIds, RecordKeySet


def entity(ids: list[str], names: list[str] | None = None) -> pa.Table:
    return pa.table({"id": ids, "name": names or [f"n{i}" for i in ids]})


def links(pairs: list[tuple[str, str]]) -> pa.Table:
    return pa.table({"contact_id": [p for p, _ in pairs], "tag_id": [c for _, c in pairs],
                     "site_id": ["s1"] * len(pairs)})


def drained(batches: Batches, table: str) -> list[dict]:
    tbl = batches.take(table)
    return [] if tbl is None else tbl.to_pylist()


def test_unknown_destination_tables_merge_and_keep_every_row():
    batches = Batches(RESOURCES["contacts"], None)
    batches.add("contacts", entity(["1", "2"]))
    batches.add("contacts", entity(["2"]))
    assert not batches.appends("contacts", ["id"])
    assert [r["id"] for r in drained(batches, "contacts")] == ["1", "2", "2"]


def test_new_primary_table_appends_each_id_once_first_read_wins():
    batches = Batches(RESOURCES["contacts"], frozenset({"orders"}))
    batches.add("contacts", entity(["1", "2", "1"], ["a", "b", "a-again"]))
    batches.add("contacts", entity(["2", "3"], ["b-again", "c"]))
    assert batches.appends("contacts", ["id"])
    assert [(r["id"], r["name"]) for r in drained(batches, "contacts")] == [("1", "a"), ("2", "b"), ("3", "c")]
    # already emitted in an earlier batch: still dropped after a flush
    batches.add("contacts", entity(["3", "4"]))
    assert [r["id"] for r in drained(batches, "contacts")] == ["4"]


def test_link_rows_of_a_parent_come_from_its_first_page_only():
    batches = Batches(RESOURCES["contacts"], frozenset())
    batches.add("contacts_tags", links([("1", "t1"), ("1", "t2"), ("1", "t1"), ("2", "t1")]))
    batches.add("contacts_tags", links([("1", "t3"), ("3", "t1")]))
    assert batches.appends("contacts_tags", ["contact_id", "tag_id", "site_id"])
    rows = [(r["contact_id"], r["tag_id"]) for r in drained(batches, "contacts_tags")]
    assert rows == [("1", "t1"), ("1", "t2"), ("2", "t1"), ("3", "t1")]


def test_an_appended_link_table_keeps_no_marker_rows():
    """A marker row (an empty relationship, child "") only tells a merge to drop a parent's old
    links: an appended table has none to drop, and dlt applies `hard_delete` to merges only, so
    an append would store it. A table whose first rows are all markers gets an empty part (its
    columns, no rows), so that the load still creates it; its parents still count as emitted."""
    batches = Batches(RESOURCES["contacts"], frozenset())
    batches.add("contacts_tags", links([("1", ""), ("2", "")]))  # all markers: no row, a table
    first = batches.take("contacts_tags")
    assert first is not None and first.num_rows == 0 and "tag_id" in first.column_names
    batches.add("contacts_tags", links([("3", ""), ("4", "t1"), ("1", "t9")]))
    batches.add("contacts_tags", links([("5", "")]))  # all markers, the table has rows: dropped
    rows = [(r["contact_id"], r["tag_id"]) for r in drained(batches, "contacts_tags")]
    assert rows == [("4", "t1")]  # 1's later links: deduped as before
    batches.add("contacts_tags", links([("3", "t2"), ("6", "")]))  # 3 came as a marker
    assert drained(batches, "contacts_tags") == []

    merged = Batches(RESOURCES["contacts"], frozenset({"contacts_tags"}))  # merged: kept
    merged.add("contacts_tags", links([("4", "t1"), ("5", "")]))
    assert [r["tag_id"] for r in drained(merged, "contacts_tags")] == ["t1", ""]


def test_an_appended_line_table_keeps_no_marker_line():
    batches = Batches(RESOURCES["payouts"], frozenset())
    lines = pa.table({"payout_id": ["1", "2", "2"], "line_number": [1, 0, 0], "site_id": ["s"] * 3})
    batches.add("payout_lines", lines)
    assert [(r["payout_id"], r["line_number"]) for r in drained(batches, "payout_lines")] == [("1", 1)]


def test_tables_other_resources_may_write_keep_merge():
    orders = Batches(RESOURCES["orders"], frozenset())
    assert orders.appends("orders", ["id"])
    # order items come from include= reads: merged, duplicates left to the merge
    assert not orders.appends("order_items", ["id"])
    orders.add("order_items", entity(["9"]))
    orders.add("order_items", entity(["9"]))
    assert len(drained(orders, "order_items")) == 2
    # contact tags are also included by forms: their own resource does not append either
    assert not Batches(RESOURCES["contact_tags"], frozenset()).appends("contact_tags", ["id"])
    # a table the destination already holds is merged
    assert not Batches(RESOURCES["contacts"], frozenset({"contacts"})).appends("contacts", ["id"])
    # a link table whose parent is another type is not this resource's to append
    assert not Batches(RESOURCES["contacts"], frozenset()).appends(
        "contacts_x", ["customer_id", "x_id", "site_id"]
    )


def test_seen_keys_across_the_bulk_merge_and_non_integer_keys():
    seen = CompactKeySet()
    first = [str(i) for i in range(0, 3 * CompactKeySet.PENDING_MAX, 3)]
    seen.remember(set(first))
    seen.remember({"007", "abc"})
    probe = ["0", "3", "1", "7", "007", "abc", "abd", str(3 * CompactKeySet.PENDING_MAX), str(2**70)]
    assert seen.seen(probe).tolist() == [True, True, False, False, True, True, False, False, False]
    seen.remember({"1"})
    assert seen.seen(["1", "2"]).tolist() == [True, False]
    # a page of canonical integers takes the whole-page path: the same answers
    assert seen.seen(["0", "3", "1", "2"]).tolist() == [True, True, True, False]


def test_seen_keys_dense_and_sparse_chunks_answer_like_a_set():
    """Keys in sequence become bitmaps (about a bit each), scattered ones stay 8 bytes each in
    the sorted array, and both answer exactly like a set of the keys remembered."""
    import random

    rng = random.Random(5)
    base = 3_900_000_000
    for spread, dense in ((1, True), (3, True), (2_000, False)):  # ids 1, 3, 2,000 apart
        seen, ref = CompactKeySet(), set()
        for _ in range(200):
            keys = [str(base + rng.randrange(0, 150_000) * spread) for _ in range(rng.randrange(1, 300))]
            probe = keys + [str(base + rng.randrange(0, 150_000) * spread) for _ in range(40)]
            assert seen.seen(probe).tolist() == [k in ref for k in probe]
            fresh = sorted({k for k in keys if k not in ref})
            seen.remember(fresh)
            ref.update(fresh)
        assert len(seen) == len(ref)
        assert bool(seen._dense) is dense
        held = seen._sorted.nbytes + sum(b.nbytes for b in seen._dense.values())
        assert held <= 8 * len(ref)
        if dense:  # a bit per id value the keys span (and two edge chunks), not 8 bytes a key
            ints = [int(k) for k in ref]
            edges = 2 * max(seen.CHUNK // 8, 8 * seen.DENSE_MIN)
            assert held <= (max(ints) - min(ints)) // 8 + edges < 8 * len(ref)
    # a chunk turning dense keeps the keys it held in the array, and a key on a chunk edge
    seen = CompactKeySet()
    edge = CompactKeySet.CHUNK * 100
    keys = [str(edge + i) for i in range(-1, CompactKeySet.DENSE_MIN + CompactKeySet.PENDING_MAX)]
    for start in range(0, len(keys), 1_000):
        seen.remember(keys[start:start + 1_000])
    seen.remember([str(i) for i in range(CompactKeySet.PENDING_MAX)])  # force the last merge
    assert seen.seen(keys).all()
    assert not seen.seen([str(edge - 2), str(edge + len(keys)), str(CompactKeySet.PENDING_MAX)]).any()


def test_seen_keys_answers_pages_at_and_beyond_the_edges_of_the_keys_it_holds():
    """A page wholly below or above the keys held is answered without a lookup (the usual page:
    ids in sequence, newest or oldest first); a page touching the least or greatest key held,
    or reaching across the held range, still finds them, pending or merged."""
    seen, ref = CompactKeySet(), set()
    low, high = 10**12, 10**12 + 3 * CompactKeySet.PENDING_MAX
    pages = [list(range(n, n + 100)) for n in range(low, high, 100)]
    for page in pages[:len(pages) // 2] + list(reversed(pages[len(pages) // 2:])):  # both ways
        keys = [str(n) for n in page]
        assert not seen.seen(keys).any() and not any(k in ref for k in keys)
        seen.remember(keys)
        ref.update(keys)
    lo, hi = min(map(int, ref)), max(map(int, ref))
    probes = [[lo - 2, lo - 1], [hi + 1, hi + 2], [lo - 1, lo], [hi, hi + 1], [lo - 1, hi + 1],
              [(lo + hi) // 2], [2**62]]
    for ints in probes:
        keys = [str(n) for n in ints]
        assert seen.seen(keys).tolist() == [k in ref for k in keys]
    seen.remember(["x"])  # a text key only: integer pages still answered as before
    assert seen.seen([str(lo - 1), str(lo)]).tolist() == [False, True]
    assert CompactKeySet().seen(["1", "2"]).tolist() == [False, False]


def test_key_set_and_id_tally_share_the_small_set_then_seen_keys():
    """One mechanism: both hold a set up to their `SMALL` and `CompactKeySet` past it, and count alike."""
    from creator_sync.sources.creator_platform.key_sets import DistinctIdCount

    keys, tally = RecordKeySet(), DistinctIdCount()
    keys.SMALL = tally.SMALL = 100
    for start in range(0, 300, 50):
        page = list(range(start, start + 60))  # 10 overlap with the page before
        keys.add([str(n) for n in page])
        tally.add([{"id": n} for n in page])
        assert len(keys) == tally.distinct() == start + 60
        assert (keys._small is None) is (tally._small is None) is (start + 60 > 100)


def test_canonical_ints_is_canonical_int_for_the_whole_page():
    """The one-regex page path agrees with the per-key rule, and falls back on any odd key."""
    from creator_sync.sources.creator_platform.key_sets import canonical_int, canonical_ints

    page = ["0", "7", "10", "999999999999999999", "2400000001"]
    assert canonical_ints(page) == [canonical_int(k) for k in page]
    assert canonical_ints([]) == []
    for odd in ("007", "1000000000000000000", "-1", "+1", " 1", "1 ", "1,2", "", "٧", "²", "1a", "0x1"):
        assert canonical_ints([*page, odd]) is None, odd
        assert canonical_int(odd) is None, odd


def _reference_dedupe(pages: list[list[tuple[str, str]]], link: bool) -> list[tuple[str, str]]:
    """The per-key rule: a key emitted by an earlier page is dropped; within a page, the first
    of each mark (entity: key; link: key and child) is kept."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for page in pages:
        here: set[object] = set()
        kept = []
        for key, child in page:
            mark = (key, child) if link else key
            if key not in seen and mark not in here:
                kept.append((key, child))
            here.add(mark)
        seen.update(k for k, _ in kept)
        out.extend(kept)
    return out


def test_dedupe_matches_the_per_key_rule_on_mixed_keys_across_many_pages():
    import random

    rng = random.Random(11)
    odd = ["007", "cus_é", "٧", "7", "", "x,1", str(2**70), "0"]
    for link in (False, True):
        pages = []
        for _ in range(60):  # enough pages to cross CompactKeySet.PENDING_MAX
            size = rng.randrange(1, 150)
            page = [(str(rng.randrange(0, 20_000)), f"t{rng.randrange(4)}") for _ in range(size)]
            if rng.random() < 0.3:
                page.append((rng.choice(odd), "t0"))
            if rng.random() < 0.3:
                page.append(page[0])  # repeated within the page
            pages.append(page)
        batches = Batches(RESOURCES["contacts"], frozenset())
        table = "contacts_tags" if link else "contacts"
        for page in pages:
            part = links(page) if link else entity([k for k, _ in page], [c for _, c in page])
            batches.add(table, part)
        got = drained(batches, table)
        got_pairs = [(r["contact_id"], r["tag_id"]) if link else (r["id"], r["name"]) for r in got]
        assert got_pairs == _reference_dedupe(pages, link)


def test_id_set_matches_a_set_of_strings_across_merges():
    """Customers listed / named per site: the same answers as `set[str]`, pending and merged."""
    import random

    rng = random.Random(7)
    listed_ids = [str(rng.randrange(2_400_000_000, 2_400_300_000)) for _ in range(200_000)]
    named_ids = [str(rng.randrange(2_400_000_000, 2_400_400_000)) for _ in range(65_536)]
    odd = ["007", "7", "cus_abc", str(2**70), "0"]
    listed, named = GatheredIds(), GatheredIds()
    for start in range(0, len(listed_ids), 1000):  # page by page, as the listing adds them
        listed.update(listed_ids[start:start + 1000])
    listed.update(odd[:2])
    named.update(named_ids + odd)
    assert len(listed) == len(set(listed_ids) | set(odd[:2]))
    assert named.without(listed) == sorted(set(named_ids + odd) - set(listed_ids + odd[:2]))
    assert named.without(None) == sorted(set(named_ids + odd))
    assert "7" in listed and "007" in listed and "07" not in listed and "cus_abc" not in listed
    assert listed_ids[5] in listed and str(2_400_400_001) not in listed and 7 not in listed
    assert not GatheredIds() and GatheredIds(["cus_abc"]) and GatheredIds(["7"])
    scattered = [str(10**15 + rng.randrange(10**6) * 10**6) for _ in range(20_000)]  # sparse
    far = GatheredIds(scattered)
    assert far.without(listed) == sorted(set(scattered)) and scattered[0] in far
    assert GatheredIds(scattered[:5]).without(far) == []


def test_id_set_of_ids_in_sequence_holds_about_a_bit_per_id():
    """Customers listed and named at `large`: ~550k ids a site, named again by every purchase
    and transaction. An int64 per id appended (duplicates until compacted) held ~23 MiB at
    `large` and twice that while compacting; ids in sequence now cost about a bit each."""
    import random
    import tracemalloc

    import numpy  # noqa: F401  (imported before tracing: its import is not the set's memory)

    rng = random.Random(3)
    base, span = 2_400_000_000, 500_000
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        named = GatheredIds()
        for _ in range(1_000):  # 100,000 pages' worth of references, in pages of 100 as listed
            named.update({str(base + rng.randrange(span)) for _ in range(1_000)})
        held, peak = (n - start for n in tracemalloc.get_traced_memory())
        todo = named.without(None)
    finally:
        tracemalloc.stop()
    assert len(todo) == len(named) > 0.8 * span
    assert held < span // 8 + 256 * 1024, held  # ~a bit per id value spanned; 8 bytes a ref: ~8 MB
    assert peak < 2 * 1024 * 1024, peak


def test_a_sparse_table_holds_few_parts_and_keeps_every_row_in_order():
    """One link row per page for thousands of pages: the parts are merged as they come (memory
    bounded at `large`), and what is taken is every row, in order, drifted columns as nulls."""
    batches = Batches(RESOURCES["contacts"], None)
    pages = 3 * Batches.PARTS_MAX + 5
    for i in range(pages):
        part = links([(str(i), "t1")])
        if i == pages - 2:  # a drifted column on a late page
            part = part.append_column("note", pa.array(["x"]))
        batches.add("contacts_tags", part)
        assert len(batches._parts["contacts_tags"]) < Batches.PARTS_MAX
    assert batches.rows("contacts_tags") == pages
    rows = drained(batches, "contacts_tags")
    assert [r["contact_id"] for r in rows] == [str(i) for i in range(pages)]
    assert [r["note"] for r in rows[-3:]] == [None, "x", None]


def test_id_tally_counts_distinct_ids_across_merges_as_the_digit_rule_says():
    """The drift check's count: an id twice (two passes' overlap, a record on two pages) once,
    digit ids by value ("007" is 7), the rest as text, dense and scattered ids alike."""
    import random

    from creator_sync.sources.creator_platform.key_sets import DistinctIdCount

    rng = random.Random(7)
    tally, ref = DistinctIdCount(), set()
    tally.SMALL = 1_000  # a set up to this many ids, CompactKeySet after: both paths are counted
    for _ in range(120):
        ids: list[object] = [rng.choice((rng.randrange(0, 50_000), 10**12 + 997 * rng.randrange(0, 9_000)))
                             for _ in range(rng.randrange(0, 200))]
        ids += rng.sample(["007", "7", "cus_1", None, "10000000000000000000"], 2)
        tally.add([{"id": i} for i in ids] + ["not a record"])
        for i in [*ids, None]:
            text = str(i)
            ref.add(int(text) if text.isdigit() and len(text) < 19 else text)
        if len(ref) < 900:
            assert tally._small is not None and tally.distinct() == len(ref)
    assert tally._small is None
    assert tally.distinct() == len(ref) > CompactKeySet.PENDING_MAX


def test_key_set_answers_like_a_set_before_and_after_it_outgrows_one(monkeypatch):
    """`add` returns the keys held already, in the small set and once moved to `CompactKeySet`
    (mixed keys: integers in and out of sequence, text)."""
    monkeypatch.setattr(RecordKeySet, "SMALL", 50)
    keys, want = RecordKeySet(), set()
    pages = [[str(n) for n in range(i * 7, i * 7 + 10)] + [f"k{i % 5}", str(10**12 + i % 3)]
             for i in range(40)]
    for page in pages:
        page = list(dict.fromkeys(page))
        assert keys.add(page) == [k for k in page if k in want]
        want.update(page)
    assert keys._small is None  # moved past the small set
    probe = ["3", "999999", "k4", "k9", str(10**12 + 2), "007"]
    assert keys.having(probe) == [k for k in probe if k in want]
