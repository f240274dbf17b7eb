-- test: revenue_daily totals equal the transactions' sums per site and currency (up to as-of)
with revenue as (
    select
        site_id,
        currency,
        sum(net_in_cents) as net_in_cents,
        sum(gross_in_cents) as gross_in_cents,
        sum(transactions_count) as transactions_count
    from {{ ref('revenue_daily') }}
    group by site_id, currency
),

staged as (
    -- straight from staging (deduplicated raw), not from the intermediate model the mart uses;
    -- only a missing site or currency is resolved the way the models resolve it
    select
        coalesce(stg.site_id, resolved.site_id) as site_id,
        coalesce(stg.currency, resolved.currency, 'XXX') as currency,
        stg.action,
        stg.amount_in_cents
    from {{ ref('stg_transactions') }} as stg
    left join {{ ref('int_transactions') }} as resolved
        on stg.transaction_id = resolved.transaction_id
    where coalesce(stg.state, 'succeeded') = 'succeeded'
        and cast(stg.created_at at time zone {{ setting('timezone') }} as date)
            <= (select as_of_date from {{ ref('int_as_of') }})
),

transactions as (
    select
        site_id,
        currency,
        sum(amount_in_cents) as net_in_cents,
        sum(case when action not in ('refund', 'dispute') then amount_in_cents else 0 end)
            as gross_in_cents,
        count(*) as transactions_count
    from staged
    group by site_id, currency
),

final as (
    select
        coalesce(revenue.site_id, transactions.site_id) as site_id,
        coalesce(revenue.currency, transactions.currency) as currency,
        revenue.net_in_cents as mart_net_in_cents,
        transactions.net_in_cents as transactions_net_in_cents,
        revenue.transactions_count as mart_count,
        transactions.transactions_count as transactions_count
    from revenue
    full outer join transactions
        on revenue.site_id = transactions.site_id
        and revenue.currency = transactions.currency
    where revenue.net_in_cents is distinct from transactions.net_in_cents
        or revenue.gross_in_cents is distinct from transactions.gross_in_cents
        or revenue.transactions_count is distinct from transactions.transactions_count
)

select * from final
