-- test: offer_revenue_monthly and product_revenue_monthly each add up to revenue_monthly's
-- revenue excl. tax and net per site, currency and month (the '(no offer)' / '(no product)'
-- rows included), and every transaction's credited parts add up to its own amounts
{%- set credited = {'offers': 'offer_revenue_monthly', 'products': 'product_revenue_monthly'} %}
with months as (
    select site_id, currency, date_month, revenue_ex_tax_in_cents, net_in_cents
    from {{ ref('revenue_monthly') }}
),

offers as (
    select site_id, currency, date_month,
        sum(revenue_ex_tax_in_cents) as revenue_ex_tax_in_cents, sum(net_in_cents) as net_in_cents
    from {{ ref('offer_revenue_monthly') }}
    group by site_id, currency, date_month
),

products as (
    select site_id, currency, date_month,
        sum(revenue_ex_tax_in_cents) as revenue_ex_tax_in_cents, sum(net_in_cents) as net_in_cents
    from {{ ref('product_revenue_monthly') }}
    group by site_id, currency, date_month
),

parts as (
    select transaction_id, sum(amount_in_cents) as amount_in_cents,
        sum(revenue_ex_tax_in_cents) as revenue_ex_tax_in_cents
    from {{ ref('int_transaction_products') }}
    group by transaction_id
),

checks as (
{%- for mart, mart_name in credited.items() %}
    select '{{ mart_name }}' as mart, months.site_id, months.currency, months.date_month,
        months.revenue_ex_tax_in_cents as expected_in_cents,
        {{ mart }}.revenue_ex_tax_in_cents as actual_in_cents
    from months
    left join {{ mart }}
        on {{ columns_equal('months', mart, ['site_id', 'currency', 'date_month']) }}
    where coalesce({{ mart }}.revenue_ex_tax_in_cents, 0) <> months.revenue_ex_tax_in_cents
        or coalesce({{ mart }}.net_in_cents, 0) <> months.net_in_cents
    union all
    -- a credited month that revenue_monthly does not have
    select '{{ mart_name }}', {{ mart }}.site_id, {{ mart }}.currency, {{ mart }}.date_month,
        cast(null as bigint), {{ mart }}.revenue_ex_tax_in_cents
    from {{ mart }}
    left join months
        on {{ columns_equal('months', mart, ['site_id', 'currency', 'date_month']) }}
    where months.site_id is null
    union all
{%- endfor %}
    select 'int_transaction_products', transactions.site_id, transactions.currency,
        transactions.date_month, transactions.revenue_ex_tax_in_cents, parts.revenue_ex_tax_in_cents
    from {{ ref('int_transactions') }} as transactions
    left join parts
        on transactions.transaction_id = parts.transaction_id
    where parts.amount_in_cents is distinct from transactions.amount_in_cents
        or parts.revenue_ex_tax_in_cents is distinct from transactions.revenue_ex_tax_in_cents
)

select * from checks
