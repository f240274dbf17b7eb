-- description: one row per customer: lifetime net revenue recomputed from the listed
-- transactions beside the API's net_revenue, purchases, subscriptions and what they own
-- grain: customer_id
with customers as (select * from {{ ref('stg_customers') }}),

transactions as (select * from {{ ref('int_transactions') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

subscriptions as (select * from {{ ref('int_subscriptions') }}),

customers_offers as (select * from {{ ref('stg_customers_offers') }}),

customers_products as (select * from {{ ref('stg_customers_products') }}),

purchases_products as (select * from {{ ref('stg_purchases_products') }}),

orders as (select * from {{ ref('stg_orders') }}),

revenue as (
    select
        customer_id,
        min(currency) as currency,
        count(distinct currency) as currencies_count,
        cast(sum(amount_in_cents) as bigint) as lifetime_net_revenue_in_cents,
        cast(sum(gross_in_cents) as bigint) as lifetime_gross_in_cents,
        cast(sum(refunds_in_cents) + sum(disputes_in_cents) as bigint)
            as lifetime_refunds_and_disputes_in_cents,
        count(*) as transactions_count
    from transactions
    where customer_id is not null
    group by customer_id
),

purchase_stats as (
    select
        customer_id,
        min(currency) as currency,
        count(*) as purchases_count,
        min(created_at) as first_purchase_at,
        max(created_at) as last_purchase_at
    from purchases
    where customer_id is not null
    group by customer_id
),

active_subscriptions as (
    select
        customer_id,
        count(*) as active_subscriptions
    from subscriptions
    where deactivated_at is null
        and customer_id is not null
    group by customer_id
),

owned_offers as (
    -- the list endpoint may send the customer's offers as a link only: purchases fill the gap
    select customer_id, count(distinct offer_id) as offers_count
    from (
        select customer_id, offer_id from customers_offers
        union
        select customer_id, offer_id from purchases
        where customer_id is not null and offer_id is not null
    ) as owned
    group by customer_id
),

owned_products as (
    select customer_id, count(distinct product_id) as products_count
    from (
        select customer_id, product_id from customers_products
        union
        select purchases.customer_id, purchases_products.product_id
        from purchases_products
        inner join purchases
            on purchases_products.purchase_id = purchases.purchase_id
        where purchases.customer_id is not null
    ) as owned
    group by customer_id
),

order_stats as (
    select customer_id, count(*) as orders_count
    from orders
    where customer_id is not null
    group by customer_id
),

final as (
    select
        customers.customer_id,
        customers.site_id,
        customers.customer_name,
        customers.email,
        customers.created_at,
        coalesce(revenue.currency, purchase_stats.currency) as currency,
        coalesce(revenue.currencies_count, 0) as currencies_count,
        coalesce(revenue.lifetime_gross_in_cents, 0) as lifetime_gross_in_cents,
        coalesce(revenue.lifetime_refunds_and_disputes_in_cents, 0)
            as lifetime_refunds_and_disputes_in_cents,
        coalesce(revenue.lifetime_net_revenue_in_cents, 0) as lifetime_net_revenue_in_cents,
        customers.api_net_revenue,
        customers.api_net_revenue_in_cents,
        customers.api_net_revenue_in_cents - coalesce(revenue.lifetime_net_revenue_in_cents, 0)
            as net_revenue_difference_in_cents,
        coalesce(revenue.transactions_count, 0) as transactions_count,
        purchase_stats.first_purchase_at,
        purchase_stats.last_purchase_at,
        coalesce(purchase_stats.purchases_count, 0) as purchases_count,
        coalesce(active_subscriptions.active_subscriptions, 0) as active_subscriptions,
        coalesce(owned_offers.offers_count, 0) as offers_count,
        coalesce(owned_products.products_count, 0) as products_count,
        coalesce(order_stats.orders_count, 0) as orders_count,
        customers.is_deleted
    from customers
    {{ left_joins('customers', ['revenue', 'purchase_stats', 'active_subscriptions', 'owned_offers',
        'owned_products', 'order_stats'], 'customer_id') }}
)

select * from final
