-- description: one row per site (a creator business on the platform), so that a reader can put a
-- name beside every mart's site_id; a site seen only in the sales data (its record not loaded)
-- still has its row, named by its id
-- grain: site_id
with sites as (select * from {{ ref('stg_sites') }}),

transactions as (select * from {{ ref('stg_transactions') }}),

payouts as (select * from {{ ref('stg_payouts') }}),

orders as (select * from {{ ref('stg_orders') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

customers as (select * from {{ ref('stg_customers') }}),

offers as (select * from {{ ref('stg_offers') }}),

seen as (
    -- every site the sales data names, loaded or not
    select site_id from transactions
    union
    select site_id from payouts
    union
    select site_id from orders
    union
    select site_id from purchases
    union
    select site_id from customers
    union
    select site_id from offers
),

site_ids as (
    select site_id from sites
    union
    select site_id from seen where site_id is not null
),

final as (
    select
        site_ids.site_id,
        coalesce(sites.site_name, sites.subdomain, site_ids.site_id) as site_name,
        sites.subdomain,
        sites.settlement_currency,
        sites.site_timezone,
        sites.created_at,
        coalesce(sites.is_deleted, false) as is_deleted,
        sites.site_id is not null as is_loaded
    from site_ids
    left join sites
        on site_ids.site_id = sites.site_id
)

select * from final
