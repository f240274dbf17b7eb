-- description: one row per payout: the amount paid against the net settlement of the
-- transactions the payout rule assigns to it
-- grain: payout_id
with payouts as (
    select * from {{ ref('stg_payouts') }}
),

windows as (
    select * from {{ ref('int_payout_windows') }}
),

assignments as (
    select * from {{ ref('int_payout_assignments') }}
),

expected as (
    select
        payout_id,
        cast(sum(net_settlement_in_cents) as bigint) as expected_amount_in_cents,
        count(*) as transactions_count
    from assignments
    group by payout_id
),

final as (
    select
        payouts.payout_id,
        payouts.site_id,
        payouts.currency,
        payouts.status,
        windows.initiated_date,
        cast(windows.previous_carried_date + 1 as date) as window_start_date,
        windows.initiated_date as window_end_date,
        windows.is_rolled_forward,
        payouts.amount_in_cents,
        cast(coalesce(expected.expected_amount_in_cents, 0) as bigint) as expected_amount_in_cents,
        cast(payouts.amount_in_cents - coalesce(expected.expected_amount_in_cents, 0) as bigint)
            as difference_in_cents,
        cast(coalesce(expected.transactions_count, 0) as bigint) as transactions_count,
        payouts.amount_in_cents = coalesce(expected.expected_amount_in_cents, 0)
            and payouts.is_whole_cents as is_reconciled
    from payouts
    inner join windows
        on payouts.payout_id = windows.payout_id
    left join expected
        on payouts.payout_id = expected.payout_id
)

select * from final
