-- description: revenue per site, currency and reporting day, zero-filled from the first
-- transaction of that site and currency up to the as-of date
-- grain: site_id, currency, date_day
with transactions as (
    select * from {{ ref('int_transactions') }}
),

spine as (
    select * from {{ ref('int_date_spine') }}
),

site_currencies as (
    select
        site_id,
        currency,
        min(date_day) as first_day
    from transactions
    group by site_id, currency
),

grid as (
    select
        site_currencies.site_id,
        site_currencies.currency,
        spine.date_day
    from site_currencies
    inner join spine
        on spine.date_day >= site_currencies.first_day
),

daily as (
    select
        site_id,
        currency,
        date_day,
        cast(sum(gross_in_cents) as bigint) as gross_in_cents,
        cast(sum(refunds_in_cents) as bigint) as refunds_in_cents,
        cast(sum(disputes_in_cents) as bigint) as disputes_in_cents,
        cast(sum(amount_in_cents) as bigint) as net_in_cents,
        cast(sum(sales_tax_in_cents) as bigint) as tax_in_cents,
        cast(sum(payment_fee_in_cents) as bigint) as fees_in_cents,
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
        cast(coalesce(daily.gross_in_cents, 0) as bigint) as gross_in_cents,
        cast(coalesce(daily.refunds_in_cents, 0) as bigint) as refunds_in_cents,
        cast(coalesce(daily.disputes_in_cents, 0) as bigint) as disputes_in_cents,
        cast(coalesce(daily.net_in_cents, 0) as bigint) as net_in_cents,
        cast(coalesce(daily.tax_in_cents, 0) as bigint) as tax_in_cents,
        cast(coalesce(daily.fees_in_cents, 0) as bigint) as fees_in_cents,
        cast(coalesce(daily.transactions_count, 0) as bigint) as transactions_count,
        cast(coalesce(daily.new_in_cents, 0) as bigint) as new_in_cents,
        cast(coalesce(daily.recurring_in_cents, 0) as bigint) as recurring_in_cents
    from grid
    left join daily
        on grid.site_id = daily.site_id
        and grid.currency = daily.currency
        and grid.date_day = daily.date_day
)

select * from final
