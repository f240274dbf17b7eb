-- test: a customer's transactions share one currency (else lifetime revenue mixes currencies)
{{ config(severity='warn') }}
with final as (
    select customer_id, site_id, currencies_count
    from {{ ref('dim_customers') }}
    where currencies_count > 1
)

select * from final
