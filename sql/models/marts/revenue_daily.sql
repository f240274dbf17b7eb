-- description: revenue per site, currency and reporting day, zero-filled from the first
-- transaction of that site and currency up to the as-of date
-- grain: site_id, currency, date_day
with transactions as (
    select * from {{ ref('int_transactions') }}
),

spine as (
    select * from {{ ref('int_date_spine') }}
),

{{ spine_grid('transactions', 'spine') }},

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
        {{ zero_filled(['gross_in_cents', 'refunds_in_cents', 'disputes_in_cents', 'net_in_cents', 'tax_in_cents', 'fees_in_cents', 'transactions_count', 'new_in_cents', 'recurring_in_cents']) }}
    {{ spine_join('daily') }}
)

select * from final
