-- description: one row per subscriber (customer) and month from their first paying month to the
-- as-of month, with the movement that month: MRR is classified per customer, as ChartMogul does
-- grain: site_id, currency, subscriber_id, date_month
with subscription_months as (select * from {{ ref('int_subscription_months') }}),

months as (select * from {{ ref('int_month_spine') }}),

subscriber_months as (
    select
        site_id,
        currency,
        subscriber_id,
        date_month,
        cast(sum(mrr_in_cents) as bigint) as mrr_in_cents,
        count(*) as active_subscriptions
    from subscription_months
    group by site_id, currency, subscriber_id, date_month
),

first_months as (
    select
        site_id,
        currency,
        subscriber_id,
        min(date_month) as first_month
    from subscriber_months
    where mrr_in_cents > 0
    group by site_id, currency, subscriber_id
),

grid as (
    select
        first_months.site_id,
        first_months.currency,
        first_months.subscriber_id,
        first_months.first_month,
        months.date_month
    from first_months
    inner join months
        on months.date_month >= first_months.first_month
),

filled as (
    select
        grid.site_id,
        grid.currency,
        grid.subscriber_id,
        grid.first_month,
        grid.date_month,
        coalesce(subscriber_months.mrr_in_cents, 0) as mrr_in_cents,
        coalesce(subscriber_months.active_subscriptions, 0) as active_subscriptions
    from grid
    left join subscriber_months
        on {{ columns_equal('grid', 'subscriber_months', ['site_id', 'currency', 'subscriber_id', 'date_month']) }}
),

with_previous as (
    select
        *,
        coalesce(lag(mrr_in_cents) over (
            partition by site_id, currency, subscriber_id order by date_month
        ), 0) as previous_mrr_in_cents
    from filled
),

final as (
    select
        site_id,
        currency,
        subscriber_id,
        date_month,
        mrr_in_cents,
        previous_mrr_in_cents,
        active_subscriptions,
        case when previous_mrr_in_cents = 0 and mrr_in_cents > 0 and date_month = first_month
            then mrr_in_cents else 0 end as new_mrr_in_cents,
        case when previous_mrr_in_cents = 0 and mrr_in_cents > 0 and date_month > first_month
            then mrr_in_cents else 0 end as reactivation_mrr_in_cents,
        case when previous_mrr_in_cents > 0 and mrr_in_cents > previous_mrr_in_cents
            then mrr_in_cents - previous_mrr_in_cents else 0 end as expansion_mrr_in_cents,
        case when previous_mrr_in_cents > 0 and mrr_in_cents > 0 and mrr_in_cents < previous_mrr_in_cents
            then mrr_in_cents - previous_mrr_in_cents else 0 end as contraction_mrr_in_cents,
        case when previous_mrr_in_cents > 0 and mrr_in_cents = 0
            then -previous_mrr_in_cents else 0 end as churned_mrr_in_cents
    from with_previous
)

select * from final
