-- description: distinct (customer_id, offer_id) pairs of the customers_offers link table
-- grain: customer_id, offer_id
with source as (select * from {{ raw('customers_offers') }}),

final as (
    select
        customer_id,
        offer_id,
        min(site_id) as site_id
    from source
    where customer_id is not null
        and offer_id is not null
    group by customer_id, offer_id
)

select * from final
