-- description: one row per lesson media item; minutes are a duration, not money (double is fine)
-- grain: media_id
with source as (
    select * from {{ source('media') }}
),

ranked as (
    select
        *,
        row_number() over (
            partition by id order by _extracted_at desc nulls last, _dlt_load_id desc nulls last
        ) as row_rank
    from source
),

final as (
    select
        cast(id as text) as media_id,
        site_id,
        lesson_id,
        cast(duration_in_minutes as double) as duration_in_minutes,
        coalesce(_is_deleted, false) as is_deleted
    from ranked
    where row_rank = 1
)

select * from final
