-- description: one row per order
-- grain: order_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('orders') }}),

final as (
    select
        {{ record_keys('order_id') }},
        customer_id,
        order_number,
        upper(currency_code) as currency,
        fulfilled_at,
        created_at,
        coalesce(total_price_in_cents, 0) as total_in_cents,
        coalesce(subtotal_in_cents, 0) as subtotal_in_cents,
        coalesce(sales_tax_amount_in_cents, 0) as tax_in_cents,
        coalesce(discount_amount_in_cents, 0) as discount_in_cents
    from source
)

select * from final
