-- description: each listed transaction's amount credited to the offers it paid for, to the
-- cent. A transaction pays the purchases either link table names (purchases_transactions from
-- the purchases, transactions_purchases from the transactions: A8); a bundle pays several. Its
-- amount is split across them by the purchases' amounts, evenly when any amount is missing or
-- not positive, with the cents of rounding on the last purchase (by id); each part is credited
-- to its purchase's offer. A transaction with no purchase linked is credited to its own
-- (deprecated) `offer` when it names one, else to no offer (offer_id NULL: an order's payment).
-- Revenue and orders do not read this model: it only says whose money it was. purchase_id is
-- NULL (one row, part 1) for a transaction without purchases.
-- grain: transaction_id, part_number
with transactions as (select * from {{ ref('int_transactions') }}),

purchase_links as (select * from {{ ref('stg_purchases_transactions') }}),

transaction_links as (select * from {{ ref('stg_transactions_purchases') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

links as (
    {{ edges(['transaction_id', 'purchase_id'], 'purchase_links', 'transaction_links') }}
),

paid as (
    select
        links.transaction_id,
        links.purchase_id,
        purchases.offer_id,
        purchases.amount_in_cents as purchase_amount_in_cents,
        transactions.amount_in_cents,
        transactions.revenue_ex_tax_in_cents
    from links
    inner join transactions
        on links.transaction_id = transactions.transaction_id
    left join purchases
        on links.purchase_id = purchases.purchase_id
),

priced as (
    -- by amount only when every purchase of the transaction has a positive one
    select
        *,
        min(case when purchase_amount_in_cents > 0 then 1 else 0 end)
            over (partition by transaction_id) = 1 as is_split_by_amount
    from paid
),

weighted as (
    select
        transaction_id,
        purchase_id,
        offer_id,
        is_split_by_amount,
        amount_in_cents,
        revenue_ex_tax_in_cents,
        cast(case when is_split_by_amount then purchase_amount_in_cents else 1 end as bigint)
            as weight
    from priced
),

cumulative as (
    select
        *,
        sum(weight) over (
            partition by transaction_id order by purchase_id
            rows between unbounded preceding and current row
        ) as weight_through,
        sum(weight) over (partition by transaction_id) as weight_total,
        count(*) over (partition by transaction_id) as purchases_count
    from weighted
),

split as (
    -- the parts telescope: they add up to the transaction's amount exactly
    select
        cumulative.transaction_id,
        cumulative.purchase_id,
        cumulative.offer_id,
        cast(cumulative.purchases_count as bigint) as purchases_count,
        cumulative.is_split_by_amount,
        -- rounded down on the absolute amount: the same cents on every warehouse
        {{ split_money('cumulative', 'cumulative') }}
    from cumulative
),

unlinked as (
    select
        transactions.transaction_id,
        cast(null as text) as purchase_id,
        transactions.offer_id,
        cast(0 as bigint) as purchases_count,
        false as is_split_by_amount,
        transactions.amount_in_cents,
        transactions.revenue_ex_tax_in_cents
    from transactions
    left join links
        on transactions.transaction_id = links.transaction_id
    where links.transaction_id is null
),

parts as (
    select * from split
    union all
    select * from unlinked
),

final as (
    select
        parts.transaction_id,
        cast(row_number() over (
            partition by parts.transaction_id order by parts.purchase_id
        ) as bigint) as part_number,
        parts.purchase_id,
        parts.offer_id,
        transactions.site_id,
        transactions.currency,
        transactions.date_day,
        transactions.revenue_type,
        parts.purchases_count,
        parts.purchases_count > 1 as is_bundle,
        parts.is_split_by_amount,
        parts.amount_in_cents,
        parts.revenue_ex_tax_in_cents
    from parts
    inner join transactions
        on parts.transaction_id = transactions.transaction_id
)

select * from final
