-- description: which settled transactions each payout carries under the payout rule
-- grain: payout_id, transaction_id
with windows as (select * from {{ ref('int_payout_windows') }}),

settlements as (select * from {{ ref('int_settlements') }}),

final as (
    select
        windows.payout_id,
        windows.status as payout_status,
        windows.initiated_date,
        windows.is_rolled_forward,
        settlements.transaction_id,
        settlements.site_id,
        settlements.currency,
        settlements.payable_date,
        settlements.settlement_fee_amount_in_cents,
        settlements.net_settlement_in_cents
    from windows
    inner join settlements
        on windows.site_id = settlements.site_id
        and windows.currency = settlements.currency
        and settlements.payable_date <= windows.initiated_date
        and settlements.payable_date
            > coalesce(windows.previous_carried_date, cast('1900-01-01' as date))
)

select * from final
