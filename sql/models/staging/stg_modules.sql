-- description: one row per course module
-- grain: module_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('modules') }}),

final as (
    select
        {{ record_keys('module_id') }},
        course_id,
        title as module_title,
        position as module_position,
        publishing_option,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
