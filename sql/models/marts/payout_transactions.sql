-- description: one row per (payout, transaction): what each payout carries under the payout
-- rule. A failed/canceled payout keeps its rows (is_rolled_forward) and the same transactions
-- appear again under the payout that carried them on. No rows unless payouts and transactions
-- are both complete (data_coverage.is_complete): the rule's windows and the transactions in them
-- would be partial; payout_reconciliation.verdict_unavailable_reason says what is missing.
-- grain: payout_id, transaction_id
with assignments as (select * from {{ ref('int_payout_assignments') }}),

settlements as (select * from {{ ref('int_settlements') }}),

inputs as (select * from {{ ref('int_payout_inputs') }}),

final as (
    select
        assignments.payout_id,
        assignments.transaction_id,
        assignments.site_id,
        assignments.currency,
        assignments.payout_status,
        assignments.is_rolled_forward,
        settlements.action,
        settlements.created_at as transaction_created_at,
        settlements.payable_date,
        settlements.transaction_currency,
        settlements.amount_in_cents,
        settlements.settlement_amount_in_cents,
        settlements.settlement_fee_amount_in_cents,
        settlements.net_settlement_in_cents
    from assignments
    inner join settlements
        on assignments.transaction_id = settlements.transaction_id
    cross join inputs
    where inputs.is_complete
)

select * from final
