-- description: course -> module -> lesson placement, from the link tables and the to-one ids
-- (either may be missing depending on how the course was read); deleted rows are left out
-- grain: course_id, module_key, lesson_key
with courses as (select * from {{ ref('stg_courses') }}),

modules as (select * from {{ ref('stg_modules') }}),

lessons as (select * from {{ ref('stg_lessons') }}),

courses_modules as (select * from {{ ref('stg_courses_modules') }}),

courses_lessons as (select * from {{ ref('stg_courses_lessons') }}),

modules_lessons as (select * from {{ ref('stg_modules_lessons') }}),

module_courses as (
    {{ one_parent('module_id', 'course_id', 'courses_modules', 'modules') }}
),

lesson_modules as (
    {{ one_parent('lesson_id', 'module_id', 'modules_lessons', 'lessons') }}
),

lesson_courses as (
    {{ one_parent('lesson_id', 'course_id', 'courses_lessons', 'lessons') }}
),

live_modules as (
    select modules.module_id, module_courses.course_id
    from modules
    inner join module_courses
        on modules.module_id = module_courses.module_id
    where not modules.is_deleted
),

placed_lessons as (
    select
        coalesce(lesson_courses.course_id, live_modules.course_id) as course_id,
        live_modules.module_id,
        lessons.lesson_id
    from lessons
    left join lesson_modules
        on lessons.lesson_id = lesson_modules.lesson_id
    left join live_modules
        on lesson_modules.module_id = live_modules.module_id
    left join lesson_courses
        on lessons.lesson_id = lesson_courses.lesson_id
    where not lessons.is_deleted
),

empty_modules as (
    select live_modules.course_id, live_modules.module_id, cast(null as text) as lesson_id
    from live_modules
    where not exists (
        select 1 from placed_lessons where placed_lessons.module_id = live_modules.module_id
    )
),

placed as (
    select course_id, module_id, lesson_id from placed_lessons
    union all
    select course_id, module_id, lesson_id from empty_modules
),

empty_courses as (
    select courses.course_id, cast(null as text) as module_id, cast(null as text) as lesson_id
    from courses
    where not courses.is_deleted
        and not exists (select 1 from placed where placed.course_id = courses.course_id)
),

final as (
    select
        placed.course_id,
        placed.module_id,
        placed.lesson_id,
        coalesce(placed.module_id, '-') as module_key,
        coalesce(placed.lesson_id, '-') as lesson_key
    from placed
    inner join courses
        on placed.course_id = courses.course_id
    where not courses.is_deleted
    union all
    select course_id, module_id, lesson_id, '-', '-' from empty_courses
)

select * from final
