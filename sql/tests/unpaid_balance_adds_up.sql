-- test: unpaid_balance adds up: paid out + unpaid = settled, unpaid = in transit + awaiting payout
with final as (
    select *
    from {{ ref('unpaid_balance') }}
    where paid_out_in_cents + unpaid_balance_in_cents <> settled_in_cents
        or unpaid_balance_in_cents <> in_transit_in_cents + awaiting_payout_in_cents
)

select * from final
