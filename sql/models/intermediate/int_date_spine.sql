-- description: every reporting day from the first activity (transaction, purchase or order)
-- up to the as-of date; the days that marts fill with zeros when nothing happened
-- grain: date_day
with recursive transactions as (select * from {{ ref('int_transactions') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

orders as (select * from {{ ref('stg_orders') }}),

as_of as (select * from {{ ref('int_as_of') }}),

first_days as (
    select min(date_day) as first_day from transactions
    union all
    select min(cast(least(started_at, created_at) at time zone {{ setting('timezone') }} as date))
    from purchases
    union all
    select min(cast(created_at at time zone {{ setting('timezone') }} as date)) from orders
),

bounds as (
    select
        min(first_days.first_day) as first_day,
        max(as_of.as_of_date) as last_day
    from first_days
    cross join as_of
),

days as (
    select first_day as date_day
    from bounds
    where first_day <= last_day
    union all
    select cast(days.date_day + 1 as date) as date_day
    from days
    where days.date_day < (select last_day from bounds)
),

final as (
    select
        date_day,
        cast(date_trunc('month', date_day) as date) as date_month
    from days
)

select * from final
