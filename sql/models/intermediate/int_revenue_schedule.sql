-- description: when each transaction's revenue excl. tax is earned (recognised), per reporting
-- month: a subscription charge evenly over the days of its plan's month or year from its
-- reporting day, any other charge (one-time, payment plan, order) on its day. A refund or
-- dispute of a purchase first reverses what its charges have not earned yet at the refund's
-- day (its future months, in proportion to what each still held), the rest on its own day.
-- Each transaction's entries add up to its revenue excl. tax exactly (cumulative rounding down);
-- no entry falls before its transaction's month. Transactions after the as-of date are left
-- out, as in revenue_daily; entries after the as-of month are the deferred balance.
-- grain: transaction_id, date_month
with transactions as (select * from {{ ref('int_transactions') }}),

subscriptions as (select * from {{ ref('int_subscriptions') }}),

as_of as (select * from {{ ref('int_as_of') }}),

month_offsets as (
    -- a service period of a year from mid-month touches 13 months
    select 0 as month_offset
    {% for offset in range(1, 13) %}union all select {{ offset }}
    {% endfor %}
),

counted as (
    select transactions.*
    from transactions
    cross join as_of
    where transactions.date_day <= as_of.as_of_date
),

periods as (
    -- the service period [service_start_date, service_end_date) of every transaction
    select
        counted.transaction_id,
        counted.site_id,
        counted.currency,
        counted.purchase_id,
        counted.revenue_type,
        counted.created_at,
        counted.date_day,
        counted.date_month,
        counted.revenue_ex_tax_in_cents,
        case
            when counted.revenue_type <> 'gross' then 'day'
            when subscriptions.billing_interval is not null then subscriptions.billing_interval
            when counted.purchase_id is null and counted.action = 'subscription_charge'
                and (counted.payment_type like '%annual%' or counted.payment_type like '%year%')
                then 'year'
            when counted.purchase_id is null and counted.action = 'subscription_charge' then 'month'
            else 'day'
        end as service_interval
    from counted
    left join subscriptions
        on counted.purchase_id = subscriptions.purchase_id
),

spans as (
    select
        *,
        case service_interval
            when 'year' then cast(date_day + interval '1 year' as date)
            when 'month' then cast(date_day + interval '1 month' as date)
            else cast(date_day + 1 as date)
        end as service_end_date
    from periods
),

charges as (
    select
        *,
        cast(service_end_date - date_day as bigint) as service_days
    from spans
    where revenue_type = 'gross'
),

charge_months as (
    -- earned through the end of each month of the period: cumulative, rounded down, so the
    -- months telescope to the charge's amount exactly
    select
        charges.transaction_id,
        charges.site_id,
        charges.currency,
        charges.purchase_id,
        charges.created_at,
        charges.date_day,
        charges.date_month,
        charges.service_days,
        charges.revenue_ex_tax_in_cents,
        cast(charges.date_month + month_offsets.month_offset * interval '1 month' as date)
            as entry_month,
        cast(least(
            cast(charges.date_month + (month_offsets.month_offset + 1) * interval '1 month' as date),
            charges.service_end_date
        ) - charges.date_day as bigint) as days_through
    from charges
    cross join month_offsets
    where cast(charges.date_month + month_offsets.month_offset * interval '1 month' as date)
        < charges.service_end_date
),

charge_earned as (
    select
        *,
        {{ signed_share('revenue_ex_tax_in_cents', 'days_through', 'service_days') }}
            as earned_through
    from charge_months
),

charge_cumulative as (
    select
        *,
        cast(coalesce(lag(earned_through) over (
            partition by transaction_id order by entry_month
        ), 0) as bigint) as earned_before
    from charge_earned
),

charge_entries as (
    select
        transaction_id,
        site_id,
        currency,
        date_month as transaction_month,
        entry_month,
        cast(earned_through - earned_before as bigint) as recognized_in_cents
    from charge_cumulative
),

