-- test: each payout's transactions under the payout rule add up to its rule figures
with items as (
    select payout_id, sum(net_settlement_in_cents) as net_in_cents, count(*) as items_count
    from {{ ref('payout_transactions') }}
    group by payout_id
),

final as (
    select reconciliation.payout_id, reconciliation.rule_expected_in_cents, items.net_in_cents,
        reconciliation.rule_transactions_count, items.items_count
    from {{ ref('payout_reconciliation') }} as reconciliation
    left join items
        on reconciliation.payout_id = items.payout_id
    where reconciliation.rule_expected_in_cents <> coalesce(items.net_in_cents, 0)
        or reconciliation.rule_transactions_count <> coalesce(items.items_count, 0)
)

select * from final
