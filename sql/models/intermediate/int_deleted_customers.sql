-- description: the people the platform deleted (stg_customers.is_deleted): left out of every
-- count of people (customer_cohorts, mrr_monthly, offer_performance), their money kept
-- (DECISIONS.md, "People the platform deleted")
-- grain: customer_id
with customers as (select * from {{ ref('stg_customers') }}),

final as (
    select customer_id
    from customers
    where is_deleted
)

select * from final
