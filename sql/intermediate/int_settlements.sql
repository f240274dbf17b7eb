-- description: the net settlement of every platform-payments transaction and the UTC day it
-- becomes payable: date_utc(created_at) + settlement delay (the sandbox's payout rule)
-- grain: transaction_id
with transactions as (
    select * from {{ ref('int_transactions') }}
),

final as (
    select
        transaction_id,
        site_id,
        coalesce(settlement_currency, 'USD') as currency,
        created_at,
        action,
        amount_in_cents,
        currency as transaction_currency,
        settlement_amount_in_cents,
        coalesce(settlement_fee_amount_in_cents, 0) as settlement_fee_amount_in_cents,
        settlement_amount_in_cents - coalesce(settlement_fee_amount_in_cents, 0)
            as net_settlement_in_cents,
        cast(cast(created_at at time zone 'UTC' as date) + {{ var('settlement_delay_days') }} as date)
            as payable_date
    from transactions
    where settlement_amount_in_cents is not null
)

select * from final
