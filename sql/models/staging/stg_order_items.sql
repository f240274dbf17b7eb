-- description: one row per order item; the order comes from the item or the order's link table
-- grain: order_item_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('order_items') }}),

links as (select * from {{ raw('orders_order_items') }}),

link_orders as (
    {{ least_parent('order_item_id', 'order_id', 'links') }}
),

final as (
    select
        {{ record_keys('order_item_id', 'source') }},
        coalesce(source.order_id, link_orders.order_id) as order_id,
        coalesce(source.quantity, 1) as quantity,
        upper(source.currency_code) as currency,
        source.item_type,
        source.item_id,
        source.title as item_title,
        source.fulfilled_at,
        source.created_at,
        coalesce(source.total_price_in_cents, 0) as total_in_cents,
        coalesce(source.subtotal_in_cents, 0) as subtotal_in_cents,
        coalesce(source.sales_tax_amount_in_cents, 0) as tax_in_cents,
        coalesce(source.discount_amount_in_cents, 0) as discount_in_cents
    from source
    left join link_orders
        on source.id = link_orders.order_item_id
)

select * from final
