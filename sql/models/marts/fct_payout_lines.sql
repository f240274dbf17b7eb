-- description: one row per payout line (the platform's own itemisation of a payout), with the
-- listed transaction behind it (one to one, see int_payout_line_matches) and the rule that
-- matched it; money in the settlement currency except presented_amount_in_cents
-- grain: payout_id, line_number
with lines as (select * from {{ ref('int_payout_lines') }}),

matches as (select * from {{ ref('int_payout_line_matches') }}),

transactions as (select * from {{ ref('int_transactions') }}),

final as (
    select
        lines.payout_id,
        lines.line_number,
        lines.site_id,
        lines.payout_status,
        lines.payout_initiated_date,
        lines.is_rolled_forward,
        {{ payout_line_columns('lines') }},
        lines.order_number,
        lines.order_number_as_sent,
        lines.order_id,
        lines.provider,
        lines.payment_method,
        lines.created_at,
        lines.delay_days,
        matches.transaction_id,
        transactions.created_at as transaction_created_at,
        matches.match_rule,
        matches.transaction_id is not null as is_matched,
        coalesce(matches.is_tied, false) as is_tied
    from lines
    left join matches
        on lines.payout_id = matches.payout_id
        and lines.line_number = matches.line_number
    left join transactions
        on matches.transaction_id = transactions.transaction_id
)

select * from final
