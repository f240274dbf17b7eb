-- description: one row per payout, reconciled by its lines when it has lines (the platform's own
-- itemisation: they must add up to the amount, and every sale and refund line must have its
-- transaction), else by the payout rule (the amount against the net settlement of the
-- transactions the rule assigns to it). Both views side by side; expected_amount_in_cents,
-- difference_in_cents and transactions_count follow reconciliation_method. The check is built on
-- transactions (each line needs its transaction; the rule sums the transactions it assigns) and
-- on the payouts (their windows and lines): unless both are complete (data_coverage.is_complete),
-- the verdict and every figure built on them are NULL and `verdict_unavailable_reason` says what
-- is missing (without its transactions a paid payout would look unreconciled); the payout's own
-- record (amount, status, dates) and its lines stay.
-- grain: payout_id
with payouts as (select * from {{ ref('stg_payouts') }}),

windows as (select * from {{ ref('int_payout_windows') }}),

assignments as (select * from {{ ref('int_payout_assignments') }}),

lines as (select * from {{ ref('int_payout_lines') }}),

matches as (select * from {{ ref('int_payout_line_matches') }}),

delays as (select * from {{ ref('int_settlement_delays') }}),

-- one row: why the verdict cannot be stated (NULL: it can)
inputs as (select * from {{ ref('int_payout_inputs') }}),

rule as (
    select
        payout_id,
        cast(sum(net_settlement_in_cents) as bigint) as rule_expected_in_cents,
        cast(sum(settlement_fee_amount_in_cents) as bigint) as rule_fees_in_cents,
        cast(count(*) as bigint) as rule_transactions_count
    from assignments
    group by payout_id
),

itemised as (
    select
        lines.payout_id,
        cast(count(*) as bigint) as lines_count,
        cast(sum(lines.net_in_cents) as bigint) as itemised_net_in_cents,
        cast(sum(case when matches.transaction_id is not null then 1 else 0 end) as bigint)
            as matched_lines_count,
        cast(sum(case when matches.transaction_id is null then 1 else 0 end) as bigint)
            as unmatched_lines_count,
        cast(sum(case when matches.transaction_id is null
            and lines.line_type in ('sale', 'refund') then 1 else 0 end) as bigint)
            as unmatched_sales_and_refunds_count,
        cast(sum(case when matches.is_tied then 1 else 0 end) as bigint) as tied_lines_count,
        cast(sum(lines.fee_in_cents) as bigint) as fees_in_cents,
        cast(sum(case when lines.line_type = 'adjustment' then lines.net_in_cents else 0 end)
            as bigint) as adjustments_in_cents,
        cast(sum(case when matches.transaction_id is null then lines.net_in_cents else 0 end)
            as bigint) as unexplained_in_cents,
        bool_and(lines.is_whole_cents) as is_whole_cents
    from lines
    left join matches
        on lines.payout_id = matches.payout_id
        and lines.line_number = matches.line_number
    group by lines.payout_id
),

compared as (
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
        payouts.is_whole_cents as is_amount_whole_cents,
        itemised.payout_id is not null as is_itemised,
        cast(coalesce(itemised.lines_count, 0) as bigint) as lines_count,
        itemised.itemised_net_in_cents,
        cast(payouts.amount_in_cents - itemised.itemised_net_in_cents as bigint)
            as itemisation_difference_in_cents,
        cast(coalesce(itemised.matched_lines_count, 0) as bigint) as matched_lines_count,
        cast(coalesce(itemised.unmatched_lines_count, 0) as bigint) as unmatched_lines_count,
        coalesce(itemised.unmatched_sales_and_refunds_count, 0) as unmatched_sales_and_refunds_count,
        cast(coalesce(itemised.tied_lines_count, 0) as bigint) as tied_lines_count,
        itemised.fees_in_cents as itemised_fees_in_cents,
        itemised.adjustments_in_cents,
        itemised.unexplained_in_cents,
        coalesce(itemised.is_whole_cents, true) as are_lines_whole_cents,
        cast(coalesce(rule.rule_expected_in_cents, 0) as bigint) as rule_expected_in_cents,
        cast(payouts.amount_in_cents - coalesce(rule.rule_expected_in_cents, 0) as bigint)
            as rule_difference_in_cents,
        cast(coalesce(rule.rule_transactions_count, 0) as bigint) as rule_transactions_count,
        cast(coalesce(rule.rule_fees_in_cents, 0) as bigint) as rule_fees_in_cents,
        delays.settlement_delay_days
    from payouts
    inner join windows
        on payouts.payout_id = windows.payout_id
    {{ left_joins('payouts', ['rule', 'itemised'], 'payout_id') }}
    left join delays
        on payouts.site_id = delays.site_id
),

