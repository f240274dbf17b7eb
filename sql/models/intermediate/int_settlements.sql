-- description: the net settlement of every platform-payments transaction and the UTC day it
-- becomes payable: date_utc(created_at) + its site's settlement delay (int_settlement_delays)
-- grain: transaction_id
with transactions as (select * from {{ ref('int_transactions') }}),

delays as (select * from {{ ref('int_settlement_delays') }}),

delayed as (
    -- a transaction without a site has no lines to show a delay: the override, else the default
    select
        transactions.*,
        cast(coalesce(
            delays.settlement_delay_days,
            {{ setting('settlement_delay_override_days') }},
            {{ setting('default_settlement_delay_days') }}
        ) as integer) as settlement_delay_days
    from transactions
    left join delays
        on transactions.site_id = delays.site_id
    where transactions.settlement_amount_in_cents is not null
),

final as (
    select
        transaction_id,
        site_id,
        coalesce(settlement_currency, 'USD') as currency,
        customer_id,
        provider,
        created_at,
        action,
        amount_in_cents,
        currency as transaction_currency,
        settlement_amount_in_cents,
        coalesce(settlement_fee_amount_in_cents, 0) as settlement_fee_amount_in_cents,
        settlement_amount_in_cents - coalesce(settlement_fee_amount_in_cents, 0)
            as net_settlement_in_cents,
        cast(settlement_delay_days as bigint) as settlement_delay_days,
        cast(cast(created_at at time zone 'UTC' as date) + settlement_delay_days as date)
            as payable_date
    from delayed
)

select * from final
