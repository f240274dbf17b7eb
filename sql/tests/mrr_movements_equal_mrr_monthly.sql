-- test: mrr_movements, summed per site, currency, month and movement, equals mrr_monthly's
-- movement columns to the cent (and its churn rows are mrr_monthly's churned customers); every
-- row's change is after minus before and its movement fits the change; a churn has a kind
with monthly as (select * from {{ ref('mrr_monthly') }}),

movements as (select * from {{ ref('mrr_movements') }}),

expected as (
    select site_id, currency, date_month, 'new' as movement, new_mrr_in_cents as mrr_change_in_cents,
        cast(null as bigint) as customers
    from monthly
    union all
    select site_id, currency, date_month, 'expansion', expansion_mrr_in_cents, null from monthly
    union all
    select site_id, currency, date_month, 'contraction', contraction_mrr_in_cents, null from monthly
    union all
    select site_id, currency, date_month, 'churn', churned_mrr_in_cents, churned_customers
    from monthly
    union all
    select site_id, currency, date_month, 'reactivation', reactivation_mrr_in_cents, null from monthly
),

summed as (
    select
        movements.site_id,
        movements.currency,
        movements.date_month,
        movements.movement,
        sum(movements.mrr_change_in_cents) as mrr_change_in_cents,
        -- mrr_monthly counts no person the platform deleted (their money stays)
        count(case when not coalesce(customers.is_deleted, false) then 1 end) as customers
    from movements
    left join {{ ref('stg_customers') }} as customers
        on movements.customer_id = customers.customer_id
    group by movements.site_id, movements.currency, movements.date_month, movements.movement
),

compared as (
    select
        coalesce(expected.site_id, summed.site_id) as site_id,
        coalesce(expected.currency, summed.currency) as currency,
        coalesce(expected.date_month, summed.date_month) as date_month,
        coalesce(expected.movement, summed.movement) as movement,
        expected.mrr_change_in_cents as mrr_monthly_in_cents,
        summed.mrr_change_in_cents as mrr_movements_in_cents,
        expected.customers as mrr_monthly_customers,
        summed.customers as mrr_movements_customers,
        cast(null as text) as customer_id
    from expected
    full outer join summed
        on expected.site_id = summed.site_id
        and expected.currency = summed.currency
        and expected.date_month = summed.date_month
        and expected.movement = summed.movement
    where coalesce(expected.mrr_change_in_cents, 0) <> coalesce(summed.mrr_change_in_cents, 0)
        or (expected.movement = 'churn'
            and coalesce(expected.customers, 0) <> coalesce(summed.customers, 0))
),

bad_rows as (
    select
        site_id,
        currency,
        date_month,
        movement,
        mrr_before_in_cents,
        mrr_after_in_cents,
        cast(null as bigint),
        cast(null as bigint),
        customer_id
    from movements
    where mrr_change_in_cents <> mrr_after_in_cents - mrr_before_in_cents
        or movement is null
        or (movement in ('new', 'reactivation')
            and not (mrr_before_in_cents = 0 and mrr_after_in_cents > 0))
        or (movement = 'expansion' and not (mrr_before_in_cents > 0 and mrr_after_in_cents > mrr_before_in_cents))
        or (movement = 'contraction'
            and not (mrr_after_in_cents > 0 and mrr_after_in_cents < mrr_before_in_cents))
        or (movement = 'churn' and not (mrr_before_in_cents > 0 and mrr_after_in_cents = 0))
        or ((movement = 'churn') <> (churn_kind is not null))
),

final as (
    select * from compared
    union all
    select * from bad_rows
)

select * from final
