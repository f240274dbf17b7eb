-- description: one row per site (latest extraction), with its settlement currency and zone
-- grain: site_id
with source as (
    select * from {{ source('sites') }}
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
        cast(id as text) as site_id,
        name as site_name,
        subdomain,
        upper(currency) as settlement_currency,
        timezone as site_timezone,
        created_at,
        coalesce(_is_deleted, false) as is_deleted
    from ranked
    where row_rank = 1
)

select * from final
