-- description: one row per payout; amount converted exactly from the API's decimal to cents
-- grain: payout_id
with payouts as (select * from {{ ref('stg_payouts') }}),

final as (
    select
        payout_id,
        site_id,
        currency,
        status,
        amount,
        amount_in_cents,
        is_whole_cents,
        initiated_at,
        cast(initiated_at at time zone 'UTC' as date) as initiated_date,
        estimated_arrival_at,
        cast(estimated_arrival_at at time zone 'UTC' as date) as estimated_arrival_date,
        bank_account,
        status = 'paid' as is_paid,
        {{ is_rolled_forward('status') }} as is_rolled_forward
    from payouts
)

select * from final
