"""A small hand-built warehouse with the `analytics` marts the report reads (the columns of
the data dictionary in docs/models.md), so that edge cases the sandbox rarely produces are certain: a short
payout, a failed one, an archived offer, an offer without a currency, titles that need escaping.

The numbers are simple on purpose so that expected tiles can be worked out in the tests;
test_report_end_to_end.py covers the real sandbox -> sync -> models path.
"""

from __future__ import annotations

import datetime as dt
import pathlib
from html.parser import HTMLParser

import duckdb
import pyarrow as pa

AS_OF = dt.date(2026, 3, 31)
DAYS = 90
SITES = ("2147483701", "2147483702")
# The sync that loaded the data ran after AS_OF ended (UTC), so AS_OF is a complete day.
SYNCED_AT = dt.datetime(2026, 4, 1, 0, 30, tzinfo=dt.UTC)
BUILT_AT = dt.datetime(2026, 4, 1, 0, 40, tzinfo=dt.UTC)

def coverage_row(
    resource: str,
    records: int,
    newest: dt.datetime | None = dt.datetime(2026, 3, 31, 23, 10, tzinfo=dt.UTC),
    status: str | None = "synced",
    reason: str | None = None,
    attempt: dt.datetime | None = SYNCED_AT,
    synced: dt.datetime | None = SYNCED_AT,
    through: dt.datetime | None = SYNCED_AT,
    missing: int | None = None,
) -> tuple:
    """One row of analytics.data_coverage, in its column order."""
    return (resource, records, records > 0, newest, status is not None, status, reason,
            attempt, synced, through, missing)


def coverage_rows() -> list[tuple]:
    return [
        coverage_row("transactions", 42, missing=0),
        coverage_row("purchases", 30),
        coverage_row("payouts", 20, newest=dt.datetime(2026, 3, 19, 9, tzinfo=dt.UTC)),
    ]