reversals as (
    select
        transaction_id,
        purchase_id,
        site_id,
        currency,
        created_at,
        date_day,
        date_month,
        revenue_ex_tax_in_cents,
        -- the earlier refunds of the purchase: what is left is net of them
        coalesce(sum(-revenue_ex_tax_in_cents) over (
            partition by purchase_id order by created_at, transaction_id
            rows between unbounded preceding and 1 preceding
        ), 0) as earlier_reversed_in_cents
    from spans
    where revenue_type <> 'gross'
        and purchase_id is not null
        and revenue_ex_tax_in_cents < 0
),

unearned_months as (
    -- per refund, what each earlier charge of its purchase has still to earn in each month
    -- after the refund's day
    select
        reversals.transaction_id,
        charge_cumulative.entry_month,
        cast(sum(
            charge_cumulative.earned_through - greatest(
                charge_cumulative.earned_before,
                -- what the charge has earned by the end of the refund's day
                {{ signed_share('charge_cumulative.revenue_ex_tax_in_cents',
                    'least(greatest(cast(reversals.date_day - charge_cumulative.date_day as bigint) + 1, 0),'
                    ~ ' charge_cumulative.service_days)',
                    'charge_cumulative.service_days') }}
            )
        ) as bigint) as unearned_in_cents
    from reversals
    inner join charge_cumulative
        on reversals.purchase_id = charge_cumulative.purchase_id
        and charge_cumulative.created_at <= reversals.created_at
        and charge_cumulative.entry_month >= reversals.date_month
    group by reversals.transaction_id, charge_cumulative.entry_month
),

unearned as (
    select
        unearned_months.*,
        sum(unearned_in_cents) over (
            partition by transaction_id order by entry_month
            rows between unbounded preceding and current row
        ) as unearned_through,
        sum(unearned_in_cents) over (partition by transaction_id) as unearned_total
    from unearned_months
    where unearned_in_cents > 0
),

reversed as (
    -- the part of the refund taken from the deferred balance: what is left, at most the refund
    select
        reversals.transaction_id,
        cast(least(
            -reversals.revenue_ex_tax_in_cents,
            greatest(max(unearned.unearned_total) - reversals.earlier_reversed_in_cents, 0)
        ) as bigint) as reversed_in_cents
    from reversals
    inner join unearned
        on reversals.transaction_id = unearned.transaction_id
    group by reversals.transaction_id, reversals.revenue_ex_tax_in_cents,
        reversals.earlier_reversed_in_cents
),

reversal_entries as (
    -- spread over the months still to earn, in proportion, cumulative and rounded down
    select
        reversals.transaction_id,
        reversals.site_id,
        reversals.currency,
        reversals.date_month as transaction_month,
        unearned.entry_month,
        cast(-(
            {{ floor_divide('reversed.reversed_in_cents * unearned.unearned_through',
                'unearned.unearned_total') }}
            - {{ floor_divide('reversed.reversed_in_cents'
                ~ ' * (unearned.unearned_through - unearned.unearned_in_cents)',
                'unearned.unearned_total') }}
        ) as bigint) as recognized_in_cents
    from reversals
    inner join reversed
        on reversals.transaction_id = reversed.transaction_id
    inner join unearned
        on reversals.transaction_id = unearned.transaction_id
    where reversed.reversed_in_cents > 0
),

day_entries as (
    -- every transaction that is not a charge: what no reversal took, on its own day
    select
        spans.transaction_id,
        spans.site_id,
        spans.currency,
        spans.date_month as transaction_month,
        spans.date_month as entry_month,
        cast(spans.revenue_ex_tax_in_cents + coalesce(reversed.reversed_in_cents, 0) as bigint)
            as recognized_in_cents
    from spans
    left join reversed
        on spans.transaction_id = reversed.transaction_id
    where spans.revenue_type <> 'gross'
),

entries as (
    select * from charge_entries
    union all
    select * from reversal_entries
    union all
    select * from day_entries
),

final as (
    select
        transaction_id,
        site_id,
        currency,
        transaction_month,
        entry_month as date_month,
        cast(sum(recognized_in_cents) as bigint) as recognized_in_cents
    from entries
    group by transaction_id, site_id, currency, transaction_month, entry_month
)

select * from final
