"""course_catalog and offer_performance on a hand-built catalogue, deleted rows included."""

from __future__ import annotations

from bundle_data import bundle_rows
from models_helpers import fetch_dicts, ts

from creator_sync.models.runner import run_models

S = "3000000001"
TXN = {"id": "T1", "site_id": S, "created_at": ts("2024-01-01T12:00:00+00:00"),
       "action": "charge", "amount_in_cents": 4900, "currency": "USD", "offer_id": "O_GONE"}


def test_course_catalog_structure_minutes_and_deletions(raw_db) -> None:
    path = raw_db({
        "transactions": [TXN],
        "courses": [
            {"id": "C1", "site_id": S, "title": "Python"},
            {"id": "C2", "site_id": S, "title": "Empty course"},
            {"id": "C3", "site_id": S, "title": "Gone", "_is_deleted": True},
        ],
        "modules": [
            {"id": "M1", "site_id": S, "title": "Basics", "position": 1},
            {"id": "M2", "site_id": S, "title": "Later", "position": 2},
        ],
        "lessons": [
            {"id": "L1", "site_id": S, "title": "Hello", "position": 1},
            {"id": "L2", "site_id": S, "title": "Loops", "position": 2, "module_id": "M1"},
            {"id": "L3", "site_id": S, "title": "Removed", "position": 3, "_is_deleted": True},
        ],
        "media": [
            {"id": "V1", "site_id": S, "duration_in_minutes": 12.5},
            {"id": "V2", "site_id": S, "duration_in_minutes": 3.25},
            {"id": "V3", "site_id": S, "duration_in_minutes": 7.0},
        ],
        "courses_modules": [{"course_id": "C1", "module_id": "M1", "site_id": S},
                            {"course_id": "C1", "module_id": "M2", "site_id": S}],
        "modules_lessons": [{"module_id": "M1", "lesson_id": "L1", "site_id": S},
                            {"module_id": "M1", "lesson_id": "L3", "site_id": S}],
        "lessons_media": [{"lesson_id": "L1", "media_id": "V1", "site_id": S},
                          {"lesson_id": "L1", "media_id": "V2", "site_id": S},
                          {"lesson_id": "L2", "media_id": "V3", "site_id": S}],
    })
    run_models(path)
    rows = fetch_dicts(path, "select * from analytics.course_catalog order by course_id, module_key, lesson_key")
    keys = [(r["course_id"], r["module_id"], r["lesson_id"]) for r in rows]
    # L1 via the link table, L2 via its module_id; L3 and C3 deleted; M2 has no lessons;
    # C2 has no modules.
    assert keys == [("C1", "M1", "L1"), ("C1", "M1", "L2"), ("C1", "M2", None), ("C2", None, None)]
    l1 = rows[0]
    assert (l1["media_count"], l1["media_minutes"]) == (2, 15.75)
    assert rows[0]["course_media_minutes"] == 15.75 + 7.0
    assert rows[3]["course_media_minutes"] == 0


def test_offer_performance_keeps_archived_offers_with_sales(raw_db) -> None:
    path = raw_db({
        "transactions": [TXN],
        "offers": [{"id": "O_LIVE", "site_id": S, "title": "Live", "currency": "USD",
                    "price_in_cents": 1000, "payment_type": "one_time"}],
    })
    run_models(path)
    rows = {r["offer_id"]: r for r in fetch_dicts(path, "select * from analytics.offer_performance")}
    assert set(rows) == {"O_LIVE", "O_GONE"}
    assert (rows["O_GONE"]["net_revenue_in_cents"], rows["O_GONE"]["is_deleted"]) == (4900, True)
    assert rows["O_GONE"]["currency"] == "USD"
    assert (rows["O_LIVE"]["net_revenue_in_cents"], rows["O_LIVE"]["is_deleted"]) == (0, False)


def test_media_minutes_are_summed_exactly_so_every_build_agrees(raw_db) -> None:
    """A DOUBLE sum depends on the order DuckDB's threads add in (the demo's catalogue read
    434.36999999999995 in one build and 434.3699999999999 in the next); DECIMAL does not."""
    from decimal import Decimal

    path = raw_db({
        "transactions": [TXN],
        "courses": [{"id": "C1", "site_id": S, "title": "Python"}],
        "courses_modules": [{"course_id": "C1", "module_id": "M1", "site_id": S}],
        "modules": [{"id": "M1", "site_id": S, "title": "Basics", "position": 1}],
        "modules_lessons": [{"module_id": "M1", "lesson_id": "L1", "site_id": S},
                            {"module_id": "M1", "lesson_id": "L2", "site_id": S}],
        "lessons": [{"id": "L1", "site_id": S, "title": "Hello", "position": 1},
                    {"id": "L2", "site_id": S, "title": "Loops", "position": 2}],
        "media": [{"id": "V1", "site_id": S, "duration_in_minutes": 0.1},
                  {"id": "V2", "site_id": S, "duration_in_minutes": 0.2},
                  {"id": "V3", "site_id": S, "duration_in_minutes": 0.7}],
        "lessons_media": [{"lesson_id": "L1", "media_id": "V1", "site_id": S},
                          {"lesson_id": "L1", "media_id": "V2", "site_id": S},
                          {"lesson_id": "L2", "media_id": "V3", "site_id": S}],
    })
    run_models(path)
    rows = fetch_dicts(path, "select * from analytics.course_catalog order by lesson_key")
    assert [r["media_minutes"] for r in rows] == [Decimal("0.3"), Decimal("0.7")]
    assert {r["course_media_minutes"] for r in rows} == {Decimal("1.0")}


def test_a_bundle_is_split_across_its_offers_and_offers_add_up_to_revenue(raw_db) -> None:
    """Issue 29: per-offer revenue splits a bundled transaction by its purchases' amounts
    (evenly when an amount is missing), money no offer can be credited with has its own
    empty-offer row, and offer_performance's net equals revenue_daily's per currency."""
    path = raw_db(bundle_rows())
    run_models(path)
    parts = {(r["transaction_id"], r["offer_id"]): r["amount_in_cents"] for r in fetch_dicts(
        path, "select * from analytics_staging.int_transaction_offers")}
    assert parts == {("B1", "A"): 3000, ("B1", "B"): 1000, ("B2", "A"): 333, ("B2", "B"): 333,
                     ("B2", "C"): 334, ("R2", "A"): -333, ("R2", "B"): -333, ("R2", "C"): -334,
                     ("P1", "A"): 500, ("R1", "A"): -500, ("O1", None): 777}
    rows = {r["offer_key"]: r for r in fetch_dicts(path, "select * from analytics.offer_performance")}
    assert {k: r["net_revenue_in_cents"] for k, r in rows.items()} == {
        "A": 3000 + 333 - 333 + 500 - 500, "B": 1333 - 333, "C": 334 - 334, "(no offer)": 777}
    assert rows["(no offer)"]["offer_id"] is None and rows["(no offer)"]["is_unattributed"]
    assert (rows["A"]["bundled_transactions_count"], rows["A"]["transactions_count"]) == (3, 5)
    assert rows["A"]["refunds_in_cents"] == -500 - 333
    (revenue,) = fetch_dicts(path, "select sum(net_in_cents) as net from analytics.revenue_daily")
    assert sum(r["net_revenue_in_cents"] for r in rows.values()) == revenue["net"] == 4777
