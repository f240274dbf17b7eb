-- description: payout lines with their payout's status and UTC initiation day, the matching
-- scope (failed/canceled payouts list transactions that a later payout lists again, so each of
-- them is its own scope; every other payout shares the scope 'live'), and the days from the
-- line's UTC day to its payout's UTC initiation day; the order a line's order number names
-- grain: payout_id, line_number
with lines as (select * from {{ ref('stg_payout_lines') }}),

windows as (select * from {{ ref('int_payout_windows') }}),

orders as (select * from {{ ref('stg_orders') }}),

numbered_orders as (
    -- an order number names an order when it names exactly one order of the site
    select site_id, order_number, min(order_id) as order_id
    from orders
    where site_id is not null and order_number is not null
    group by site_id, order_number
    having count(*) = 1
),

final as (
    select
        lines.payout_id,
        lines.line_number,
        coalesce(lines.site_id, windows.site_id) as site_id,
        {{ payout_line_columns('lines') }},
        lines.order_number_as_sent,
        lines.order_number,
        numbered_orders.order_id,
        lines.provider,
        lines.payment_method,
        lines.created_at,
        windows.status as payout_status,
        windows.initiated_date as payout_initiated_date,
        coalesce(windows.is_rolled_forward, false) as is_rolled_forward,
        case when windows.is_rolled_forward then lines.payout_id else 'live' end as match_scope,
        cast(windows.initiated_date - cast(lines.created_at at time zone 'UTC' as date) as bigint)
            as delay_days
    from lines
    left join windows
        on lines.payout_id = windows.payout_id
    left join numbered_orders
        on coalesce(lines.site_id, windows.site_id) = numbered_orders.site_id
        and lines.order_number = numbered_orders.order_number
)

select * from final
