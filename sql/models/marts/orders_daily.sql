-- description: orders, revenue and average order value per site, currency and reporting day,
-- zero-filled from the first order of that site and currency up to the as-of date
-- grain: site_id, currency, date_day
with orders as (select * from {{ ref('fct_orders') }}),

spine as (select * from {{ ref('int_date_spine') }}),

{{ spine_grid('orders', 'spine') }},

daily as (
    select
        site_id,
        currency,
        date_day,
        count(*) as orders_count,
        {{ bigint_sums(['items_count', 'subtotal_in_cents', 'discount_in_cents', 'tax_in_cents',
            'total_in_cents']) }},
        cast(sum(case when is_repeat_customer then 1 else 0 end) as bigint)
            as repeat_customer_orders_count,
        cast(sum(case when is_fulfilled then 1 else 0 end) as bigint) as fulfilled_orders_count
    from orders
    group by site_id, currency, date_day
),

final as (
    select
        grid.site_id,
        grid.currency,
        grid.date_day,
        {{ zero_filled(['orders_count', 'items_count', 'subtotal_in_cents', 'discount_in_cents', 'tax_in_cents', 'total_in_cents']) }},
        -- average order value, rounded half up to the cent in integer arithmetic (exact)
        case when daily.orders_count > 0
            then cast({{ floor_divide('daily.total_in_cents * 2 + daily.orders_count', 'daily.orders_count * 2') }} as bigint)
        end as aov_in_cents,
        {{ zero_filled(['repeat_customer_orders_count', 'fulfilled_orders_count']) }}
    {{ spine_join('daily') }}
)

select * from final
