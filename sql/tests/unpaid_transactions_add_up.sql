-- test: the transactions awaiting a payout add up, per site and settlement currency, to
-- unpaid_balance.awaiting_payout_in_cents; none of them is carried by a payout
with unpaid as (
    select site_id, currency, sum(net_settlement_in_cents) as net_in_cents
    from {{ ref('unpaid_transactions') }}
    group by site_id, currency
),

carried as (
    select unpaid.transaction_id
    from {{ ref('unpaid_transactions') }} as unpaid
    inner join {{ ref('fct_payout_lines') }} as lines
        on unpaid.transaction_id = lines.transaction_id
    where not lines.is_rolled_forward
        and lines.payout_initiated_date <= unpaid.as_of_date
),

final as (
    select balance.site_id, balance.currency, balance.awaiting_payout_in_cents,
        unpaid.net_in_cents, cast(null as text) as transaction_id
    from {{ ref('unpaid_balance') }} as balance
    left join unpaid
        on balance.site_id = unpaid.site_id
        and balance.currency = unpaid.currency
    where balance.awaiting_payout_in_cents <> coalesce(unpaid.net_in_cents, 0)
    union all
    select cast(null as text), cast(null as text), cast(null as bigint), cast(null as bigint),
        transaction_id
    from carried
)

select * from final
