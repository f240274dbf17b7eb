-- description: one row per listed transaction; money stays in integer cents, currencies upper-cased
-- grain: transaction_id
with source as (
    -- the latest extraction of each id (see models/render.py)
    select * from {{ latest('transactions') }}
),

final as (
    select
        cast(id as text) as transaction_id,
        site_id,
        customer_id,
        offer_id,
        provider,
        lower(action) as action,
        lower(state) as state,
        lower(payment_type) as payment_type,
        coalesce(amount_in_cents, 0) as amount_in_cents,
        coalesce(sales_tax_in_cents, 0) as sales_tax_in_cents,
        coalesce(payment_fee_in_cents, 0) as payment_fee_in_cents,
        upper(currency) as currency,
        settlement_amount_in_cents,
        settlement_fee_amount_in_cents,
        upper(settlement_currency) as settlement_currency,
        created_at
    from source
)

select * from final
