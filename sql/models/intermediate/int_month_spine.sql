-- description: every reporting month of the date spine, with the instant its snapshot is taken
-- (month end, or the end of the as-of day for the current month), as local time, and whether
-- the data covers the month to its end
-- grain: date_month
with days as (select * from {{ ref('int_date_spine') }}),

as_of as (select * from {{ ref('int_as_of') }}),

coverage as (select * from {{ ref('data_coverage') }}),

months as (
    select distinct date_month
    from days
),

as_of_day as (
    {{ as_of_day('as_of', 'coverage') }}
),

final as (
    select
        months.date_month,
        cast(extract(year from months.date_month) * 12 + extract(month from months.date_month) as integer)
            as month_index,
        cast(least(
            cast(months.date_month + interval '1 month' as date),
            cast(as_of_day.as_of_date + 1 as date)
        ) as timestamp) as snapshot_end_local,
        -- the as-of month, unless the as-of day is its last and the data reaches that day's end
        coalesce(
            cast(months.date_month + interval '1 month' as date) > cast(as_of_day.as_of_date + 1 as date)
                or (cast(months.date_month + interval '1 month' as date) = cast(as_of_day.as_of_date + 1 as date)
                    and as_of_day.is_as_of_day_partial),
            false
        ) as is_partial_month
    from months
    cross join as_of_day
)

select * from final
