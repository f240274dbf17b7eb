-- description: MRR per site, currency and reporting month with its movements (signed: churn and
-- contraction are negative), so that mrr = previous month's mrr + all movements; the as-of month
-- flagged while the data does not cover it to its end (is_partial_month)
-- grain: site_id, currency, date_month
with subscriber_months as (select * from {{ ref('int_subscriber_mrr_months') }}),

months as (select * from {{ ref('int_month_spine') }}),

-- people the platform deleted: out of the people counts, their MRR kept
deleted_customers as (select * from {{ ref('int_deleted_customers') }}),

counted as (
    select
        subscriber_months.*,
        deleted_customers.customer_id is null as is_counted
    from subscriber_months
    left join deleted_customers
        on subscriber_months.subscriber_id = deleted_customers.customer_id
),

aggregated as (
    select
        site_id,
        currency,
        date_month,
        {{ bigint_sums(['mrr_in_cents', 'previous_mrr_in_cents', 'new_mrr_in_cents',
            'expansion_mrr_in_cents', 'contraction_mrr_in_cents', 'churned_mrr_in_cents',
            'reactivation_mrr_in_cents', 'active_subscriptions']) }},
        cast(sum(case when mrr_in_cents > 0 and is_counted then 1 else 0 end) as bigint)
            as active_customers,
        cast(sum(case when previous_mrr_in_cents > 0 and is_counted then 1 else 0 end) as bigint)
            as previous_active_customers,
        cast(sum(case when churned_mrr_in_cents < 0 and is_counted then 1 else 0 end) as bigint)
            as churned_customers
    from counted
    group by site_id, currency, date_month
),

final as (
    select
        aggregated.site_id,
        aggregated.currency,
        aggregated.date_month,
        mrr_in_cents,
        previous_mrr_in_cents,
        new_mrr_in_cents,
        expansion_mrr_in_cents,
        contraction_mrr_in_cents,
        churned_mrr_in_cents,
        reactivation_mrr_in_cents,
        active_subscriptions,
        active_customers,
        churned_customers,
        case when previous_active_customers > 0
            then cast(churned_customers as double precision) / previous_active_customers
        end as churn_rate,
        months.is_partial_month
    from aggregated
    inner join months
        on aggregated.date_month = months.date_month
)

select * from final
