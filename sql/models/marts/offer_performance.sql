-- description: one row per offer and currency (including archived offers that still have
-- transactions), over the same days as revenue_daily (up to the as-of date): purchases,
-- customers, revenue credited to the offer (a bundled transaction split across its purchases:
-- int_transaction_offers), and MRR at the as-of month. Money no offer can be credited with (an
-- order's payment, a purchase not loaded) is one row per site and currency with an empty
-- offer_id (NULL; `offer_key` '(no offer)'), so that net revenue adds up to revenue_daily's per
-- currency (data test).
-- grain: site_id, offer_key, currency
with offers as (select * from {{ ref('stg_offers') }}),

transaction_offers as (select * from {{ ref('int_transaction_offers') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

subscription_months as (select * from {{ ref('int_subscription_months') }}),

offers_products as (select * from {{ ref('stg_offers_products') }}),

as_of as (select * from {{ ref('int_as_of') }}),

-- people the platform deleted: out of the people counts, their money kept
deleted_customers as (select * from {{ ref('int_deleted_customers') }}),

offer_sites as (
    -- an offer belongs to one site: its own, else the first its sales or purchases name
    select offer_id, min(site_id) as site_id
    from (
        select offer_id, site_id from offers
        union
        select offer_id, site_id from transaction_offers where offer_id is not null
        union
        select offer_id, site_id from purchases where offer_id is not null
    ) as named
    group by offer_id
),

credited as (
    -- the offer's share of each transaction up to the as-of date (revenue_daily's days)
    select transaction_offers.*
    from transaction_offers
    cross join as_of
    where transaction_offers.date_day <= as_of.as_of_date
),

revenue as (
    select
        coalesce(offer_sites.site_id, credited.site_id) as site_id,
        credited.offer_id,
        credited.currency,
        cast(sum(case when revenue_type = 'gross' then amount_in_cents else 0 end) as bigint)
            as gross_in_cents,
        cast(sum(case when revenue_type = 'refund' then amount_in_cents else 0 end) as bigint)
            as refunds_in_cents,
        cast(sum(case when revenue_type = 'dispute' then amount_in_cents else 0 end) as bigint)
            as disputes_in_cents,
        cast(sum(amount_in_cents) as bigint) as net_in_cents,
        count(distinct transaction_id) as transactions_count,
        count(distinct case when is_bundle then transaction_id end) as bundled_transactions_count
    from credited
    left join offer_sites
        on credited.offer_id = offer_sites.offer_id
    group by coalesce(offer_sites.site_id, credited.site_id), credited.offer_id, credited.currency
),

purchase_stats as (
    select
        offer_id,
        currency,
        count(*) as purchases_count,
        cast(sum(case when is_active then 1 else 0 end) as bigint) as active_purchases_count,
        -- people the platform deleted are out of the count; their purchases stay
        count(distinct case when deleted_customers.customer_id is null
            then purchases.customer_id end) as customers_count
    from purchases
    left join deleted_customers
        on purchases.customer_id = deleted_customers.customer_id
    where offer_id is not null
    group by offer_id, currency
),

current_mrr as (
    select
        subscription_months.offer_id,
        subscription_months.currency,
        cast(sum(subscription_months.mrr_in_cents) as bigint) as mrr_in_cents,
        count(*) as active_subscriptions
    from subscription_months
    inner join as_of
        on subscription_months.date_month
            = cast(date_trunc('month', as_of.as_of_date) as date)
    group by subscription_months.offer_id, subscription_months.currency
),

keys as (
    -- every offer in its own currency, and every (offer, currency) with money or purchases;
    -- the empty offer per site and currency where some money has no offer
    select offer_sites.site_id, offers.offer_id, offers.currency
    from offers
    inner join offer_sites
        on offers.offer_id = offer_sites.offer_id
    where offers.currency is not null
    union
    select site_id, offer_id, currency from revenue
    union
    select offer_sites.site_id, purchase_stats.offer_id, purchase_stats.currency
    from purchase_stats
    inner join offer_sites
        on purchase_stats.offer_id = offer_sites.offer_id
),

products as (
    select offer_id, count(*) as products_count
    from offers_products
    group by offer_id
),

final as (
    select
        keys.offer_id,
        coalesce(keys.offer_id, '(no offer)') as offer_key,
        keys.site_id,
        offers.offer_title,
        keys.currency,
        offers.price_in_cents,
        offers.payment_type,
        coalesce(offers.is_subscription, false) as is_subscription,
        offers.billing_interval,
        coalesce(offers.is_deleted, keys.offer_id is not null) as is_deleted,
        keys.offer_id is null as is_unattributed,
        cast(coalesce(purchase_stats.purchases_count, 0) as bigint) as purchases_count,
        cast(coalesce(purchase_stats.active_purchases_count, 0) as bigint) as active_purchases_count,
        cast(coalesce(purchase_stats.customers_count, 0) as bigint) as customers_count,
        cast(coalesce(revenue.gross_in_cents, 0) as bigint) as gross_revenue_in_cents,
        cast(coalesce(revenue.refunds_in_cents, 0) as bigint) as refunds_in_cents,
        cast(coalesce(revenue.disputes_in_cents, 0) as bigint) as disputes_in_cents,
        cast(coalesce(revenue.net_in_cents, 0) as bigint) as net_revenue_in_cents,
        cast(coalesce(revenue.transactions_count, 0) as bigint) as transactions_count,
        cast(coalesce(revenue.bundled_transactions_count, 0) as bigint)
            as bundled_transactions_count,
        cast(coalesce(current_mrr.mrr_in_cents, 0) as bigint) as mrr_in_cents,
        cast(coalesce(current_mrr.active_subscriptions, 0) as bigint) as active_subscriptions,
        cast(coalesce(products.products_count, 0) as bigint) as products_count
    from keys
    left join offers
        on keys.offer_id = offers.offer_id
    left join revenue
        on keys.site_id is not distinct from revenue.site_id
        and keys.offer_id is not distinct from revenue.offer_id
        and keys.currency = revenue.currency
    {{ left_joins('keys', ['purchase_stats', 'current_mrr'], ['offer_id', 'currency']) }}
    left join products
        on keys.offer_id = products.offer_id
)

select * from final
