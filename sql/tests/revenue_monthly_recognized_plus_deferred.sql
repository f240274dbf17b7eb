-- test: revenue_monthly: for every site and currency, revenue recognised through a month plus the
-- deferred balance at its end equals revenue excl. tax through that month (DECISIONS.md
-- "Revenue recognition"), and the months add up to revenue_daily
with monthly as (select * from {{ ref('revenue_monthly') }}),

daily as (select * from {{ ref('revenue_daily') }}),

through as (
    select
        site_id,
        currency,
        date_month,
        deferred_revenue_in_cents,
        sum(recognized_revenue_in_cents) over (
            partition by site_id, currency order by date_month
            rows between unbounded preceding and current row
        ) as recognized_through_in_cents,
        sum(revenue_ex_tax_in_cents) over (
            partition by site_id, currency order by date_month
            rows between unbounded preceding and current row
        ) as revenue_ex_tax_through_in_cents
    from monthly
),

daily_totals as (
    select site_id, currency, sum(revenue_ex_tax_in_cents) as revenue_ex_tax_in_cents,
        sum(net_in_cents) as net_in_cents
    from daily
    group by site_id, currency
),

monthly_totals as (
    select site_id, currency, sum(revenue_ex_tax_in_cents) as revenue_ex_tax_in_cents,
        sum(net_in_cents) as net_in_cents
    from monthly
    group by site_id, currency
)

select site_id, currency, date_month, recognized_through_in_cents, deferred_revenue_in_cents,
    revenue_ex_tax_through_in_cents
from through
where recognized_through_in_cents + deferred_revenue_in_cents <> revenue_ex_tax_through_in_cents
    or deferred_revenue_in_cents < 0
union all
select daily_totals.site_id, daily_totals.currency, cast(null as date),
    monthly_totals.revenue_ex_tax_in_cents, monthly_totals.net_in_cents,
    daily_totals.revenue_ex_tax_in_cents
from daily_totals
left join monthly_totals
    on daily_totals.site_id = monthly_totals.site_id
    and daily_totals.currency = monthly_totals.currency
where monthly_totals.revenue_ex_tax_in_cents is distinct from daily_totals.revenue_ex_tax_in_cents
    or monthly_totals.net_in_cents is distinct from daily_totals.net_in_cents
