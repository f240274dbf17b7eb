-- description: one row per settled transaction of the platform's own processor that is payable
-- by the as-of date (its UTC day + its site's settlement delay) and that no payout carries: no
-- line of a payout that was not failed/canceled is matched to it (nor, for a payout without
-- lines, does the payout rule assign it). The money finance chases; it adds up to
-- unpaid_balance.awaiting_payout_in_cents. No rows unless payouts and transactions are both
-- complete (data_coverage.is_complete): without its payouts every settled transaction would
-- look unpaid; unpaid_balance.amount_unavailable_reason says what is missing.
-- grain: transaction_id
with settlements as (select * from {{ ref('int_settlements') }}),

transaction_payouts as (select * from {{ ref('int_transaction_payouts') }}),

as_of as (select * from {{ ref('int_as_of') }}),

inputs as (select * from {{ ref('int_payout_inputs') }}),

carried as (
    select distinct transaction_payouts.transaction_id
    from transaction_payouts
    cross join as_of
    where not transaction_payouts.is_rolled_forward
        and transaction_payouts.initiated_date <= as_of.as_of_utc_date
),

failed_listings as (
    -- the failed/canceled payouts that listed the transaction: its money came back to wait again
    select
        transaction_id,
        payout_id,
        row_number() over (
            partition by transaction_id order by initiated_date desc, payout_id desc
        ) as recency,
        count(*) over (partition by transaction_id) as failed_payouts_count
    from transaction_payouts
    where is_rolled_forward
),

rolled_forward as (
    select
        transaction_id,
        payout_id as last_failed_payout_id,
        failed_payouts_count
    from failed_listings
    where recency = 1
),

final as (
    select
        settlements.transaction_id,
        settlements.site_id,
        settlements.currency,
        settlements.customer_id,
        settlements.provider,
        settlements.action,
        settlements.created_at,
        settlements.transaction_currency,
        settlements.amount_in_cents,
        settlements.settlement_amount_in_cents,
        settlements.settlement_fee_amount_in_cents,
        settlements.net_settlement_in_cents,
        settlements.settlement_delay_days,
        settlements.payable_date,
        as_of.as_of_utc_date as as_of_date,
        cast(as_of.as_of_utc_date - cast(settlements.created_at at time zone 'UTC' as date)
            as bigint) as days_waiting,
        cast(as_of.as_of_utc_date - settlements.payable_date as bigint) as days_overdue,
        cast(coalesce(rolled_forward.failed_payouts_count, 0) as bigint) as failed_payouts_count,
        rolled_forward.last_failed_payout_id
    from settlements
    cross join as_of
    cross join inputs
    {{ left_joins('settlements', ['carried', 'rolled_forward'], 'transaction_id') }}
    where carried.transaction_id is null
        and settlements.payable_date <= as_of.as_of_utc_date
        and inputs.is_complete
)

select * from final
