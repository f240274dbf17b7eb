-- description: the course -> module -> lesson catalogue with media minutes; one row per lesson,
-- plus one per module without lessons and per course without modules (deleted rows left out)
-- grain: course_id, module_key, lesson_key
with structure as (select * from {{ ref('int_course_structure') }}),

courses as (select * from {{ ref('stg_courses') }}),

modules as (select * from {{ ref('stg_modules') }}),

lessons as (select * from {{ ref('stg_lessons') }}),

media as (select * from {{ ref('stg_media') }}),

lessons_media as (select * from {{ ref('stg_lessons_media') }}),

courses_offers as (select * from {{ ref('stg_courses_offers') }}),

media_edges as (
    {{ edges(['lesson_id', 'media_id'], 'lessons_media', 'media', required='lesson_id') }}
),

lesson_media as (
    select
        media_edges.lesson_id,
        count(*) as media_count,
        -- summed as DECIMAL: a DOUBLE sum depends on the order DuckDB's threads add in, so the
        -- same data gave 434.36999999999995 in one build and 434.3699999999999 in the next
        sum(cast(coalesce(media.duration_in_minutes, 0) as decimal(18, 4))) as media_minutes
    from media_edges
    inner join media
        on media_edges.media_id = media.media_id
    where not media.is_deleted
    group by media_edges.lesson_id
),

course_offers as (
    select course_id, count(*) as offers_count
    from courses_offers
    group by course_id
),

final as (
    select
        structure.course_id,
        structure.module_key,
        structure.lesson_key,
        courses.site_id,
        courses.course_title,
        structure.module_id,
        modules.module_title,
        modules.module_position,
        structure.lesson_id,
        lessons.lesson_title,
        lessons.lesson_position,
        lessons.lesson_status,
        lessons.publishing_option as lesson_publishing_option,
        cast(coalesce(lesson_media.media_count, 0) as bigint) as media_count,
        coalesce(lesson_media.media_minutes, 0)::decimal(18, 4) as media_minutes,
        sum(coalesce(lesson_media.media_minutes, 0)) over (partition by structure.course_id)::decimal(18, 4)
            as course_media_minutes,
        cast(coalesce(course_offers.offers_count, 0) as bigint) as course_offers_count
    from structure
    inner join courses
        on structure.course_id = courses.course_id
    left join modules
        on structure.module_id = modules.module_id
    {{ left_joins('structure', ['lessons', 'lesson_media'], 'lesson_id') }}
    left join course_offers
        on structure.course_id = course_offers.course_id
)

select * from final
