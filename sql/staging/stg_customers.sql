-- description: one row per customer; the API's net_revenue kept exact (decimal) and in cents
-- grain: customer_id
with source as (
    select * from {{ source('customers') }}
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
        cast(id as text) as customer_id,
        site_id,
        contact_id,
        name as customer_name,
        lower(trim(email)) as email,
        external_user_id,
        cast(net_revenue as decimal(38, 9)) as api_net_revenue,
        cast(round(cast(net_revenue as decimal(38, 9)) * 100, 0) as bigint) as api_net_revenue_in_cents,
        sign_in_count,
        last_request_at,
        created_at,
        updated_at
    from ranked
    where row_rank = 1
)

select * from final
