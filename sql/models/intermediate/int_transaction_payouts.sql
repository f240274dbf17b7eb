-- description: the payouts each transaction is on: the payouts whose lines are matched to it,
-- and, for a payout whose lines were never read, the transactions the payout rule assigns to it
-- (the rule is the fallback only where there are no lines)
-- grain: payout_id, transaction_id
with lines as (select * from {{ ref('int_payout_lines') }}),

matches as (select * from {{ ref('int_payout_line_matches') }}),

assignments as (select * from {{ ref('int_payout_assignments') }}),

itemised_payouts as (
    select distinct payout_id from lines
),

from_lines as (
    select
        lines.payout_id,
        matches.transaction_id,
        lines.payout_status,
        lines.payout_initiated_date as initiated_date,
        lines.is_rolled_forward,
        'itemised' as carried_by
    from matches
    inner join lines
        on matches.payout_id = lines.payout_id
        and matches.line_number = lines.line_number
),

from_rule as (
    select
        assignments.payout_id,
        assignments.transaction_id,
        assignments.payout_status,
        assignments.initiated_date,
        assignments.is_rolled_forward,
        'settlement_rule' as carried_by
    from assignments
    left join itemised_payouts
        on assignments.payout_id = itemised_payouts.payout_id
    where itemised_payouts.payout_id is null
),

final as (
    select * from from_lines
    union all
    select * from from_rule
)

select * from final
