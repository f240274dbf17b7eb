-- description: one row per site (latest extraction), with its settlement currency and zone
-- grain: site_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('sites') }}),

final as (
    select
        cast(id as text) as site_id,
        name as site_name,
        subdomain,
        upper(currency) as settlement_currency,
        timezone as site_timezone,
        created_at,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
