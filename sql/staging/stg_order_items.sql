-- description: one row per order item; the order comes from the item or the order's link table
-- grain: order_item_id
with source as (
    select * from {{ source('order_items') }}
),

links as (
    select * from {{ source('orders_order_items') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by id order by _extracted_at desc nulls last, _dlt_load_id desc nulls last
        ) as row_rank
    from source
),

link_orders as (
    select
        order_item_id,
        min(order_id) as order_id
    from links
    group by order_item_id
),

final as (
    select
        cast(ranked.id as text) as order_item_id,
        ranked.site_id,
        coalesce(ranked.order_id, link_orders.order_id) as order_id,
        coalesce(ranked.quantity, 1) as quantity,
        upper(ranked.currency_code) as currency,
        ranked.item_type,
        ranked.item_id,
        ranked.title as item_title,
        ranked.fulfilled_at,
        ranked.created_at,
        coalesce(ranked.total_price_in_cents, 0) as total_in_cents,
        coalesce(ranked.subtotal_in_cents, 0) as subtotal_in_cents,
        coalesce(ranked.sales_tax_amount_in_cents, 0) as tax_in_cents,
        coalesce(ranked.discount_amount_in_cents, 0) as discount_in_cents
    from ranked
    left join link_orders
        on ranked.id = link_orders.order_item_id
    where ranked.row_rank = 1
)

select * from final
