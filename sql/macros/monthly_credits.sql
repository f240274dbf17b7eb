{#
  One month's revenue per site, currency and `key` (offer_id or product_id) from the credits of
  int_transaction_products up to the as-of date: what offer_revenue_monthly and
  product_revenue_monthly both sum, written once. `credits` and `as_of` are the model's import
  CTEs of int_transaction_products and int_as_of.
#}
{% macro monthly_credits(key, credits='credits', as_of='as_of') %}
    select
        {{ credits }}.site_id,
        {{ credits }}.currency,
        {{ credits }}.date_month,
        {{ credits }}.{{ key }},
        cast(sum(case when {{ credits }}.revenue_type = 'gross'
            then {{ credits }}.amount_in_cents else 0 end) as bigint) as gross_in_cents,
        cast(sum(case when {{ credits }}.revenue_type = 'gross'
            then 0 else {{ credits }}.amount_in_cents end) as bigint)
            as refunds_and_disputes_in_cents,
        cast(sum({{ credits }}.amount_in_cents) as bigint) as net_in_cents,
        cast(sum({{ credits }}.revenue_ex_tax_in_cents) as bigint) as revenue_ex_tax_in_cents,
        cast(count(distinct {{ credits }}.transaction_id) as bigint) as transactions_count
    from {{ credits }}
    cross join {{ as_of }}
    where {{ credits }}.date_day <= {{ as_of }}.as_of_date
    group by {{ credits }}.site_id, {{ credits }}.currency, {{ credits }}.date_month,
        {{ credits }}.{{ key }}
{% endmacro %}

{#
  The body of the `final` CTE of a mart of revenue per month and `key`: monthly_credits of `key`,
  each row named by `dimension`'s `title` (the mart's import CTE of the staging model whose id is
  `key`), money credited to no `key` kept as one row a month whose `key_column` is `unattributed`
  (is_unattributed). `key_column`: the name of that coalesced key when the mart keeps `key`
  itself beside it (offer_revenue_monthly's offer_key), else `key`.
#}
{% macro credited_revenue_monthly(key, dimension, title, unattributed, key_column=none) -%}
    select
        monthly.site_id,
        monthly.currency,
        monthly.date_month,
        coalesce(monthly.{{ key }}, '{{ unattributed }}') as {{ key_column or key }},
        {%- if key_column %}
        monthly.{{ key }},
        {%- endif %}
        {{ dimension }}.{{ title }},
        monthly.{{ key }} is null as is_unattributed,
        monthly.gross_in_cents,
        monthly.refunds_and_disputes_in_cents,
        monthly.net_in_cents,
        monthly.revenue_ex_tax_in_cents,
        monthly.transactions_count
    from ({{ monthly_credits(key) }}) as monthly
    left join {{ dimension }}
        on monthly.{{ key }} = {{ dimension }}.{{ key }}
{%- endmacro %}
