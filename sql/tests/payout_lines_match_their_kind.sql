-- test: a matched line and its transaction agree on what every rule requires: a sale line is a
-- charge, a refund line a refund, an adjustment line a dispute (never a sale to a refund); the
-- same site, customer, presented currency and absolute presented amount
with lines as (
    select * from {{ ref('fct_payout_lines') }}
    where transaction_id is not null
),

final as (
    select lines.payout_id, lines.line_number, lines.line_type, lines.transaction_id,
        transactions.revenue_type, lines.customer_id, transactions.customer_id as txn_customer_id,
        lines.presented_amount_in_cents, transactions.amount_in_cents,
        lines.presented_currency, transactions.currency
    from lines
    left join {{ ref('int_transactions') }} as transactions
        on lines.transaction_id = transactions.transaction_id
    where transactions.transaction_id is null
        or lines.line_type <> case transactions.revenue_type
            when 'gross' then 'sale' when 'refund' then 'refund' else 'adjustment' end
        or lines.site_id <> transactions.site_id
        or lines.customer_id <> transactions.customer_id
        or lines.presented_currency <> transactions.currency
        or abs(lines.presented_amount_in_cents) <> abs(transactions.amount_in_cents)
)

select * from final
