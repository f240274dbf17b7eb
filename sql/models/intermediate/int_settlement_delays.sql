-- description: the settlement delay of each site (days from a transaction's UTC day to the UTC
-- day it is payable) that the payout rule uses: --settlement-delay-days when given (an
-- override for every site), else the median days from a line's UTC day to its payout's UTC
-- initiation day over the site's payout lines (payouts not failed/canceled), else the default
-- grain: site_id
with lines as (select * from {{ ref('int_payout_lines') }}),

transactions as (select * from {{ ref('int_transactions') }}),

payouts as (select * from {{ ref('stg_payouts') }}),

sites as (
    select site_id from transactions where site_id is not null
    union
    select site_id from payouts where site_id is not null
    union
    select site_id from lines where site_id is not null
),

ranked as (
    select
        site_id,
        delay_days,
        row_number() over (partition by site_id order by delay_days) as delay_rank,
        count(*) over (partition by site_id) as lines_count
    from lines
    where not is_rolled_forward
        and delay_days is not null
        and site_id is not null
),

observed as (
    -- the median by nearest rank: the smallest delay whose rank r has r / n >= 50 %
    select
        site_id,
        cast(max(lines_count) as bigint) as observed_lines_count,
        cast(min(case when delay_rank * 100 >= 50 * lines_count then delay_days end) as bigint)
            as observed_delay_days
    from ranked
    group by site_id
),

final as (
    select
        sites.site_id,
        cast(coalesce(observed.observed_lines_count, 0) as bigint) as observed_lines_count,
        observed.observed_delay_days,
        cast(coalesce(
            {{ setting('settlement_delay_override_days') }},
            -- a line dated after its payout (negative days) cannot make a delay below 0
            case when observed.observed_delay_days < 0 then 0 else observed.observed_delay_days end,
            {{ setting('default_settlement_delay_days') }}
        ) as bigint) as settlement_delay_days,
        case
            when {{ setting('settlement_delay_override_days') }} is not null then 'override'
            when observed.observed_delay_days is not null then 'observed'
            else 'default'
        end as settlement_delay_source
    from sites
    left join observed
        on sites.site_id = observed.site_id
)

select * from final
