-- description: distinct (lesson_id, media_id) pairs of the lessons_media link table
-- grain: lesson_id, media_id
with source as (select * from {{ raw('lessons_media') }}),

final as (
    select
        lesson_id,
        media_id,
        min(site_id) as site_id
    from source
    where lesson_id is not null
        and media_id is not null
    group by lesson_id, media_id
)

select * from final
