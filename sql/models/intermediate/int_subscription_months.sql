-- description: one row per subscription per month in which it is active at the month's snapshot,
-- priced at its latest charge before the snapshot (annual normalised to monthly, half-up cents)
-- grain: purchase_id, date_month
with subscriptions as (select * from {{ ref('int_subscriptions') }}),

transactions as (select * from {{ ref('int_transactions') }}),

months as (select * from {{ ref('int_month_spine') }}),

charges as (
    select
        purchase_id,
        amount_in_cents,
        cast(created_at at time zone {{ setting('timezone') }} as timestamp) as charged_local,
        created_at,
        transaction_id
    from transactions
    where revenue_type = 'gross'
        and amount_in_cents > 0
        and purchase_id is not null
),

price_periods as (
    -- each charge sets the price until the next charge of the same purchase; open periods end
    -- in 9999 rather than NULL so that the join below stays an equi-join plus range filters
    select
        purchase_id,
        amount_in_cents,
        charged_local as valid_from_local,
        coalesce(
            lead(charged_local) over (partition by purchase_id order by created_at, transaction_id),
            cast('9999-12-31' as timestamp)
        ) as valid_to_local
    from charges
),

active_months as (
    select
        subscriptions.*,
        months.date_month,
        months.snapshot_end_local
    from subscriptions
    inner join months
        on subscriptions.started_local < months.snapshot_end_local
        and coalesce(subscriptions.deactivated_local, cast('9999-12-31' as timestamp))
            >= months.snapshot_end_local
),

priced as (
    select
        active_months.*,
        coalesce(price_periods.amount_in_cents, active_months.list_amount_in_cents)
            as billed_amount_in_cents
    from active_months
    left join price_periods
        on active_months.purchase_id = price_periods.purchase_id
        and price_periods.valid_from_local < active_months.snapshot_end_local
        and price_periods.valid_to_local >= active_months.snapshot_end_local
),

final as (
    select
        purchase_id,
        site_id,
        subscriber_id,
        customer_id,
        offer_id,
        currency,
        billing_interval,
        date_month,
        billed_amount_in_cents,
        case
            when billing_interval = 'year' then {{ floor_divide('billed_amount_in_cents * 2 + 12', '24') }}
            else billed_amount_in_cents
        end as mrr_in_cents
    from priced
)

select * from final
