-- description: the subscription metrics of each site, currency and reporting month, as ChartMogul
-- defines them, from mrr_monthly: MRR and ARR, paying customers and ARPA, customer churn, gross
-- MRR churn, net and gross MRR retention (from the month's opening MRR; new business and
-- reactivation left out) and LTV; the as-of month flagged when partial
-- grain: site_id, currency, date_month
with mrr as (select * from {{ ref('mrr_monthly') }}),

rates as (
    select
        site_id,
        currency,
        date_month,
        mrr_in_cents,
        active_customers,
        is_partial_month,
        case when active_customers > 0
            then {{ floor_divide('mrr_in_cents * 2 + active_customers', 'active_customers * 2') }}
        end as arpa_in_cents,
        churn_rate as customer_churn_rate,
        case when previous_mrr_in_cents > 0
            then cast(-(churned_mrr_in_cents + contraction_mrr_in_cents) as double precision)
                / previous_mrr_in_cents
        end as gross_mrr_churn_rate,
        case when previous_mrr_in_cents > 0
            then cast(previous_mrr_in_cents + expansion_mrr_in_cents + contraction_mrr_in_cents
                + churned_mrr_in_cents as double precision) / previous_mrr_in_cents
        end as net_mrr_retention,
        case when previous_mrr_in_cents > 0
            then cast(previous_mrr_in_cents + contraction_mrr_in_cents + churned_mrr_in_cents
                as double precision) / previous_mrr_in_cents
        end as gross_mrr_retention
    from mrr
),

smoothed as (
    -- LTV divides by the customer churn rate averaged over the six months before the month
    -- (ChartMogul's trailing average), so that one month's churn does not swing it
    select
        rates.*,
        avg(customer_churn_rate) over (
            partition by site_id, currency order by date_month
            rows between 6 preceding and 1 preceding
        ) as trailing_customer_churn_rate
    from rates
),

final as (
    select
        site_id,
        currency,
        date_month,
        cast(mrr_in_cents as bigint) as mrr_in_cents,
        cast(12 * mrr_in_cents as bigint) as arr_in_cents,
        cast(active_customers as bigint) as paying_customers,
        cast(arpa_in_cents as bigint) as arpa_in_cents,
        customer_churn_rate,
        gross_mrr_churn_rate,
        net_mrr_retention,
        gross_mrr_retention,
        trailing_customer_churn_rate,
        case when trailing_customer_churn_rate > 0
            then cast(floor(arpa_in_cents / trailing_customer_churn_rate + 0.5) as bigint)
        end as ltv_in_cents,
        is_partial_month
    from smoothed
)

select * from final
