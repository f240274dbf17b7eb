-- description: revenue per site, currency and reporting day, zero-filled from the first
-- transaction of that site and currency up to the as-of date. Revenue excl. tax beside the cash
-- (net, tax included); fees only where every transaction of the day states one (else NULL, with
-- the stated part and the count of unstated ones); the as-of day flagged when the synced
-- transactions reach only part of it
-- grain: site_id, currency, date_day
with transactions as (select * from {{ ref('int_transactions') }}),

spine as (select * from {{ ref('int_date_spine') }}),

as_of as (select * from {{ ref('int_as_of') }}),

coverage as (select * from {{ ref('data_coverage') }}),

reporting_days as (
    {{ as_of_day('as_of', 'coverage') }}
),

{{ spine_grid('transactions', 'spine') }},

daily as (
    select
        site_id,
        currency,
        date_day,
        {{ bigint_sums(['gross_in_cents', 'refunds_in_cents', 'disputes_in_cents']) }},
        cast(sum(amount_in_cents) as bigint) as net_in_cents,
        cast(sum(sales_tax_in_cents) as bigint) as tax_in_cents,
        cast(sum(revenue_ex_tax_in_cents) as bigint) as revenue_ex_tax_in_cents,
        cast(coalesce(sum(fee_in_cents), 0) as bigint) as known_fees_in_cents,
        cast(sum(case when is_fee_known then 0 else 1 end) as bigint)
            as fee_unknown_transactions_count,
        count(*) as transactions_count,
        cast(sum(case when is_recurring then 0 else gross_in_cents end) as bigint) as new_in_cents,
        cast(sum(case when is_recurring then gross_in_cents else 0 end) as bigint)
            as recurring_in_cents
    from transactions
    group by site_id, currency, date_day
),

final as (
    select
        grid.site_id,
        grid.currency,
        grid.date_day,
        {{ zero_filled(['gross_in_cents', 'refunds_in_cents', 'disputes_in_cents', 'net_in_cents', 'tax_in_cents']) }},
        -- NULL when any transaction of the day has no stated fee: never a guessed 0
        case when coalesce(daily.fee_unknown_transactions_count, 0) = 0
            then cast(coalesce(daily.known_fees_in_cents, 0) as bigint) end as fees_in_cents,
        {{ zero_filled(['transactions_count', 'new_in_cents', 'recurring_in_cents', 'revenue_ex_tax_in_cents', 'known_fees_in_cents', 'fee_unknown_transactions_count']) }},
        grid.date_day = reporting_days.as_of_date and reporting_days.is_as_of_day_partial
            as is_partial_day
    {{ spine_join('daily') }}
    cross join reporting_days
)

select * from final
