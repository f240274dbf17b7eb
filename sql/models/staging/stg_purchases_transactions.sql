-- description: distinct (purchase_id, transaction_id) pairs of the purchases_transactions link table
-- grain: purchase_id, transaction_id
with source as (select * from {{ raw('purchases_transactions') }}),

final as (
    select
        purchase_id,
        transaction_id,
        min(site_id) as site_id
    from source
    where purchase_id is not null
        and transaction_id is not null
    group by purchase_id, transaction_id
)

select * from final
