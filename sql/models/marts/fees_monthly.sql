-- description: fees per site, currency, provider and month (reporting zone), from the payout
-- lines and from the listed transactions side by side. Lines: the lines of payouts that were
-- not failed/canceled, in the settlement currency. Transactions: settled ones in their
-- settlement currency (settlement amount and fee), the others in their own currency (amount
-- and payment fee). Gross is sales only; the fee rate is fees / gross (DOUBLE, not money).
-- Each side needs its input complete (data_coverage.is_complete): the line figures the payouts,
-- the transaction figures the transactions; an incomplete side is NULL and
-- `amount_unavailable_reason` says what is missing. A fee the processor did not state (the API
-- states fees only for the platform's own processor) is never 0: the transaction fees and fee
-- rate are NULL when any transaction of the row has none, `transaction_known_fees_in_cents`
-- sums the fees stated, and `fee_unavailable_reason` says how many are missing.
-- grain: site_id, currency, provider, date_month
{%- set grain = ['site_id', 'currency', 'provider', 'date_month'] %}
with lines as (select * from {{ ref('int_payout_lines') }}),

transactions as (select * from {{ ref('int_transactions') }}),

settlements as (select * from {{ ref('int_settlements') }}),

as_of as (select * from {{ ref('int_as_of') }}),

coverage as (select * from {{ ref('data_coverage') }}),

inputs as (
    -- one row: which side can be stated, and why not (NULL: both can)
    select
        count(case when resource = 'payouts' then 1 end) = 0 as is_payouts_complete,
        count(case when resource = 'transactions' then 1 end) = 0 as is_transactions_complete,
        string_agg(incomplete_reason, '; ' order by resource) as amount_unavailable_reason
    from coverage
    where resource in ('payouts', 'transactions')
        and not is_complete
),

line_rows as (
    select
        lines.site_id,
        coalesce(lines.currency, 'XXX') as currency,
        coalesce(lines.provider, 'unknown') as provider,
        cast(date_trunc('month', cast(lines.created_at at time zone {{ setting('timezone') }} as date))
            as date) as date_month,
        lines.line_type,
        lines.amount_in_cents,
        lines.fee_in_cents,
        lines.net_in_cents
    from lines
    cross join as_of
    where not lines.is_rolled_forward
        and lines.site_id is not null
        and cast(lines.created_at at time zone {{ setting('timezone') }} as date) <= as_of.as_of_date
),

line_fees as (
    select
        {{ grain | join(', ') }},
        cast(count(*) as bigint) as lines_count,
        cast(sum(case when line_type = 'sale' then amount_in_cents else 0 end) as bigint)
            as line_gross_in_cents,
        cast(sum(fee_in_cents) as bigint) as line_fees_in_cents,
        cast(sum(net_in_cents) as bigint) as line_net_in_cents
    from line_rows
    group by {{ grain | join(', ') }}
),

transaction_rows as (
    select
        transactions.site_id,
        coalesce(settlements.currency, transactions.currency) as currency,
        coalesce(lower(transactions.provider), 'unknown') as provider,
        transactions.date_month,
        transactions.revenue_type,
        coalesce(settlements.settlement_amount_in_cents, transactions.amount_in_cents)
            as amount_in_cents,
        coalesce(settlements.settlement_fee_amount_in_cents, transactions.payment_fee_in_cents)
            as fee_in_cents
    from transactions
    cross join as_of
    left join settlements
        on transactions.transaction_id = settlements.transaction_id
    where transactions.site_id is not null
        and transactions.date_day <= as_of.as_of_date
),

transaction_fees as (
    select
        {{ grain | join(', ') }},
        cast(count(*) as bigint) as transactions_count,
        cast(sum(case when revenue_type = 'gross' then amount_in_cents else 0 end) as bigint)
            as transaction_gross_in_cents,
        cast(coalesce(sum(fee_in_cents), 0) as bigint) as transaction_known_fees_in_cents,
        cast(sum(case when fee_in_cents is null then 1 else 0 end) as bigint)
            as fee_unknown_transactions_count
    from transaction_rows
    group by {{ grain | join(', ') }}
),

keys as (
    {{ edges(grain, 'line_fees', 'transaction_fees') }}
),

final as (
    select
        keys.site_id,
        keys.currency,
        keys.provider,
        keys.date_month,
        {{ totals_when('inputs.is_payouts_complete', 'line_fees', ['lines_count',
            'line_gross_in_cents', 'line_fees_in_cents', 'line_net_in_cents']) }},
        case when inputs.is_payouts_complete
            then cast(line_fees.line_fees_in_cents as double precision)
                / nullif(line_fees.line_gross_in_cents, 0) end as line_fee_rate,
        {{ totals_when('inputs.is_transactions_complete', 'transaction_fees', [
            'transactions_count', 'transaction_gross_in_cents']) }},
        -- NULL when any transaction of the row has no stated fee: never a guessed 0
        case when inputs.is_transactions_complete
            and coalesce(transaction_fees.fee_unknown_transactions_count, 0) = 0
            then cast(coalesce(transaction_fees.transaction_known_fees_in_cents, 0) as bigint) end
            as transaction_fees_in_cents,
        case when inputs.is_transactions_complete
            and coalesce(transaction_fees.fee_unknown_transactions_count, 0) = 0
            then cast(transaction_fees.transaction_known_fees_in_cents as double precision)
                / nullif(transaction_fees.transaction_gross_in_cents, 0) end
            as transaction_fee_rate,
        inputs.amount_unavailable_reason,
        {{ totals_when('inputs.is_transactions_complete', 'transaction_fees', [
            'transaction_known_fees_in_cents', 'fee_unknown_transactions_count']) }},
        case when coalesce(transaction_fees.fee_unknown_transactions_count, 0) > 0
            then keys.provider || ' states no fee for '
                || cast(transaction_fees.fee_unknown_transactions_count as text) || ' of '
                || cast(transaction_fees.transactions_count as text) || ' transactions'
        end as fee_unavailable_reason
    from keys
    cross join inputs
    {{ left_joins('keys', ['line_fees', 'transaction_fees'], grain) }}
)

select * from final
