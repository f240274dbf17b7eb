-- test: each payout's line figures add up from its lines in payout_lines, and the figures that
-- follow reconciliation_method are the itemised ones exactly when the payout has lines
with lines as (
    select
        payout_id,
        count(*) as lines_count,
        sum(net_in_cents) as net_in_cents,
        sum(case when is_matched then 1 else 0 end) as matched_count,
        sum(case when line_type = 'adjustment' then net_in_cents else 0 end) as adjustments,
        sum(case when is_matched then 0 else net_in_cents end) as unexplained,
        sum(fee_in_cents) as fees
    from {{ ref('fct_payout_lines') }}
    group by payout_id
),

final as (
    select reconciliation.payout_id, reconciliation.reconciliation_method,
        reconciliation.lines_count, lines.lines_count as counted_lines
    from {{ ref('payout_reconciliation') }} as reconciliation
    left join lines
        on reconciliation.payout_id = lines.payout_id
    where reconciliation.lines_count <> coalesce(lines.lines_count, 0)
        or reconciliation.itemised_net_in_cents is distinct from lines.net_in_cents
        or reconciliation.matched_lines_count <> coalesce(lines.matched_count, 0)
        or reconciliation.matched_lines_count + reconciliation.unmatched_lines_count
            <> reconciliation.lines_count
        or reconciliation.adjustments_in_cents is distinct from lines.adjustments
        -- NULL by design while the inputs are incomplete (verdict_unavailable_reason)
        or (reconciliation.verdict_unavailable_reason is null
            and reconciliation.unexplained_in_cents is distinct from lines.unexplained)
        or reconciliation.reconciliation_method
            <> case when lines.payout_id is null then 'settlement_rule' else 'itemised' end
        or (lines.payout_id is not null and (
            reconciliation.expected_amount_in_cents <> lines.net_in_cents
            or reconciliation.fees_in_cents <> lines.fees
            or reconciliation.transactions_count <> lines.matched_count))
        or (lines.payout_id is null
            and reconciliation.expected_amount_in_cents <> reconciliation.rule_expected_in_cents)
)

select * from final
