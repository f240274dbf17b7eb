-- description: one row per site, currency, first-purchase month and month number (0 = the
-- first month) up to the as-of month: cohort members who paid in the month, members holding an
-- active subscription at the month's snapshot (as mrr_monthly counts them), and the cohort's net
-- revenue; the as-of month flagged when partial
-- grain: site_id, currency, cohort_month, month_number
with transactions as (select * from {{ ref('int_transactions') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

months as (select * from {{ ref('int_month_spine') }}),

subscriber_months as (select * from {{ ref('int_subscriber_mrr_months') }}),

-- people the platform deleted: out of the people counts, their money kept
deleted_customers as (select * from {{ ref('int_deleted_customers') }}),

firsts as (
    select
        site_id,
        customer_id,
        currency,
        cast(date_trunc('month', cast(created_at at time zone {{ setting('timezone') }} as date)) as date)
            as first_month
    from purchases
    where customer_id is not null
    union all
    -- a subscription that took effect before its purchase was recorded starts the customer then
    select
        site_id,
        customer_id,
        currency,
        cast(date_trunc('month', cast(started_at at time zone {{ setting('timezone') }} as date)) as date)
    from purchases
    where customer_id is not null
    union all
    select site_id, customer_id, currency, date_month
    from transactions
    where customer_id is not null and revenue_type = 'gross'
),

customer_currency as (
    -- a customer buys in one currency; their transactions say which
    select customer_id, min(currency) as currency
    from transactions
    where customer_id is not null
    group by customer_id
),

members as (
    select
        min(firsts.site_id) as site_id,
        firsts.customer_id,
        coalesce(min(customer_currency.currency), min(firsts.currency), 'XXX') as currency,
        min(firsts.first_month) as cohort_month
    from firsts
    left join customer_currency
        on firsts.customer_id = customer_currency.customer_id
    group by firsts.customer_id
),

cohorts as (
    select
        site_id, currency, cohort_month,
        count(case when deleted_customers.customer_id is null then 1 end) as cohort_customers
    from members
    left join deleted_customers
        on members.customer_id = deleted_customers.customer_id
    group by site_id, currency, cohort_month
),

activity as (
    select
        members.site_id,
        members.currency,
        members.cohort_month,
        transactions.date_month,
        count(distinct case when transactions.gross_in_cents > 0
            and deleted_customers.customer_id is null then members.customer_id end)
            as retained_customers,
        cast(sum(transactions.amount_in_cents) as bigint) as revenue_in_cents
    from members
    inner join transactions
        on members.customer_id = transactions.customer_id
    left join deleted_customers
        on members.customer_id = deleted_customers.customer_id
    group by members.site_id, members.currency, members.cohort_month, transactions.date_month
),

subscribed as (
    -- members holding an active subscription with MRR at the month's snapshot
    select
        members.site_id,
        members.currency,
        members.cohort_month,
        subscriber_months.date_month,
        count(distinct members.customer_id) as active_subscribers
    from members
    inner join subscriber_months
        on members.customer_id = subscriber_months.subscriber_id
    left join deleted_customers
        on members.customer_id = deleted_customers.customer_id
    where subscriber_months.mrr_in_cents > 0
        and deleted_customers.customer_id is null
    group by members.site_id, members.currency, members.cohort_month, subscriber_months.date_month
),

grid as (
    select
        cohorts.site_id,
        cohorts.currency,
        cohorts.cohort_month,
        cohorts.cohort_customers,
        months.date_month,
        months.month_index - cohort_index.month_index as month_number,
        months.is_partial_month
    from cohorts
    inner join months as cohort_index
        on cohorts.cohort_month = cohort_index.date_month
    inner join months
        on months.date_month >= cohorts.cohort_month
),

final as (
    select
        grid.site_id,
        grid.currency,
        grid.cohort_month,
        grid.month_number,
        grid.date_month,
        cast(grid.cohort_customers as bigint) as cohort_customers,
        cast(coalesce(activity.retained_customers, 0) as bigint) as retained_customers,
        cast(coalesce(activity.retained_customers, 0) as double precision) / grid.cohort_customers
            as retention_rate,
        cast(coalesce(activity.revenue_in_cents, 0) as bigint) as revenue_in_cents,
        cast(sum(coalesce(activity.revenue_in_cents, 0)) over (
            partition by grid.site_id, grid.currency, grid.cohort_month
            order by grid.month_number
            rows between unbounded preceding and current row
        ) as bigint) as cumulative_revenue_in_cents,
        cast(coalesce(subscribed.active_subscribers, 0) as bigint) as active_subscribers,
        cast(coalesce(subscribed.active_subscribers, 0) as double precision) / grid.cohort_customers
            as subscriber_retention_rate,
        grid.is_partial_month
    from grid
    left join activity
        on {{ columns_equal('grid', 'activity', ['site_id', 'currency', 'cohort_month', 'date_month']) }}
    left join subscribed
        on {{ columns_equal('grid', 'subscribed', ['site_id', 'currency', 'cohort_month', 'date_month']) }}
)

select * from final
