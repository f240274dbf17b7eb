-- test: every paid payout reconciles: its lines add up to it and every sale and refund line has
-- its transaction, or (without lines) it equals what the payout rule assigns to it
{{ config(severity='warn') }}
with final as (
    select payout_id, site_id, currency, initiated_date, reconciliation_method, amount_in_cents,
        expected_amount_in_cents, difference_in_cents, unmatched_lines_count
    from {{ ref('payout_reconciliation') }}
    where status = 'paid'
        and not is_reconciled
)

select * from final
