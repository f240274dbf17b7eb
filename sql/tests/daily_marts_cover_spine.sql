-- test: no fan-out and no gaps: revenue_daily and orders_daily have exactly one row per day from
-- each site and currency's first day to the as-of date
with as_of as (
    select as_of_date from {{ ref('int_as_of') }}
),

revenue as (
    select 'revenue_daily' as mart, site_id, currency, min(date_day) as first_day,
        max(date_day) as last_day, count(*) as rows_count
    from {{ ref('revenue_daily') }}
    group by site_id, currency
),

orders as (
    select 'orders_daily' as mart, site_id, currency, min(date_day) as first_day,
        max(date_day) as last_day, count(*) as rows_count
    from {{ ref('orders_daily') }}
    group by site_id, currency
),

combined as (
    select * from revenue
    union all
    select * from orders
),

final as (
    select combined.*
    from combined
    cross join as_of
    where combined.last_day <> as_of.as_of_date
        or combined.rows_count <> (combined.last_day - combined.first_day) + 1
)

select * from final