checked as (
    select
        payout_id,
        site_id,
        currency,
        status,
        initiated_date,
        window_start_date,
        window_end_date,
        is_rolled_forward,
        amount_in_cents,
        case when is_itemised then 'itemised' else 'settlement_rule' end
            as reconciliation_method,
        cast(case when is_itemised then itemised_net_in_cents else rule_expected_in_cents end
            as bigint) as expected_amount_in_cents,
        cast(case when is_itemised then itemisation_difference_in_cents
            else rule_difference_in_cents end as bigint) as difference_in_cents,
        cast(case when is_itemised then matched_lines_count else rule_transactions_count end
            as bigint) as transactions_count,
        lines_count,
        itemised_net_in_cents,
        itemisation_difference_in_cents,
        matched_lines_count,
        unmatched_lines_count,
        tied_lines_count,
        cast(case when is_itemised then itemised_fees_in_cents else rule_fees_in_cents end
            as bigint) as fees_in_cents,
        adjustments_in_cents,
        unexplained_in_cents,
        rule_expected_in_cents,
        rule_difference_in_cents,
        rule_transactions_count,
        settlement_delay_days,
        case
            when is_itemised then coalesce(itemisation_difference_in_cents = 0, false)
                and is_amount_whole_cents
                and are_lines_whole_cents
                and unmatched_sales_and_refunds_count = 0
            else rule_difference_in_cents = 0 and is_amount_whole_cents
        end as is_reconciled,
        -- the verdict (the columns above are its evidence): failed/canceled payouts roll forward,
        -- unpaid ones wait, paid ones pass or fail their check
        case
            when is_rolled_forward then 'rolled_forward'
            when status <> 'paid' then 'pending'
            when is_amount_whole_cents and case
                when is_itemised then coalesce(itemisation_difference_in_cents = 0, false)
                    and are_lines_whole_cents
                    and unmatched_sales_and_refunds_count = 0
                else rule_difference_in_cents = 0
            end then 'reconciled'
            else 'unreconciled'
        end as reconciliation_status
    from compared
),

final as (
    select
        checked.payout_id,
        checked.site_id,
        checked.currency,
        checked.status,
        checked.initiated_date,
        checked.window_start_date,
        checked.window_end_date,
        checked.is_rolled_forward,
        checked.amount_in_cents,
        checked.reconciliation_method,
        {{ unless_unavailable('inputs.unavailable_reason', 'checked', ['expected_amount_in_cents', 'difference_in_cents', 'transactions_count']) }},
        checked.lines_count,
        checked.itemised_net_in_cents,
        checked.itemisation_difference_in_cents,
        {{ unless_unavailable('inputs.unavailable_reason', 'checked', ['matched_lines_count', 'unmatched_lines_count', 'tied_lines_count', 'fees_in_cents']) }},
        checked.adjustments_in_cents,
        {{ unless_unavailable('inputs.unavailable_reason', 'checked', ['unexplained_in_cents', 'rule_expected_in_cents', 'rule_difference_in_cents', 'rule_transactions_count']) }},
        checked.settlement_delay_days,
        {{ unless_unavailable('inputs.unavailable_reason', 'checked', ['is_reconciled']) }},
        -- rolled_forward and pending come from the payout's own status; a paid payout's verdict
        -- needs its inputs complete
        case when inputs.unavailable_reason is null
            or checked.reconciliation_status in ('rolled_forward', 'pending')
            then checked.reconciliation_status end as reconciliation_status,
        inputs.unavailable_reason as verdict_unavailable_reason
    from checked
    cross join inputs
)

select * from final
