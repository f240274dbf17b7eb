-- description: one row per order
-- grain: order_id
with source as (
    select * from {{ source('orders') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by id order by _extracted_at desc nulls last, _dlt_load_id desc nulls last
        ) as row_rank
    from source
),

final as (
    select
        cast(id as text) as order_id,
        site_id,
        customer_id,
        order_number,
        upper(currency_code) as currency,
        fulfilled_at,
        created_at,
        coalesce(total_price_in_cents, 0) as total_in_cents,
        coalesce(subtotal_in_cents, 0) as subtotal_in_cents,
        coalesce(sales_tax_amount_in_cents, 0) as tax_in_cents,
        coalesce(discount_amount_in_cents, 0) as discount_in_cents
    from ranked
    where row_rank = 1
)

select * from final
