-- test: every paid payout equals the net settlement of the transactions the payout rule assigns to it
-- severity: warn
with final as (
    select payout_id, site_id, currency, initiated_date, amount_in_cents,
        expected_amount_in_cents, difference_in_cents
    from {{ ref('payout_reconciliation') }}
    where status = 'paid'
        and not is_reconciled
)

select * from final
