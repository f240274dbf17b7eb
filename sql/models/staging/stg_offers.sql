-- description: one row per offer; billing_interval says how a subscription price normalises to a month
-- grain: offer_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('offers') }}),

final as (
    select
        {{ record_keys('offer_id') }},
        title as offer_title,
        internal_title,
        upper(coalesce(currency, 'USD')) as currency,
        price_in_cents,
        replace(lower(trim(payment_type)), ' ', '_') as payment_type,
        coalesce(subscription, false) or lower(coalesce(payment_type, '')) like 'subscription%'
            as is_subscription,
        case
            when lower(coalesce(payment_type, '')) like '%annual%'
                or lower(coalesce(payment_type, '')) like '%year%' then 'year'
            when coalesce(subscription, false)
                or lower(coalesce(payment_type, '')) like 'subscription%' then 'month'
        end as billing_interval,
        coalesce(free, false) as is_free,
        coalesce(_is_deleted, false) as is_deleted
    from source
)

select * from final
