-- test: every payout with lines equals the sum of its lines' net, to the cent (addendum A3: that
-- is how the platform accounts for a payout)
{{ config(severity='warn') }}
with final as (
    select payout_id, site_id, status, amount_in_cents, lines_count, itemised_net_in_cents,
        itemisation_difference_in_cents
    from {{ ref('payout_reconciliation') }}
    where lines_count > 0
        and itemisation_difference_in_cents <> 0
)

select * from final
