-- description: whether the two inputs of every payout figure, payouts and transactions, are both
-- complete (data_coverage.is_complete), and if not, why. One row. The payout marts state no amount
-- (payout_scope, payout_reconciliation, unpaid_balance) and list no row (payout_transactions,
-- unpaid_transactions) unless both are: a payout judged on partial transactions, or a balance
-- without its payouts, would be wrong.
with coverage as (select * from {{ ref('data_coverage') }}),

final as (
    select
        count(*) = 0 as is_complete,
        string_agg(incomplete_reason, '; ' order by resource) as unavailable_reason
    from coverage
    where resource in ('payouts', 'transactions')
        and not is_complete
)

select * from final
