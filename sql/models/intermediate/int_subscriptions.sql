-- description: one row per subscription purchase, with its billing interval and local start/end
-- grain: purchase_id
with purchases as (select * from {{ ref('stg_purchases') }}),

offers as (select * from {{ ref('stg_offers') }}),

final as (
    select
        purchases.purchase_id,
        purchases.site_id,
        -- a subscriber without a customer id is still one subscriber
        coalesce(purchases.customer_id, 'purchase:' || purchases.purchase_id) as subscriber_id,
        purchases.customer_id,
        purchases.offer_id,
        coalesce(purchases.currency, offers.currency, 'XXX') as currency,
        case
            when purchases.payment_type like '%annual%' or purchases.payment_type like '%year%'
                then 'year'
            when purchases.payment_type like 'subscription%' then 'month'
            else coalesce(offers.billing_interval, 'month')
        end as billing_interval,
        coalesce(purchases.amount_in_cents, offers.price_in_cents, 0) as list_amount_in_cents,
        purchases.started_at,
        purchases.deactivated_at,
        purchases.deactivation_reason,
        cast(purchases.started_at at time zone {{ setting('timezone') }} as timestamp) as started_local,
        cast(purchases.deactivated_at at time zone {{ setting('timezone') }} as timestamp)
            as deactivated_local
    from purchases
    left join offers
        on purchases.offer_id = offers.offer_id
    where purchases.payment_type like 'subscription%'
        or coalesce(offers.is_subscription, false)
)

select * from final
