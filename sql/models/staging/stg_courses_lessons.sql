-- description: distinct (course_id, lesson_id) pairs of the courses_lessons link table
-- grain: course_id, lesson_id
with source as (select * from {{ raw('courses_lessons') }}),

final as (
    select
        course_id,
        lesson_id,
        min(site_id) as site_id
    from source
    where course_id is not null
        and lesson_id is not null
    group by course_id, lesson_id
)

select * from final
