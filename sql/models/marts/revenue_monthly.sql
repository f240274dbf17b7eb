-- description: revenue per site, currency and reporting month up to the as-of month: the month's
-- sums of revenue_daily (cash, tax, revenue excl. tax, fees known and unknown), net after fees
-- where every fee is known, and revenue excl. tax as earned over each service period
-- (int_revenue_schedule) with the deferred balance at month end: recognised through a month plus
-- deferred at its end equals revenue excl. tax through it (data test)
-- grain: site_id, currency, date_month
with daily as (select * from {{ ref('revenue_daily') }}),

schedule as (select * from {{ ref('int_revenue_schedule') }}),

months as (select * from {{ ref('int_month_spine') }}),

monthly as (
    select
        site_id,
        currency,
        cast(date_trunc('month', date_day) as date) as date_month,
        {{ bigint_sums(['gross_in_cents', 'refunds_in_cents', 'disputes_in_cents', 'net_in_cents',
            'tax_in_cents', 'revenue_ex_tax_in_cents', 'known_fees_in_cents',
            'fee_unknown_transactions_count', 'transactions_count']) }}
    from daily
    group by site_id, currency, cast(date_trunc('month', date_day) as date)
),

recognized as (
    select
        site_id,
        currency,
        date_month,
        cast(sum(recognized_in_cents) as bigint) as recognized_in_cents
    from schedule
    group by site_id, currency, date_month
),

schedule_by_month as (
    -- entries by the month of their transaction and the month they are earned in
    select
        site_id,
        currency,
        transaction_month,
        date_month as entry_month,
        cast(sum(recognized_in_cents) as bigint) as recognized_in_cents
    from schedule
    group by site_id, currency, transaction_month, date_month
),

deferred as (
    -- at the end of a month: what transactions of that month or earlier earn after it
    select
        monthly.site_id,
        monthly.currency,
        monthly.date_month,
        cast(sum(schedule_by_month.recognized_in_cents) as bigint) as deferred_in_cents
    from monthly
    inner join schedule_by_month
        on monthly.site_id = schedule_by_month.site_id
        and monthly.currency = schedule_by_month.currency
        and schedule_by_month.transaction_month <= monthly.date_month
        and schedule_by_month.entry_month > monthly.date_month
    group by monthly.site_id, monthly.currency, monthly.date_month
),

final as (
    select
        monthly.site_id,
        monthly.currency,
        monthly.date_month,
        monthly.gross_in_cents,
        monthly.refunds_in_cents,
        monthly.disputes_in_cents,
        monthly.net_in_cents,
        monthly.tax_in_cents,
        monthly.revenue_ex_tax_in_cents,
        monthly.known_fees_in_cents,
        -- NULL when any transaction of the month has no stated fee: never a guessed 0
        case when monthly.fee_unknown_transactions_count = 0
            then monthly.known_fees_in_cents end as fees_in_cents,
        monthly.fee_unknown_transactions_count,
        case when monthly.fee_unknown_transactions_count = 0
            then cast(monthly.revenue_ex_tax_in_cents - monthly.known_fees_in_cents as bigint)
        end as net_after_fees_in_cents,
        cast(coalesce(recognized.recognized_in_cents, 0) as bigint) as recognized_revenue_in_cents,
        cast(coalesce(deferred.deferred_in_cents, 0) as bigint) as deferred_revenue_in_cents,
        monthly.transactions_count,
        -- the partial-day and partial-month rule, stated once (int_month_spine)
        months.is_partial_month
    from monthly
    inner join months
        on monthly.date_month = months.date_month
    left join recognized
        on {{ columns_equal('monthly', 'recognized', ['site_id', 'currency', 'date_month']) }}
    left join deferred
        on {{ columns_equal('monthly', 'deferred', ['site_id', 'currency', 'date_month']) }}
)

select * from final
