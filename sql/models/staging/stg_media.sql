-- description: one row per lesson media item; minutes are a duration, not money (double is fine)
-- grain: media_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('media') }}),

final as (
    select
        {{ record_keys('media_id') }},
        lesson_id,
        cast(duration_in_minutes as double precision) as duration_in_minutes,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
