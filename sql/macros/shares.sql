{#- `amount` x part / whole in integer cents, rounded toward zero on the absolute amount so that
    every warehouse gives the same cents: the cumulative share of a split (DECISIONS.md). The
    parts of a split are differences of cumulative shares, so they add up to the amount exactly. -#}
{% macro signed_share(amount, part, whole) -%}
cast(case when {{ amount }} < 0 then -1 else 1 end * {{ floor_divide('abs(' ~ amount ~ ') * (' ~ part ~ ')', whole) }} as bigint)
{%- endmacro %}

{#- The part of `amount` a split gives to one row of `cumulative` (a relation carrying the row's
    cumulative weight_through and the split's weight_total; `weight`, the row's own weight, is
    its column `weight` unless given): a difference of cumulative shares, in integer cents. The
    parts telescope, so they add up to the amount exactly (int_transaction_offers,
    int_transaction_products). -#}
{% macro share_part(amount, cumulative, weight=none) -%}
{%- set through = cumulative ~ '.weight_through' -%}
{%- set total = cumulative ~ '.weight_total' -%}
cast(
            {{ signed_share(amount, through, total) }}
            - {{ signed_share(amount, through ~ ' - ' ~ (weight or cumulative ~ '.weight'), total) }}
            as bigint
        )
{%- endmacro %}

{#- A part's amount_in_cents and revenue_ex_tax_in_cents: those of `money` (a relation carrying
    both) split by the same weights of `cumulative` (share_part), so that each adds up to the
    whole exactly. -#}
{% macro split_money(money, cumulative, weight=none) -%}
{{ share_part(money ~ '.amount_in_cents', cumulative, weight) }} as amount_in_cents,
        {{ share_part(money ~ '.revenue_ex_tax_in_cents', cumulative, weight) }}
            as revenue_ex_tax_in_cents
{%- endmacro %}
