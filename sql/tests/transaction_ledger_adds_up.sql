-- test: transaction_ledger's sums equal revenue_daily's per site, currency and day (gross,
-- refunds and disputes, net, tax, revenue excl. tax, known fees, fees not stated, count)
with ledger as (
    select
        site_id,
        currency,
        date_day,
        sum(case when revenue_type = 'gross' then amount_in_cents else 0 end) as gross_in_cents,
        sum(case when revenue_type = 'refund' then amount_in_cents else 0 end) as refunds_in_cents,
        sum(case when revenue_type = 'dispute' then amount_in_cents else 0 end)
            as disputes_in_cents,
        sum(amount_in_cents) as net_in_cents,
        sum(tax_in_cents) as tax_in_cents,
        sum(revenue_ex_tax_in_cents) as revenue_ex_tax_in_cents,
        coalesce(sum(fee_in_cents), 0) as known_fees_in_cents,
        sum(case when fee_in_cents is null then 1 else 0 end) as fee_unknown_transactions_count,
        count(*) as transactions_count
    from {{ ref('transaction_ledger') }}
    group by site_id, currency, date_day
),

daily as (
    select * from {{ ref('revenue_daily') }}
    where transactions_count > 0
),

final as (
    select
        coalesce(ledger.site_id, daily.site_id) as site_id,
        coalesce(ledger.currency, daily.currency) as currency,
        coalesce(ledger.date_day, daily.date_day) as date_day,
        ledger.net_in_cents as ledger_net_in_cents,
        daily.net_in_cents as daily_net_in_cents
    from ledger
    full outer join daily
        on ledger.site_id = daily.site_id
        and ledger.currency = daily.currency
        and ledger.date_day = daily.date_day
    where ledger.site_id is null
        or daily.site_id is null
        or ledger.gross_in_cents <> daily.gross_in_cents
        or ledger.refunds_in_cents <> daily.refunds_in_cents
        or ledger.disputes_in_cents <> daily.disputes_in_cents
        or ledger.net_in_cents <> daily.net_in_cents
        or ledger.tax_in_cents <> daily.tax_in_cents
        or ledger.revenue_ex_tax_in_cents <> daily.revenue_ex_tax_in_cents
        or ledger.known_fees_in_cents <> daily.known_fees_in_cents
        or ledger.fee_unknown_transactions_count <> daily.fee_unknown_transactions_count
        or ledger.transactions_count <> daily.transactions_count
        or daily.fees_in_cents is distinct from case
            when ledger.fee_unknown_transactions_count = 0 then ledger.known_fees_in_cents end
)

select * from final
