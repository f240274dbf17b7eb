-- description: the order each order payment paid. A transaction pays an order when the order's
-- webhook named it (orders_payment_transactions, `link`); else a charge that pays no purchase
-- is matched to an order of the same site, customer and currency whose total equals its amount,
-- created in the same UTC minute (`customer_amount_minute`: the platform creates the order and
-- its payment together). One to one: within such a group, orders and transactions pair in order
-- of time, then id; one left over stays unmatched. One row per matched transaction.
-- grain: transaction_id
{%- set match_keys = ['site_id', 'customer_id', 'currency'] %}
with transactions as (select * from {{ ref('int_transactions') }}),

orders as (select * from {{ ref('stg_orders') }}),

order_links as (select * from {{ ref('stg_orders_payment_transactions') }}),

purchases_transactions as (select * from {{ ref('stg_purchases_transactions') }}),

transactions_purchases as (select * from {{ ref('stg_transactions_purchases') }}),

purchase_links as (
    {{ edges(['transaction_id'], 'purchases_transactions', 'transactions_purchases') }}
),

listed_order_links as (
    select order_links.transaction_id, order_links.order_id
    from order_links
    inner join transactions
        on order_links.transaction_id = transactions.transaction_id
),

linked as (
    {{ least_parent('transaction_id', 'order_id', 'listed_order_links') }}
),

candidates as (
    -- charges that pay no purchase and no linked order
    select
        {{ qualified('transactions',
            ['transaction_id'] + match_keys + ['amount_in_cents', 'created_at']) }},
        date_trunc('minute', transactions.created_at) as created_minute
    from transactions
    {{ left_joins('transactions', ['purchase_links', 'linked'], 'transaction_id') }}
    where purchase_links.transaction_id is null
        and linked.transaction_id is null
        and transactions.revenue_type = 'gross'
        and transactions.customer_id is not null
),

open_orders as (
    select
        {{ qualified('orders', ['order_id'] + match_keys + ['total_in_cents', 'created_at']) }},
        date_trunc('minute', orders.created_at) as created_minute
    from orders
    left join order_links
        on orders.order_id = order_links.order_id
    where order_links.order_id is null
        and orders.customer_id is not null
),

ranked_transactions as (
    select
        *,
        row_number() over (
            partition by {{ match_keys | join(', ') }}, amount_in_cents, created_minute
            order by created_at, transaction_id
        ) as pair_rank
    from candidates
),

ranked_orders as (
    select
        *,
        row_number() over (
            partition by {{ match_keys | join(', ') }}, total_in_cents, created_minute
            order by created_at, order_id
        ) as pair_rank
    from open_orders
),

matched as (
    select
        ranked_transactions.transaction_id,
        ranked_orders.order_id,
        'customer_amount_minute' as match_rule
    from ranked_transactions
    inner join ranked_orders
        on {{ columns_equal('ranked_transactions', 'ranked_orders', match_keys) }}
        and ranked_transactions.amount_in_cents = ranked_orders.total_in_cents
        and ranked_transactions.created_minute = ranked_orders.created_minute
        and ranked_transactions.pair_rank = ranked_orders.pair_rank
),

final as (
    select transaction_id, order_id, 'link' as match_rule from linked
    union all
    select transaction_id, order_id, match_rule from matched
)

select * from final
