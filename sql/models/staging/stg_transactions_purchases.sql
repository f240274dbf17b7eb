-- description: distinct (transaction_id, purchase_id) pairs of the transactions_purchases link
-- table: the purchases a transaction pays (addendum A8; several for a bundled transaction)
-- grain: transaction_id, purchase_id
with source as (select * from {{ raw('transactions_purchases') }}),

final as (
    select
        transaction_id,
        purchase_id,
        min(site_id) as site_id
    from source
    where transaction_id is not null
        and purchase_id is not null
    group by transaction_id, purchase_id
)

select * from final
