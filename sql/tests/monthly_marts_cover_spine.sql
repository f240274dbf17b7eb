-- test: no fan-out and no gaps: mrr_monthly has one row per month from each site and currency's
-- first paying month to the as-of month; each cohort has month numbers 0..(as-of month - cohort)
with as_of as (
    select
        cast(extract(year from as_of_date) * 12 + extract(month from as_of_date) as integer)
            as as_of_index
    from {{ ref('int_as_of') }}
),

mrr as (
    select
        'mrr_monthly' as mart,
        site_id,
        currency,
        cast(null as date) as cohort_month,
        min(cast(extract(year from date_month) * 12 + extract(month from date_month) as integer))
            as first_index,
        max(cast(extract(year from date_month) * 12 + extract(month from date_month) as integer))
            as last_index,
        count(*) as rows_count
    from {{ ref('mrr_monthly') }}
    group by site_id, currency
),

cohorts as (
    select
        'customer_cohorts' as mart,
        site_id,
        currency,
        cohort_month,
        cast(extract(year from cohort_month) * 12 + extract(month from cohort_month) as integer)
            + min(month_number) as first_index,
        cast(extract(year from cohort_month) * 12 + extract(month from cohort_month) as integer)
            + max(month_number) as last_index,
        count(*) as rows_count
    from {{ ref('customer_cohorts') }}
    group by site_id, currency, cohort_month
),

combined as (
    select * from mrr
    union all
    select * from cohorts
),

final as (
    select combined.*
    from combined
    cross join as_of
    where combined.last_index <> as_of.as_of_index
        or combined.rows_count <> combined.last_index - combined.first_index + 1
        or (combined.mart = 'customer_cohorts' and combined.first_index
            <> cast(extract(year from combined.cohort_month) * 12
                + extract(month from combined.cohort_month) as integer))
)

select * from final
