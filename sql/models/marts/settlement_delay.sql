-- description: the settlement delay observed in the payout lines, per site, provider and month
-- (reporting zone) of the line: days from the line's UTC day to its payout's UTC initiation
-- day, over the lines of payouts that were not failed/canceled (a failed payout's lines are
-- listed again by the payout that carried them). Percentiles by nearest rank (the smallest
-- delay whose rank r of n has r / n >= p), identical on every warehouse.
-- grain: site_id, provider, date_month
with lines as (select * from {{ ref('int_payout_lines') }}),

observed as (
    select
        site_id,
        coalesce(provider, 'unknown') as provider,
        cast(date_trunc('month', cast(created_at at time zone {{ setting('timezone') }} as date))
            as date) as date_month,
        delay_days
    from lines
    where not is_rolled_forward
        and delay_days is not null
        and site_id is not null
),

ranked as (
    select
        *,
        row_number() over (
            partition by site_id, provider, date_month order by delay_days
        ) as delay_rank,
        count(*) over (partition by site_id, provider, date_month) as lines_count
    from observed
),

final as (
    select
        site_id,
        provider,
        date_month,
        cast(max(lines_count) as bigint) as lines_count,
        cast(min(delay_days) as bigint) as min_delay_days,
        cast(min(case when delay_rank * 100 >= 50 * lines_count then delay_days end) as bigint)
            as p50_delay_days,
        cast(min(case when delay_rank * 100 >= 95 * lines_count then delay_days end) as bigint)
            as p95_delay_days,
        cast(max(delay_days) as bigint) as max_delay_days
    from ranked
    group by site_id, provider, date_month
)

select * from final
