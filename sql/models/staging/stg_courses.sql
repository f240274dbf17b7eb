-- description: one row per course
-- grain: course_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('courses') }}),

final as (
    select
        {{ record_keys('course_id') }},
        title as course_title,
        created_at,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
