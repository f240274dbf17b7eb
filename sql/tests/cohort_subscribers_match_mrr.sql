-- test: customer_cohorts' active subscribers, summed over every cohort, are the customers holding
-- a subscription with MRR at each month's snapshot (int_subscriber_mrr_months): no member lost
-- to a cohort that starts after their subscription, none counted twice (people the platform
-- deleted are left out of both counts)
with cohorts as (
    select
        date_month,
        sum(active_subscribers) as cohort_subscribers
    from {{ ref('customer_cohorts') }}
    group by date_month
),

subscribers as (
    select
        subscriber_months.date_month,
        count(distinct subscriber_months.subscriber_id) as mrr_subscribers
    from {{ ref('int_subscriber_mrr_months') }} as subscriber_months
    inner join {{ ref('int_subscriptions') }} as subscriptions
        on subscriber_months.subscriber_id = subscriptions.customer_id
    left join {{ ref('stg_customers') }} as customers
        on subscriber_months.subscriber_id = customers.customer_id
    where subscriber_months.mrr_in_cents > 0
        and not coalesce(customers.is_deleted, false)
    group by subscriber_months.date_month
),

final as (
    select
        coalesce(cohorts.date_month, subscribers.date_month) as date_month,
        cohorts.cohort_subscribers,
        subscribers.mrr_subscribers
    from cohorts
    full outer join subscribers
        on cohorts.date_month = subscribers.date_month
    where coalesce(cohorts.cohort_subscribers, 0) <> coalesce(subscribers.mrr_subscribers, 0)
)

select * from final
