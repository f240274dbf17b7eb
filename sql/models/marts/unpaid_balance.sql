-- description: per site and settlement currency, at the as-of date: what has settled and is
-- not yet in a paid payout, split into in transit and awaiting a payout (payout statuses are
-- the latest known; payouts initiated after the as-of date are ignored). A transaction is in
-- a payout when a line of it is matched to the transaction, or, for a payout without lines,
-- when the payout rule assigns it; it has settled when it is in a payout or its payable day
-- (its site's settlement delay, int_settlement_delays) has come. Built on payouts and
-- transactions: unless both are complete (data_coverage.is_complete), every amount is NULL and
-- `amount_unavailable_reason` says what is missing (a balance without its payouts would count
-- money already paid out as unpaid).
-- grain: site_id, currency
with settlements as (select * from {{ ref('int_settlements') }}),

transaction_payouts as (select * from {{ ref('int_transaction_payouts') }}),

delays as (select * from {{ ref('int_settlement_delays') }}),

payouts as (select * from {{ ref('stg_payouts') }}),

as_of as (select * from {{ ref('int_as_of') }}),

-- one row: why the amounts cannot be stated (NULL: they can)
inputs as (select * from {{ ref('int_payout_inputs') }}),

carried as (
    -- the payout (not failed/canceled) that carries each transaction: at most one; a payout
    -- initiated after the as-of date does not exist yet as of then
    select
        transaction_payouts.transaction_id,
        min(transaction_payouts.payout_status) as payout_status
    from transaction_payouts
    cross join as_of
    where not transaction_payouts.is_rolled_forward
        and transaction_payouts.initiated_date <= as_of.as_of_utc_date
    group by transaction_payouts.transaction_id
),

classified as (
    select
        settlements.site_id,
        settlements.currency,
        settlements.net_settlement_in_cents,
        settlements.payable_date <= as_of.as_of_utc_date
            or carried.transaction_id is not null as is_settled,
        carried.payout_status
    from settlements
    cross join as_of
    left join carried
        on settlements.transaction_id = carried.transaction_id
),

keys as (
    select site_id, currency from classified
    union
    select site_id, currency from payouts
),

balances as (
    select
        site_id,
        currency,
        cast(sum(case when is_settled then net_settlement_in_cents else 0 end) as bigint)
            as settled_in_cents,
        cast(sum(case when payout_status = 'paid' then net_settlement_in_cents else 0 end) as bigint)
            as paid_out_in_cents,
        cast(sum(case when payout_status in ('pending', 'in_transit')
            then net_settlement_in_cents else 0 end) as bigint) as in_transit_in_cents,
        cast(sum(case when is_settled and payout_status is null
            then net_settlement_in_cents else 0 end) as bigint) as awaiting_payout_in_cents,
        cast(sum(case when is_settled and coalesce(payout_status, '') <> 'paid'
            then net_settlement_in_cents else 0 end) as bigint) as unpaid_balance_in_cents,
        cast(sum(case when not is_settled then net_settlement_in_cents else 0 end) as bigint)
            as not_yet_settled_in_cents
    from classified
    group by site_id, currency
),

last_paid as (
    select site_id, currency, max(cast(initiated_at at time zone 'UTC' as date)) as last_paid_payout_date
    from payouts
    where status = 'paid'
    group by site_id, currency
),

final as (
    select
        keys.site_id,
        keys.currency,
        as_of.as_of_utc_date as as_of_date,
        {{ totals_when('inputs.unavailable_reason is null', 'balances', ['settled_in_cents',
            'paid_out_in_cents', 'unpaid_balance_in_cents', 'in_transit_in_cents',
            'awaiting_payout_in_cents', 'not_yet_settled_in_cents']) }},
        inputs.unavailable_reason as amount_unavailable_reason,
        last_paid.last_paid_payout_date,
        delays.settlement_delay_days,
        delays.settlement_delay_source
    from keys
    cross join as_of
    cross join inputs
    {{ left_joins('keys', ['balances', 'last_paid'], ['site_id', 'currency']) }}
    left join delays
        on keys.site_id = delays.site_id
)

select * from final
