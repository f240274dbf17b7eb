-- description: distinct (course_id, module_id) pairs of the courses_modules link table
-- grain: course_id, module_id
with source as (select * from {{ raw('courses_modules') }}),

final as (
    select
        course_id,
        module_id,
        min(site_id) as site_id
    from source
    where course_id is not null
        and module_id is not null
    group by course_id, module_id
)

select * from final
