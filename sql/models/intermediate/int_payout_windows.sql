-- description: the payable-date window each payout carries: after the previous payout that was
-- not failed/canceled, up to its own UTC initiation day. A failed/canceled payout's window is
-- carried again by the next payout (its funds roll forward).
-- grain: payout_id
with payouts as (select * from {{ ref('stg_payouts') }}),

dated as (
    select
        *,
        cast(initiated_at at time zone 'UTC' as date) as initiated_date,
        {{ is_rolled_forward('status') }} as is_rolled_forward
    from payouts
),

final as (
    select
        payout_id,
        site_id,
        currency,
        status,
        initiated_date,
        is_rolled_forward,
        max(case when not is_rolled_forward then initiated_date end) over (
            partition by site_id, currency
            order by initiated_date, initiated_at, payout_id
            rows between unbounded preceding and 1 preceding
        ) as previous_carried_date
    from dated
)

select * from final
