-- test: per-offer revenue adds up to total revenue: offer_performance's net (the empty-offer
-- rows included) equals revenue_daily's per currency, and every bundled transaction is split
-- into parts that add up to its own amount
with offers as (
    select currency, sum(net_revenue_in_cents) as net_in_cents
    from {{ ref('offer_performance') }}
    group by currency
),

revenue as (
    select currency, sum(net_in_cents) as net_in_cents
    from {{ ref('revenue_daily') }}
    group by currency
),

parts as (
    select transaction_id, sum(amount_in_cents) as amount_in_cents
    from {{ ref('int_transaction_offers') }}
    group by transaction_id
),

final as (
    select
        coalesce(offers.currency, revenue.currency) as currency,
        offers.net_in_cents as offers_net_in_cents,
        revenue.net_in_cents as revenue_net_in_cents,
        cast(null as text) as transaction_id
    from offers
    full outer join revenue
        on offers.currency = revenue.currency
    where coalesce(offers.net_in_cents, 0) <> coalesce(revenue.net_in_cents, 0)
    union all
    select transactions.currency, parts.amount_in_cents, transactions.amount_in_cents,
        transactions.transaction_id
    from {{ ref('int_transactions') }} as transactions
    left join parts
        on transactions.transaction_id = parts.transaction_id
    where parts.amount_in_cents is distinct from transactions.amount_in_cents
)

select * from final
