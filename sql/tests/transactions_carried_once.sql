-- test: a transaction is carried by at most one payout that was not failed or canceled
with final as (
    select transaction_id, count(*) as carried_by
    from {{ ref('payout_transactions') }}
    where not is_rolled_forward
    group by transaction_id
    having count(*) > 1
)

select * from final
