-- test: the observed settlement delays are ordered: min <= p50 <= p95 <= max, over lines_count > 0
with final as (
    select *
    from {{ ref('settlement_delay') }}
    where lines_count < 1
        or min_delay_days > p50_delay_days
        or p50_delay_days > p95_delay_days
        or p95_delay_days > max_delay_days
        or p50_delay_days is null
        or p95_delay_days is null
)

select * from final
