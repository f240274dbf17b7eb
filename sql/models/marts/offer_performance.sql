-- description: one row per offer (including archived offers that still have transactions):
-- purchases, customers, revenue in the offer's currency, and MRR at the as-of month
-- grain: offer_id
with offers as (
    select * from {{ ref('stg_offers') }}
),

transactions as (
    select * from {{ ref('int_transactions') }}
),

purchases as (
    select * from {{ ref('stg_purchases') }}
),

subscription_months as (
    select * from {{ ref('int_subscription_months') }}
),

offers_products as (
    select * from {{ ref('stg_offers_products') }}
),

as_of as (
    select * from {{ ref('int_as_of') }}
),

offer_keys as (
    select offer_id, site_id from offers
    union
    select offer_id, min(site_id) from transactions where offer_id is not null group by offer_id
    union
    select offer_id, min(site_id) from purchases where offer_id is not null group by offer_id
),

all_offers as (
    select offer_id, min(site_id) as site_id
    from offer_keys
    group by offer_id
),

revenue as (
    select
        offer_id,
        min(currency) as currency,
        cast(sum(gross_in_cents) as bigint) as gross_in_cents,
        cast(sum(refunds_in_cents) as bigint) as refunds_in_cents,
        cast(sum(disputes_in_cents) as bigint) as disputes_in_cents,
        cast(sum(amount_in_cents) as bigint) as net_in_cents,
        count(*) as transactions_count
    from transactions
    where offer_id is not null
    group by offer_id
),

purchase_stats as (
    select
        offer_id,
        count(*) as purchases_count,
        cast(sum(case when is_active then 1 else 0 end) as bigint) as active_purchases_count,
        count(distinct customer_id) as customers_count
    from purchases
    where offer_id is not null
    group by offer_id
),

current_mrr as (
    select
        subscription_months.offer_id,
        cast(sum(subscription_months.mrr_in_cents) as bigint) as mrr_in_cents,
        count(*) as active_subscriptions
    from subscription_months
    inner join as_of
        on subscription_months.date_month
            = cast(date_trunc('month', as_of.as_of_date) as date)
    group by subscription_months.offer_id
),

products as (
    select offer_id, count(*) as products_count
    from offers_products
    group by offer_id
),

final as (
    select
        all_offers.offer_id,
        all_offers.site_id,
        offers.offer_title,
        coalesce(offers.currency, revenue.currency) as currency,
        offers.price_in_cents,
        offers.payment_type,
        coalesce(offers.is_subscription, false) as is_subscription,
        offers.billing_interval,
        coalesce(offers.is_deleted, offers.offer_id is null) as is_deleted,
        cast(coalesce(purchase_stats.purchases_count, 0) as bigint) as purchases_count,
        cast(coalesce(purchase_stats.active_purchases_count, 0) as bigint) as active_purchases_count,
        cast(coalesce(purchase_stats.customers_count, 0) as bigint) as customers_count,
        cast(coalesce(revenue.gross_in_cents, 0) as bigint) as gross_revenue_in_cents,
        cast(coalesce(revenue.refunds_in_cents, 0) as bigint) as refunds_in_cents,
        cast(coalesce(revenue.disputes_in_cents, 0) as bigint) as disputes_in_cents,
        cast(coalesce(revenue.net_in_cents, 0) as bigint) as net_revenue_in_cents,
        cast(coalesce(revenue.transactions_count, 0) as bigint) as transactions_count,
        cast(coalesce(current_mrr.mrr_in_cents, 0) as bigint) as mrr_in_cents,
        cast(coalesce(current_mrr.active_subscriptions, 0) as bigint) as active_subscriptions,
        cast(coalesce(products.products_count, 0) as bigint) as products_count
    from all_offers
    left join offers
        on all_offers.offer_id = offers.offer_id
    left join revenue
        on all_offers.offer_id = revenue.offer_id
    left join purchase_stats
        on all_offers.offer_id = purchase_stats.offer_id
    left join current_mrr
        on all_offers.offer_id = current_mrr.offer_id
    left join products
        on all_offers.offer_id = products.offer_id
)

select * from final
