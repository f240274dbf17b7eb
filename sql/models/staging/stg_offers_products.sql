-- description: distinct (offer_id, product_id) pairs of the offers_products link table
-- grain: offer_id, product_id
with source as (select * from {{ raw('offers_products') }}),

final as (
    select
        offer_id,
        product_id,
        min(site_id) as site_id
    from source
    where offer_id is not null
        and product_id is not null
    group by offer_id, product_id
)

select * from final