def revenue_rows() -> list[tuple]:
    """(site, currency, day, gross, refunds, disputes, net, tax, revenue excl. tax): refunds and
    disputes negative; tax on every third day, so revenue excl. tax differs from net."""
    rows = []
    for i in range(DAYS):
        day = AS_OF - dt.timedelta(days=DAYS - 1 - i)
        for site, currency, base in (
            (SITES[0], "USD", 10_000),
            (SITES[0], "EUR", 5_001),
            (SITES[1], "USD", 2_999),
        ):
            gross = base + 37 * i
            refunds = -(199 if i % 7 == 0 else 0)
            disputes = -(1_250 if i % 30 == 3 else 0)
            net, tax = gross + refunds + disputes, (gross // 21 if i % 3 == 0 else 0)
            rows.append((site, currency, day, gross, refunds, disputes, net, tax, net - tax))
    return rows


def mrr_rows() -> list[tuple]:
    rows = []
    for site, currency, scale in ((SITES[0], "USD", 1), (SITES[0], "EUR", 2), (SITES[1], "USD", 3)):
        mrr = 0
        for month in (dt.date(2026, 1, 1), dt.date(2026, 2, 1), dt.date(2026, 3, 1)):
            new, expansion, reactivation = 9_900 * scale, 1_000 * scale, 500 * (month.month - 1)
            contraction, churned = -300 * (month.month - 1), -4_900 * (month.month - 1)
            mrr += new + expansion + reactivation + contraction + churned
            rows.append(
                (
                    site,
                    currency,
                    month,
                    mrr,
                    new,
                    expansion,
                    contraction,
                    churned,
                    reactivation,
                    3 * scale + month.month,
                )
            )
    return rows


# the marts of the monthly sections, emptied together by tests that need no charts
MONTHLY_MARTS = ("revenue_monthly", "saas_metrics_monthly", "mrr_movements",
                 "offer_revenue_monthly", "product_revenue_monthly")
MONTHS = (dt.date(2026, 1, 1), dt.date(2026, 2, 1), dt.date(2026, 3, 1))
# offer_revenue_monthly: (site, currency, month, offer_key, title, unattributed, net, ex tax, n)
OFFER_MONTH_ROWS = [
    (SITES[0], "USD", MONTHS[2], "4000000001", 'Course <A> & "friends"', False, 1_050_001,
     1_000_001, 12),
    (SITES[0], "USD", MONTHS[2], "4000000002", "Membership $5 / $50", False, 260_000, 250_000, 30),
    (SITES[0], "USD", MONTHS[2], "(no offer)", None, True, 330_000, 300_000, 9),
    (SITES[1], "USD", MONTHS[2], "(no offer)", None, True, 20_000, 20_000, 1),
    (SITES[1], "USD", MONTHS[2], "4000000004", "Coaching", False, 500_000, 500_000, 5),
    (SITES[0], "EUR", MONTHS[2], "4000000003", "Bundle", False, 109_999, 99_999, 1),
    # February: a bigger month for an offer that sold nothing in March
    (SITES[0], "USD", MONTHS[1], "4000000009", "February only", False, 9_999_999, 9_999_999, 1),
]
PRODUCT_COUNT = 12  # USD products in March: more than the page lists, so the rest is added up


def product_month_rows() -> list[tuple]:
    """product_revenue_monthly: 12 USD products and a `(no product)` row in March (site 1),
    one EUR product, one February product."""
    rows = [
        (SITES[0], "USD", MONTHS[2], f"5000000{n:03d}", f"Product {n}", False,
         10_000 * (PRODUCT_COUNT + 1 - n), 3)
        for n in range(1, PRODUCT_COUNT + 1)
    ]
    rows.append((SITES[0], "USD", MONTHS[2], "(no product)", None, True, 4_321, 2))
    rows.append((SITES[0], "EUR", MONTHS[2], "5000000100", "Workbook", False, 99_999, 1))
    rows.append((SITES[0], "USD", MONTHS[1], "5000000999", "Old product", False, 77_777, 1))
    return rows


# mrr_movements' churn rows: (site, currency, month, customer, change, kind); each month's sum
# per site and currency is mrr_rows' churned_mrr_in_cents
CHURN_ROWS = [
    (SITES[0], "USD", MONTHS[1], "c1", -4_900, "voluntary"),
    (SITES[0], "USD", MONTHS[2], "c2", -4_900, "payment_failed"),
    (SITES[0], "USD", MONTHS[2], "c3", -4_900, None),
    (SITES[1], "USD", MONTHS[1], "c4", -4_900, "voluntary"),
    (SITES[1], "USD", MONTHS[2], "c5", -3_000, "voluntary"),
    (SITES[1], "USD", MONTHS[2], "c6", -6_800, "refunded_or_disputed"),
    (SITES[0], "EUR", MONTHS[1], "c7", -4_900, "payment_failed"),
    (SITES[0], "EUR", MONTHS[2], "c8", -9_800, "voluntary"),
]


def payout_rows() -> tuple[list[tuple], list[tuple], list[tuple]]:
    """payouts, payout_reconciliation, payout_transactions.

    Site 1's payouts are itemised by their lines (payout_line_rows), site 2's reconciled by the
    settlement rule. Payout #4 of site 1 is 150 cents short of its transactions; its lines are
    those transactions (the third one unmatched: its transaction is not listed) and a -0.75
    adjustment, so it is 75 cents short of its lines. #6 failed (reconciled by rolling forward).
    """
    payouts, recon, items = [], [], []
    tx = 3_000_000_000
    for site in SITES:
        itemised = site == SITES[0]
        for n in range(10):
            pid = f"{site}{n:03d}"
            initiated = dt.datetime(2026, 3, 1 + 2 * n, 9, tzinfo=dt.UTC)
            lines = [1_000 + 11 * n, 2_500, -300 if n % 3 == 0 else 700]
            expected = sum(lines)
            short = 150 if (site == SITES[0] and n == 4) else 0
            status = "failed" if n == 6 else ("paid" if n < 8 else "in_transit")
            payouts.append(
                (
                    pid,
                    site,
                    "USD",
                    status,
                    expected - short,
                    initiated,
                    initiated + dt.timedelta(days=2),
                )
            )
            if not itemised:
                recon.append((pid, site, expected, -short, len(lines), short == 0, n == 6,
                              "settlement_rule", 0, 0, 0, 40 * len(lines), None, None))
            elif short:
                # lines: the 3 transactions (the third unmatched) and an adjustment of -75
                unexplained = lines[2] + ADJUSTMENT
                net = expected + ADJUSTMENT
                recon.append((pid, site, net, expected - short - net, 2, False, False,
                              "itemised", 4, 2, 2, 40 * len(lines), ADJUSTMENT, unexplained))
            else:
                recon.append((pid, site, expected, 0, len(lines), True, n == 6,
                              "itemised", len(lines), len(lines), 0, 40 * len(lines), 0, 0))
            for amount in lines:
                tx += 1
                created = initiated - dt.timedelta(days=2, hours=3)
                items.append(
                    (
                        pid,
                        str(tx),
                        site,
                        "USD",
                        status,
                        status == "failed",
                        "charge",
                        created,
                        created.date() + dt.timedelta(days=2),
                        "EUR",
                        amount + 5,
                        amount + 40,
                        40,
                        amount,
                    )
                )
    return payouts, recon, items


ADJUSTMENT = -75  # the adjustment line of site 1's short payout #4


def payout_line_rows() -> list[tuple]:
    """payout_lines of site 1: one line per transaction of payout_rows (sales and refunds,
    presented in EUR, settled in USD), matched by `same_minute` except the short payout's
    third line; that payout also carries an unmatched adjustment."""
    rows = []
    _, _, items = payout_rows()
    numbers: dict[str, int] = {}
    for pid, tx, site, _, _, _, _, created, _, _, presented, amount, fee, net in items:
        if site != SITES[0]:
            continue
        number = numbers[pid] = numbers.get(pid, 0) + 1
        unmatched = pid == f"{SITES[0]}004" and number == 3
        rows.append((
            pid, number, "sale" if net > 0 else "refund", created, f"cust-{number}",
            1000 + number, presented, "EUR", amount, fee, net, "USD",
            None if unmatched else tx, None if unmatched else "same_minute", not unmatched,
        ))
    created = dt.datetime(2026, 3, 8, 12, tzinfo=dt.UTC)
    rows.append((f"{SITES[0]}004", 4, "adjustment", created, None, None, None, None,
                 ADJUSTMENT, 0, ADJUSTMENT, "USD", None, None, False))
    return rows


def settlement_delay_rows() -> list[tuple]:
    """settlement_delay: three months per site; site 2 has two providers."""
    rows = []
    for month in (dt.date(2026, 1, 1), dt.date(2026, 2, 1), dt.date(2026, 3, 1)):
        rows.append((SITES[0], "platform_payments", month, 30, 2, 3, 5))
        rows.append((SITES[1], "platform_payments", month, 12, 2, 2, 4))
        rows.append((SITES[1], "paypal", month, 4, 3, 4, 4))
    return rows


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """Bulk insert through an Arrow table: executemany is row-at-a-time and slow."""
    columns = list(zip(*rows, strict=True))
    incoming = pa.Table.from_arrays(
        [pa.array(c) for c in columns], names=[f"c{i}" for i in range(len(columns))]
    )
    con.register("incoming", incoming)
    con.execute(f"INSERT INTO {table} SELECT * FROM incoming")
    con.unregister("incoming")


def write_coverage(
    con: duckdb.DuckDBPyConnection,
    rows: list[tuple],
    *,
    timezone: str = "UTC",
    settlement_delay_days: int = 2,
) -> None:
    """(Re)write the two build marts: what the figures are built on and the build parameters."""
    con.execute("""CREATE OR REPLACE TABLE analytics.data_coverage (resource TEXT,
        records_count BIGINT, is_loaded BOOLEAN, newest_record_at TIMESTAMPTZ,
        is_sync_recorded BOOLEAN, sync_status TEXT, sync_reason TEXT,
        last_attempt_at TIMESTAMPTZ, last_synced_at TIMESTAMPTZ, complete_through_at TIMESTAMPTZ,
        known_missing_count BIGINT)""")
    if rows:
        _insert(con, "analytics.data_coverage", rows)
    con.execute(
        """CREATE OR REPLACE TABLE analytics.build_metadata AS SELECT ?::TIMESTAMPTZ AS built_at,
        'creator_platform' AS dataset, ? AS timezone, ?::INTEGER AS settlement_delay_days,
        2 AS default_settlement_delay_days,
        ?::DATE AS as_of_date, false AS is_as_of_given, '0.1.0' AS creator_sync_version""",
        [BUILT_AT, timezone, settlement_delay_days, AS_OF],
    )


def write_monthly_marts(con: duckdb.DuckDBPyConnection) -> None:
    """The monthly marts of issue 39, consistent with revenue_daily and mrr_monthly: site 2's
    USD goes through a processor that states no fee (every transaction's fee unknown), site 1's
    USD states a fee for all but one transaction a month, EUR states all of them."""
    con.execute("""ALTER TABLE analytics.mrr_monthly ADD COLUMN previous_mrr_in_cents BIGINT""")
    con.execute("""UPDATE analytics.mrr_monthly AS m SET previous_mrr_in_cents = coalesce((
        SELECT p.mrr_in_cents FROM analytics.mrr_monthly AS p WHERE p.site_id = m.site_id
        AND p.currency = m.currency AND p.date_month = m.date_month - INTERVAL 1 MONTH), 0)""")
    con.execute("""CREATE TABLE analytics.revenue_monthly AS
        SELECT site_id, currency, date_trunc('month', date_day)::DATE AS date_month,
            sum(gross_in_cents)::BIGINT AS gross_in_cents,
            sum(refunds_in_cents)::BIGINT AS refunds_in_cents,
            sum(disputes_in_cents)::BIGINT AS disputes_in_cents,
            sum(net_in_cents)::BIGINT AS net_in_cents, sum(tax_in_cents)::BIGINT AS tax_in_cents,
            sum(revenue_ex_tax_in_cents)::BIGINT AS revenue_ex_tax_in_cents,
            CASE WHEN site_id = '2147483702' THEN 0 ELSE sum(gross_in_cents // 40) END::BIGINT
                AS known_fees_in_cents,
            CASE WHEN site_id = '2147483702' THEN count(*) WHEN currency = 'USD' THEN 1 ELSE 0
                END::BIGINT AS fee_unknown_transactions_count,
            count(*)::BIGINT AS transactions_count,
            false AS is_partial_month
        FROM analytics.revenue_daily GROUP BY site_id, currency, date_month""")
    con.execute("""CREATE TABLE analytics.saas_metrics_monthly AS
        SELECT site_id, currency, date_month, mrr_in_cents, 12 * mrr_in_cents AS arr_in_cents
        FROM analytics.mrr_monthly""")
    con.execute("""CREATE TABLE analytics.mrr_movements (site_id TEXT, currency TEXT,
        date_month DATE, customer_id TEXT, movement TEXT, mrr_change_in_cents BIGINT,
        churn_kind TEXT, is_partial_month BOOLEAN)""")
    _insert(con, "analytics.mrr_movements", [
        *((s, c, m, cust, "churn", change, kind, False)
          for s, c, m, cust, change, kind in CHURN_ROWS),
        (SITES[0], "USD", MONTHS[2], "c9", "new", 9_900, None, False),
    ])
    con.execute("""CREATE TABLE analytics.offer_revenue_monthly (site_id TEXT, currency TEXT,
        date_month DATE, offer_key TEXT, offer_title TEXT, is_unattributed BOOLEAN,
        net_in_cents BIGINT, revenue_ex_tax_in_cents BIGINT, transactions_count BIGINT)""")
    _insert(con, "analytics.offer_revenue_monthly", OFFER_MONTH_ROWS)
    con.execute("""CREATE TABLE analytics.product_revenue_monthly (site_id TEXT, currency TEXT,
        date_month DATE, product_id TEXT, product_title TEXT, is_unattributed BOOLEAN,
        revenue_ex_tax_in_cents BIGINT, transactions_count BIGINT)""")
    _insert(con, "analytics.product_revenue_monthly", product_month_rows())


def build_warehouse(path: pathlib.Path, *, with_raw: bool = True) -> pathlib.Path:
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE SCHEMA analytics")
    con.execute("""CREATE TABLE analytics.revenue_daily (site_id TEXT, currency TEXT, date_day DATE,
        gross_in_cents BIGINT, refunds_in_cents BIGINT, disputes_in_cents BIGINT,
        net_in_cents BIGINT, tax_in_cents BIGINT, revenue_ex_tax_in_cents BIGINT)""")
    _insert(con, "analytics.revenue_daily", revenue_rows())
    con.execute("""CREATE TABLE analytics.mrr_monthly (site_id TEXT, currency TEXT, date_month DATE,
        mrr_in_cents BIGINT, new_mrr_in_cents BIGINT, expansion_mrr_in_cents BIGINT,
        contraction_mrr_in_cents BIGINT, churned_mrr_in_cents BIGINT,
        reactivation_mrr_in_cents BIGINT, active_subscriptions BIGINT)""")
    _insert(con, "analytics.mrr_monthly", mrr_rows())
    write_monthly_marts(con)
    payouts, recon, items = payout_rows()
    con.execute("""CREATE TABLE analytics.fct_payouts (payout_id TEXT, site_id TEXT, currency TEXT,
        status TEXT, amount_in_cents BIGINT, initiated_at TIMESTAMPTZ,
        estimated_arrival_at TIMESTAMPTZ)""")
    _insert(con, "analytics.fct_payouts", payouts)
    con.execute("""CREATE TABLE analytics.payout_reconciliation (payout_id TEXT, site_id TEXT,
        expected_amount_in_cents BIGINT, difference_in_cents BIGINT, transactions_count BIGINT,
        is_reconciled BOOLEAN, is_rolled_forward BOOLEAN, reconciliation_method TEXT,
        lines_count BIGINT, matched_lines_count BIGINT, unmatched_lines_count BIGINT,
        fees_in_cents BIGINT, adjustments_in_cents BIGINT, unexplained_in_cents BIGINT)""")
    _insert(con, "analytics.payout_reconciliation", recon)
    con.execute("""CREATE TABLE analytics.fct_payout_lines (payout_id TEXT, line_number BIGINT,
        line_type TEXT, created_at TIMESTAMPTZ, customer_id TEXT, order_number BIGINT,
        presented_amount_in_cents BIGINT, presented_currency TEXT, amount_in_cents BIGINT,
        fee_in_cents BIGINT, net_in_cents BIGINT, currency TEXT, transaction_id TEXT,
        match_rule TEXT, is_matched BOOLEAN)""")
    _insert(con, "analytics.fct_payout_lines", payout_line_rows())
    con.execute("""CREATE TABLE analytics.settlement_delay (site_id TEXT, provider TEXT,
        date_month DATE, lines_count BIGINT, p50_delay_days BIGINT, p95_delay_days BIGINT,
        max_delay_days BIGINT)""")
    _insert(con, "analytics.settlement_delay", settlement_delay_rows())
    con.execute("""CREATE TABLE analytics.payout_transactions (payout_id TEXT,
        transaction_id TEXT, site_id TEXT, currency TEXT, payout_status TEXT,
        is_rolled_forward BOOLEAN, action TEXT, transaction_created_at TIMESTAMPTZ,
        payable_date DATE, transaction_currency TEXT, amount_in_cents BIGINT,
        settlement_amount_in_cents BIGINT, settlement_fee_amount_in_cents BIGINT,
        net_settlement_in_cents BIGINT)""")
    _insert(con, "analytics.payout_transactions", items)
    con.execute("""CREATE TABLE analytics.unpaid_balance AS SELECT * FROM (VALUES
        ('2147483701', 'USD', 123456::BIGINT), ('2147483702', 'USD', 1::BIGINT))
        t(site_id, currency, unpaid_balance_in_cents)""")
    con.execute("""CREATE TABLE analytics.offer_performance AS SELECT * FROM (VALUES
        ('2147483701', '4000000001', 'Course <A> & "friends"', 'USD', 1000001::BIGINT, 12, 11, false),
        ('2147483701', '4000000002', 'Membership $5 / $50', 'USD', 250000::BIGINT, 30, 30, false),
        ('2147483701', '4000000003', 'Bundle', 'EUR', 99999::BIGINT, 1, 1, true),
        ('2147483701', '4000000005', 'Free lead magnet', NULL, 0::BIGINT, 0, 0, false),
        ('2147483702', '4000000004', 'Coaching', 'USD', 500000::BIGINT, 5, 4, false))
        t(site_id, offer_id, offer_title, currency, net_revenue_in_cents, purchases_count,
          customers_count, is_deleted)""")
    con.execute("""CREATE TABLE analytics.payout_scope AS SELECT * FROM (VALUES
        ('2147483701', 'platform_payments', 'USD', 900000::BIGINT, 0::BIGINT,
         'settled by the platform into its payouts'),
        ('2147483702', 'platform_payments', 'USD', 100000::BIGINT, 0::BIGINT,
         'settled by the platform into its payouts'),
        ('2147483702', 'paypal', 'USD', 0::BIGINT, 25000::BIGINT,
         'paid out by the processor itself: in no payout of the platform'))
        t(site_id, provider, currency, covered_net_in_cents, not_covered_net_in_cents,
          coverage_reason)""")
    write_coverage(con, coverage_rows())
    if with_raw:
        con.execute("CREATE SCHEMA creator_platform")
        con.execute("""CREATE TABLE creator_platform._dlt_loads AS SELECT * FROM (VALUES
            ('1', 'creator_platform', 0, TIMESTAMPTZ '2026-04-01 00:10:00+00'),
            ('2', 'creator_platform', 0, TIMESTAMPTZ '2026-04-01 00:30:00+00'),
            ('3', 'creator_platform', 1, TIMESTAMPTZ '2026-04-01 01:00:00+00'))
            t(load_id, schema_name, status, inserted_at)""")
        con.execute(
            "CREATE TABLE creator_platform.transactions AS SELECT range AS id FROM range(42)"
        )
        con.execute("CREATE TABLE creator_platform.customers AS SELECT range AS id FROM range(7)")
        con.execute("""CREATE TABLE creator_platform.sites AS SELECT * FROM (VALUES
            ('2147483701', 'Maple Academy'), ('2147483702', 'Pine & Co')) t(id, name)""")
    con.close()
    return path


# DuckDB column type -> PostgreSQL, for copying the fixture warehouse as it stands
PG_TYPES = {
    "VARCHAR": "text",
    "BIGINT": "bigint",
    "INTEGER": "integer",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "DOUBLE": "double precision",
}


def copy_to_postgres(path: pathlib.Path, dsn: str, schemas: tuple[str, ...]) -> None:
    """Every table of `schemas` in the DuckDB file, column types and rows, into PostgreSQL (each
    schema dropped first): the same warehouse on the other engine."""
    import psycopg2
    from psycopg2.extras import execute_values

    duck = duckdb.connect(str(path), read_only=True)
    pg = psycopg2.connect(dsn)
    pg.autocommit = True
    try:
        with pg.cursor() as cur:
            for schema in schemas:
                cur.execute(f'drop schema if exists "{schema}" cascade')
                tables = duck.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
                    "ORDER BY 1",
                    [schema],
                ).fetchall()
                if not tables:
                    continue
                cur.execute(f'create schema "{schema}"')
                for (table,) in tables:
                    columns = duck.execute(
                        "SELECT column_name, data_type FROM information_schema.columns "
                        "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
                        [schema, table],
                    ).fetchall()
                    body = ", ".join(
                        f'"{name}" {PG_TYPES.get(kind, kind.lower())}' for name, kind in columns
                    )
                    cur.execute(f'create table "{schema}"."{table}" ({body})')
                    rows = duck.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()
                    if rows:
                        execute_values(cur, f'insert into "{schema}"."{table}" values %s', rows)
    finally:
        pg.close()
        duck.close()


class Elements(HTMLParser):
    """Every start tag with its attributes and the text directly inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[int, str] = {}
        self._open: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open.append(len(self.tags) - 1)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open:
            index = self._open[-1]
            self.text[index] = self.text.get(index, "") + data

    def by_testid(self, testid: str) -> list[tuple[dict[str, str | None], str]]:
        return [
            (attrs, self.text.get(i, ""))
            for i, (_, attrs) in enumerate(self.tags)
            if attrs.get("data-testid") == testid
        ]
