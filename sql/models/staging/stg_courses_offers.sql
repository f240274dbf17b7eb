-- description: distinct (course_id, offer_id) pairs of the courses_offers link table
-- grain: course_id, offer_id
with source as (select * from {{ raw('courses_offers') }}),

final as (
    select
        course_id,
        offer_id,
        min(site_id) as site_id
    from source
    where course_id is not null
        and offer_id is not null
    group by course_id, offer_id
)

select * from final
