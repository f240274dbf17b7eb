-- description: one row per purchase; started_at falls back to created_at
-- grain: purchase_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('purchases') }}),

final as (
    select
        {{ record_keys('purchase_id') }},
        customer_id,
        offer_id,
        amount_in_cents,
        upper(currency) as currency,
        replace(lower(trim(payment_type)), ' ', '_') as payment_type,
        multipay_payments_made,
        quantity,
        coupon_code,
        coalesce(effective_start_at, created_at) as started_at,
        deactivated_at,
        deactivation_reason,
        deactivated_at is null as is_active,
        created_at,
        updated_at
    from source
)

select * from final
