-- description: which revenue the payouts cover, per site, processor and currency, up to the
-- as-of date. The platform's payouts carry only what its own processor settled (transactions
-- with a settlement amount); a charge through another processor (Stripe, PayPal) is paid out by
-- that processor and is in no payout here. Covered revenue needs complete payouts and
-- transactions (data_coverage); otherwise `covered_net_in_cents` is NULL and
-- `coverage_reason` says why. covered + not covered = revenue_daily's net (data test).
-- grain: site_id, provider, currency
with transactions as (select * from {{ ref('int_transactions') }}),

as_of as (select * from {{ ref('int_as_of') }}),

inputs as (select * from {{ ref('int_payout_inputs') }}),

scoped as (
    select
        transactions.site_id,
        coalesce(transactions.provider, 'unknown') as provider,
        transactions.currency,
        transactions.settlement_amount_in_cents is not null as is_settled_by_platform,
        transactions.amount_in_cents
    from transactions
    cross join as_of
    where transactions.date_day <= as_of.as_of_date
),

grouped as (
    select
        site_id,
        provider,
        currency,
        count(*) as transactions_count,
        cast(sum(amount_in_cents) as bigint) as net_in_cents,
        cast(sum(case when is_settled_by_platform then amount_in_cents else 0 end) as bigint)
            as settled_net_in_cents,
        cast(sum(case when is_settled_by_platform then 0 else amount_in_cents end) as bigint)
            as other_processor_net_in_cents
    from scoped
    group by site_id, provider, currency
),

final as (
    select
        grouped.site_id,
        grouped.provider,
        grouped.currency,
        cast(grouped.transactions_count as bigint) as transactions_count,
        grouped.net_in_cents,
        case when inputs.unavailable_reason is null then grouped.settled_net_in_cents end
            as covered_net_in_cents,
        case when inputs.unavailable_reason is null then grouped.other_processor_net_in_cents
            else grouped.net_in_cents end as not_covered_net_in_cents,
        inputs.unavailable_reason is null and grouped.settled_net_in_cents <> 0
            and grouped.other_processor_net_in_cents = 0 as is_covered_by_payouts,
        case
            when inputs.unavailable_reason is not null then inputs.unavailable_reason
            when grouped.other_processor_net_in_cents = 0
                then 'settled by the platform into its payouts'
            when grouped.settled_net_in_cents = 0
                then 'paid out by the processor itself: in no payout of the platform'
            else 'partly settled by the platform: the rest is paid out by the processor'
        end as coverage_reason
    from grouped
    cross join inputs
)

select * from final
