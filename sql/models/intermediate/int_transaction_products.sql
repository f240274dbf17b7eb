-- description: each listed transaction's money credited to the offers and products it paid
-- for, to the cent. First to what it paid: its purchases, as int_transaction_offers splits it
-- (by the purchases' amounts), or, for an order's payment (int_transaction_orders), the order's
-- items by their totals (evenly when any total is not positive); an item names a product, or
-- an offer. Then a purchase's or an offered item's share goes to its products evenly: the
-- products the purchase grants (purchases_products), else the offer's (offers_products). Every
-- split is cumulative in integer cents (rounded down on the absolute amount), so the parts add
-- up to the transaction's amount and revenue excl. tax exactly. Money no product stands behind
-- keeps product_id NULL (`credit_rule` says why).
-- grain: transaction_id, part_number
{%- set seller_keys = ['transaction_id', 'purchase_id', 'order_id', 'order_item_id', 'offer_id'] %}
with transactions as (select * from {{ ref('int_transactions') }}),

transaction_offers as (select * from {{ ref('int_transaction_offers') }}),

transaction_orders as (select * from {{ ref('int_transaction_orders') }}),

order_items as (select * from {{ ref('stg_order_items') }}),

purchases_products as (select * from {{ ref('stg_purchases_products') }}),

offers_products as (select * from {{ ref('stg_offers_products') }}),

purchase_parts as (
    -- what int_transaction_offers credits, except an order's payment (split by its items below)
    select
        transaction_offers.transaction_id,
        transaction_offers.purchase_id,
        cast(null as text) as order_id,
        cast(null as text) as order_item_id,
        transaction_offers.offer_id,
        cast(null as text) as product_id,
        transaction_offers.amount_in_cents,
        transaction_offers.revenue_ex_tax_in_cents
    from transaction_offers
    left join transaction_orders
        on transaction_offers.transaction_id = transaction_orders.transaction_id
    where transaction_orders.transaction_id is null
),

items as (
    select
        transaction_orders.transaction_id,
        transaction_orders.order_id,
        order_items.order_item_id,
        lower(order_items.item_type) as item_type,
        cast(order_items.item_id as text) as item_id,
        order_items.total_in_cents
    from transaction_orders
    inner join order_items
        on transaction_orders.order_id = order_items.order_id
),

item_weights as (
    select
        *,
        cast(case
            when min(case when total_in_cents > 0 then 1 else 0 end)
                over (partition by transaction_id) = 1 then total_in_cents
            else 1
        end as bigint) as weight
    from items
),

item_cumulative as (
    select
        *,
        sum(weight) over (
            partition by transaction_id order by order_item_id
            rows between unbounded preceding and current row
        ) as weight_through,
        sum(weight) over (partition by transaction_id) as weight_total
    from item_weights
),

item_parts as (
    select
        item_cumulative.transaction_id,
        cast(null as text) as purchase_id,
        item_cumulative.order_id,
        item_cumulative.order_item_id,
        case when item_cumulative.item_type = 'offer' then item_cumulative.item_id end as offer_id,
        case when item_cumulative.item_type = 'product' then item_cumulative.item_id end
            as product_id,
        {{ split_money('transactions', 'item_cumulative') }}
    from item_cumulative
    inner join transactions
        on item_cumulative.transaction_id = transactions.transaction_id
),

orders_without_items as (
    -- a matched order whose items were not loaded: its payment credits no product
    select
        transaction_orders.transaction_id,
        cast(null as text) as purchase_id,
        transaction_orders.order_id,
        cast(null as text) as order_item_id,
        cast(null as text) as offer_id,
        cast(null as text) as product_id,
        transactions.amount_in_cents,
        transactions.revenue_ex_tax_in_cents
    from transaction_orders
    inner join transactions
        on transaction_orders.transaction_id = transactions.transaction_id
    left join items
        on transaction_orders.transaction_id = items.transaction_id
    where items.transaction_id is null
),

sellers as (
    select *, row_number() over (
        partition by transaction_id order by purchase_id, order_item_id
    ) as seller_number
    from (
        select * from purchase_parts
        union all
        select * from item_parts
        union all
        select * from orders_without_items
    ) as parts
),

granted as (
    -- the products behind a seller without one: its purchase's, else its offer's
    select
        sellers.transaction_id,
        sellers.seller_number,
        purchases_products.product_id,
        'purchase_products' as credit_rule
    from sellers
    inner join purchases_products
        on sellers.purchase_id = purchases_products.purchase_id
    where sellers.product_id is null
    union all
    select
        sellers.transaction_id,
        sellers.seller_number,
        offers_products.product_id,
        'offer_products' as credit_rule
    from sellers
    inner join offers_products
        on sellers.offer_id = offers_products.offer_id
    where sellers.product_id is null
        and not exists (
            select 1 from purchases_products
            where purchases_products.purchase_id = sellers.purchase_id
        )
),

granted_cumulative as (
    select
        *,
        cast(row_number() over (
            partition by transaction_id, seller_number order by product_id
        ) as bigint) as weight_through,
        cast(count(*) over (partition by transaction_id, seller_number) as bigint) as weight_total
    from granted
),

product_parts as (
    select
        {{ qualified('sellers', seller_keys) }},
        granted_cumulative.product_id,
        granted_cumulative.credit_rule,
        {{ split_money('sellers', 'granted_cumulative', weight='1') }}
    from sellers
    inner join granted_cumulative
        on {{ columns_equal('sellers', 'granted_cumulative', ['transaction_id', 'seller_number']) }}
),

direct_parts as (
    -- a seller that is a product itself, or has no product at all
    select
        {{ qualified('sellers', seller_keys + ['product_id']) }},
        case
            when sellers.product_id is not null then 'order_item'
            when sellers.order_id is not null and sellers.order_item_id is null
                then 'order_without_items'
            when sellers.order_item_id is not null and sellers.offer_id is not null
                then 'offer_without_products'
            when sellers.order_item_id is not null then 'item_without_product'
            when sellers.purchase_id is not null then 'purchase_without_products'
            when sellers.offer_id is not null then 'offer_without_products'
            else 'unattributed'
        end as credit_rule,
        sellers.amount_in_cents,
        sellers.revenue_ex_tax_in_cents
    from sellers
    left join (
        select distinct transaction_id, seller_number from granted
    ) as has_products
        on {{ columns_equal('sellers', 'has_products', ['transaction_id', 'seller_number']) }}
    where has_products.transaction_id is null
),

parts as (
    select * from product_parts
    union all
    select * from direct_parts
),

final as (
    select
        parts.transaction_id,
        cast(row_number() over (
            partition by parts.transaction_id
            order by parts.purchase_id, parts.order_item_id, parts.product_id
        ) as bigint) as part_number,
        transactions.site_id,
        transactions.currency,
        transactions.date_day,
        transactions.date_month,
        transactions.revenue_type,
        parts.purchase_id,
        parts.order_id,
        parts.order_item_id,
        parts.offer_id,
        parts.product_id,
        parts.credit_rule,
        parts.amount_in_cents,
        parts.revenue_ex_tax_in_cents
    from parts
    inner join transactions
        on parts.transaction_id = transactions.transaction_id
)

select * from final
