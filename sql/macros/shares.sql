{#- `amount` x part / whole in integer cents, rounded toward zero on the absolute amount so that
    every warehouse gives the same cents: the cumulative share of a split (DECISIONS.md). The
    parts of a split are differences of cumulative shares, so they add up to the amount exactly. -#}
{% macro signed_share(amount, part, whole) -%}
cast(case when {{ amount }} < 0 then -1 else 1 end * {{ floor_divide('abs(' ~ amount ~ ') * (' ~ part ~ ')', whole) }} as bigint)
{%- endmacro %}
