-- test: on every revenue_daily row, gross + refunds + disputes = net and new + recurring = gross
with final as (
    select *
    from {{ ref('revenue_daily') }}
    where gross_in_cents + refunds_in_cents + disputes_in_cents <> net_in_cents
        or new_in_cents + recurring_in_cents <> gross_in_cents
)

select * from final
