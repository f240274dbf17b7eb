-- description: one row per course module
-- grain: module_id
with source as (
    select * from {{ source('modules') }}
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
        cast(id as text) as module_id,
        site_id,
        course_id,
        title as module_title,
        position as module_position,
        publishing_option,
        coalesce(_is_deleted, false) as is_deleted
    from ranked
    where row_rank = 1
)

select * from final
