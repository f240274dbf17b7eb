-- description: distinct (order_id, transaction_id) pairs of the orders_payment_transactions link
-- table: the transactions that paid an order, as webhook deliveries name them (lists do not)
-- grain: order_id, transaction_id
with source as (select * from {{ raw('orders_payment_transactions') }}),

final as (
    select
        order_id,
        transaction_id,
        min(site_id) as site_id
    from source
    where order_id is not null
        and transaction_id is not null
    group by order_id, transaction_id
)

select * from final
