-- description: distinct (customer_id, product_id) pairs of the customers_products link table
-- grain: customer_id, product_id
with source as (select * from {{ raw('customers_products') }}),

final as (
    select
        customer_id,
        product_id,
        min(site_id) as site_id
    from source
    where customer_id is not null
        and product_id is not null
    group by customer_id, product_id
)

select * from final
