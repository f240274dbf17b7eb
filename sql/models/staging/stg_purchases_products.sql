-- description: distinct (purchase_id, product_id) pairs of the purchases_products link table
-- grain: purchase_id, product_id
with source as (select * from {{ raw('purchases_products') }}),

final as (
    select
        purchase_id,
        product_id,
        min(site_id) as site_id
    from source
    where purchase_id is not null
        and product_id is not null
    group by purchase_id, product_id
)

select * from final
