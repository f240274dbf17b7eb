-- description: one row per product
-- grain: product_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('products') }}),

final as (
    select
        {{ record_keys('product_id') }},
        title as product_title,
        status,
        publish_status,
        product_type_name,
        product_type_id,
        created_at,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
