-- description: revenue per site, currency, reporting month and offer, up to the as-of date: each
-- transaction credited to the offers it paid for (int_transaction_products: a bundle split
-- across its purchases by their amounts, an order's payment across its items by their totals,
-- an item that sells an offer credited to it). Money no offer stands behind (an order's items
-- that name products, a purchase not loaded) is one row per month with `offer_key`
-- '(no offer)'. Per month and currency, revenue excl. tax adds up to revenue_monthly's (data
-- test). Months without money for an offer have no row.
-- grain: site_id, currency, date_month, offer_key
with credits as (select * from {{ ref('int_transaction_products') }}),

offers as (select * from {{ ref('stg_offers') }}),

as_of as (select * from {{ ref('int_as_of') }}),

final as (
    {{ credited_revenue_monthly(key='offer_id', dimension='offers', title='offer_title',
        unattributed='(no offer)', key_column='offer_key') }}
)

select * from final
