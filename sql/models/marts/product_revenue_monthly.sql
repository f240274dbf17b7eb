-- description: revenue per site, currency, reporting month and product, up to the as-of date:
-- each transaction credited to the products it paid for (int_transaction_products: a purchase's
-- share to the products it grants, else its offer's, evenly; an order's payment to its items by
-- their totals, an item that sells an offer to that offer's products). Money no product stands
-- behind is one row per month with product_id '(no product)'. Per month and currency, revenue
-- excl. tax adds up to revenue_monthly's (data test). Months without money for a product have
-- no row.
-- grain: site_id, currency, date_month, product_id
with credits as (select * from {{ ref('int_transaction_products') }}),

products as (select * from {{ ref('stg_products') }}),

as_of as (select * from {{ ref('int_as_of') }}),

final as (
    {{ credited_revenue_monthly(key='product_id', dimension='products', title='product_title',
        unattributed='(no product)') }}
)

select * from final
