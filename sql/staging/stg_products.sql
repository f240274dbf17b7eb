-- description: one row per product
-- grain: product_id
with source as (
    select * from {{ source('products') }}
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
        cast(id as text) as product_id,
        site_id,
        title as product_title,
        status,
        publish_status,
        product_type_name,
        product_type_id,
        created_at,
        coalesce(_is_deleted, false) as is_deleted
    from ranked
    where row_rank = 1
)

select * from final
