-- test: payout amounts have at most two decimals, so the cents conversion is exact
{{ config(severity='warn') }}
with final as (
    select payout_id, amount
    from {{ ref('stg_payouts') }}
    where not is_whole_cents
)

select * from final
