-- description: every reporting month of the date spine, with the instant its snapshot is taken
-- (month end, or the end of the as-of day for the current month), as local time
-- grain: date_month
with days as (
    select * from {{ ref('int_date_spine') }}
),

as_of as (
    select * from {{ ref('int_as_of') }}
),

months as (
    select distinct date_month
    from days
),

final as (
    select
        months.date_month,
        cast(extract(year from months.date_month) * 12 + extract(month from months.date_month) as integer)
            as month_index,
        cast(least(
            cast(months.date_month + interval '1 month' as date),
            cast(as_of.as_of_date + 1 as date)
        ) as timestamp) as snapshot_end_local
    from months
    cross join as_of
)

select * from final
