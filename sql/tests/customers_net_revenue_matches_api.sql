-- test: each customer's lifetime net revenue recomputed from transactions equals the API's net_revenue
{{ config(severity='warn') }}
with final as (
    select customer_id, site_id, lifetime_net_revenue_in_cents, api_net_revenue_in_cents,
        net_revenue_difference_in_cents
    from {{ ref('dim_customers') }}
    where api_net_revenue_in_cents is not null
        and net_revenue_difference_in_cents <> 0
)

select * from final
