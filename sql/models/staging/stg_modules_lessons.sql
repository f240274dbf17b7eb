-- description: distinct (module_id, lesson_id) pairs of the modules_lessons link table
-- grain: module_id, lesson_id
with source as (select * from {{ raw('modules_lessons') }}),

final as (
    select
        module_id,
        lesson_id,
        min(site_id) as site_id
    from source
    where module_id is not null
        and lesson_id is not null
    group by module_id, lesson_id
)

select * from final
