-- test: payout_scope splits revenue_daily's net per site and currency, to the cent: covered +
-- not covered = net (NULL covered only when payouts or transactions are incomplete)
with scope as (
    select
        site_id,
        currency,
        sum(net_in_cents) as net_in_cents,
        sum(coalesce(covered_net_in_cents, 0) + not_covered_net_in_cents) as split_in_cents
    from {{ ref('payout_scope') }}
    group by site_id, currency
),

revenue as (
    select site_id, currency, sum(net_in_cents) as net_in_cents
    from {{ ref('revenue_daily') }}
    group by site_id, currency
),

final as (
    select
        coalesce(scope.site_id, revenue.site_id) as site_id,
        coalesce(scope.currency, revenue.currency) as currency,
        scope.net_in_cents as scope_net_in_cents,
        scope.split_in_cents,
        revenue.net_in_cents as revenue_net_in_cents
    from scope
    full outer join revenue
        on scope.site_id = revenue.site_id
        and scope.currency = revenue.currency
    where coalesce(scope.net_in_cents, 0) <> coalesce(revenue.net_in_cents, 0)
        or scope.split_in_cents <> scope.net_in_cents
)

select * from final
