-- description: one row per customer; the API's net_revenue kept exact (decimal) and in cents
-- grain: customer_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('customers') }}),

final as (
    select
        {{ record_keys('customer_id') }},
        contact_id,
        name as customer_name,
        lower(trim(email)) as email,
        external_user_id,
        cast(net_revenue as decimal(38, 9)) as api_net_revenue,
        cast(round(cast(net_revenue as decimal(38, 9)) * 100, 0) as bigint) as api_net_revenue_in_cents,
        sign_in_count,
        last_request_at,
        created_at,
        updated_at,
        -- the platform deleted the person (their personal fields erased, docs/sync.md)
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
