-- description: one row per order with its items, totals, fulfilment and the customer's sequence
-- grain: order_id
with orders as (select * from {{ ref('stg_orders') }}),

order_items as (select * from {{ ref('stg_order_items') }}),

customers as (select * from {{ ref('stg_customers') }}),

items as (
    select
        order_id,
        count(*) as order_lines_count,
        cast(sum(quantity) as bigint) as items_count
    from order_items
    group by order_id
),

sited as (
    -- a webhook-delivered order may lack the site: its customer's says it
    select
        orders.*,
        coalesce(orders.site_id, customers.site_id) as resolved_site_id
    from orders
    left join customers
        on orders.customer_id = customers.customer_id
),

sequenced as (
    select
        *,
        case when customer_id is not null then row_number() over (
            partition by resolved_site_id, customer_id order by created_at, order_number, order_id
        ) end as customer_order_seq
    from sited
),

final as (
    select
        sequenced.order_id,
        sequenced.resolved_site_id as site_id,
        sequenced.customer_id,
        sequenced.order_number,
        coalesce(sequenced.currency, 'XXX') as currency,
        sequenced.created_at,
        cast(sequenced.created_at at time zone {{ setting('timezone') }} as date) as date_day,
        coalesce(items.items_count, 0) as items_count,
        coalesce(items.order_lines_count, 0) as order_lines_count,
        sequenced.subtotal_in_cents,
        sequenced.discount_in_cents,
        sequenced.tax_in_cents,
        sequenced.total_in_cents,
        sequenced.fulfilled_at is not null as is_fulfilled,
        sequenced.fulfilled_at,
        case when sequenced.fulfilled_at is not null
            then {{ epoch_seconds('sequenced.fulfilled_at') }} - {{ epoch_seconds('sequenced.created_at') }}
        end as fulfilment_latency_seconds,
        sequenced.customer_order_seq,
        coalesce(sequenced.customer_order_seq > 1, false) as is_repeat_customer
    from sequenced
    left join items
        on sequenced.order_id = items.order_id
)

select * from final
