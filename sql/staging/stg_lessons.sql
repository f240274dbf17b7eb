-- description: one row per lesson
-- grain: lesson_id
with source as (
    select * from {{ source('lessons') }}
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
        cast(id as text) as lesson_id,
        site_id,
        course_id,
        module_id,
        title as lesson_title,
        position as lesson_position,
        status as lesson_status,
        publishing_option,
        coalesce(_is_deleted, false) as is_deleted
    from ranked
    where row_rank = 1
)

select * from final
