-- description: one row per lesson
-- grain: lesson_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('lessons') }}),

final as (
    select
        {{ record_keys('lesson_id') }},
        course_id,
        module_id,
        title as lesson_title,
        position as lesson_position,
        status as lesson_status,
        publishing_option,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
