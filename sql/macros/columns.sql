{#- Column lists written once for the models that repeat them. -#}

{#- `left.c = right.c and ...` for every column of `columns`: the equality of a join's keys. -#}
{% macro columns_equal(left, right, columns) -%}
{%- for column in columns -%}
{{ left }}.{{ column }} = {{ right }}.{{ column }}{{ '\n        and ' if not loop.last }}
{%- endfor -%}
{%- endmacro %}

{#- `relation.c` for every column of `columns`, one a line, comma-separated (no trailing comma). -#}
{% macro qualified(relation, columns) -%}
{%- for column in columns -%}
{{ relation }}.{{ column }}{{ ',\n        ' if not loop.last }}
{%- endfor -%}
{%- endmacro %}

{#- `case when <reason> is null then relation.c end as c` for every column of `columns`: a
    figure stated only while nothing makes its verdict unavailable (payout_reconciliation). -#}
{% macro unless_unavailable(reason, relation, columns) -%}
{%- for column in columns -%}
case when {{ reason }} is null
            then {{ relation }}.{{ column }} end as {{ column }}{{ ',\n        ' if not loop.last }}
{%- endfor -%}
{%- endmacro %}

{#- The columns a payout line states as the platform wrote them (stg_payout_lines), in the order
    int_payout_lines and payout_lines carry them, qualified by `relation`. -#}
{% macro payout_line_columns(relation) -%}
{{ qualified(relation, ['line_type', 'transaction_type', 'pricing_type', 'amount_in_cents',
    'fee_in_cents', 'net_in_cents', 'sales_tax_in_cents', 'currency', 'presented_amount_in_cents',
    'presented_currency', 'exchange_rate', 'is_whole_cents', 'customer_id']) }}
{%- endmacro %}

{#- The body of a CTE of the distinct `columns` that either of two relations states: a link
    table `links`, and `records` (another link table, or records naming the other side in a
    column of their own), kept only where `required` is set when given. Either may be empty. -#}
{% macro edges(columns, links, records, required=none) -%}
    select {{ columns | join(', ') }} from {{ links }}
    union
    select {{ columns | join(', ') }} from {{ records }}
    {%- if required %} where {{ required }} is not null{% endif %}
{%- endmacro %}

{#- The body of a CTE giving each `child` of `relation` one `parent`: the least where several
    are named, so that a duplicated link or a child linked twice keeps the child's grain. -#}
{% macro least_parent(child, parent, relation) -%}
    select {{ child }}, min({{ parent }}) as {{ parent }}
    from {{ relation }}
    group by {{ child }}
{%- endmacro %}

{#- The body of a CTE giving each `child` one `parent` (least_parent): from the link table
    `links` and from the child's own `parent` column in `records`, either of which may be empty
    (int_course_structure). -#}
{% macro one_parent(child, parent, links, records) -%}
{%- set named = '(\n' ~ edges([child, parent], links, records, required=parent) ~ '\n    ) as edges' -%}
{{ least_parent(child, parent, named) }}
{%- endmacro %}

{#- `cast(sum(c) as bigint) as c` for every column of `columns`, one a line, comma-separated (no
    trailing comma): the integer totals of the cents and counts a model rolls up by its grain. -#}
{% macro bigint_sums(columns) -%}
{%- for column in columns -%}
cast(sum({{ column }}) as bigint) as {{ column }}{{ ',\n        ' if not loop.last }}
{%- endfor -%}
{%- endmacro %}

{#- `left join r on base.k = r.k and ...` for every relation of `relations`, on every column of
    `keys` (a list, or one column): the per-key figures a model joins back to its rows. -#}
{% macro left_joins(base, relations, keys) -%}
{%- set keys = [keys] if keys is string else keys -%}
{%- for relation in relations -%}
left join {{ relation }}
        on {{ columns_equal(base, relation, keys) }}{{ '\n    ' if not loop.last }}
{%- endfor -%}
{%- endmacro %}

{#- `case when <condition> then cast(coalesce(relation.c, 0) as bigint) end as c` for every column
    of `columns`: a total stated only while `condition` holds (the inputs it is built on are
    complete), zero where the row has none of it (fees_monthly, unpaid_balance). -#}
{% macro totals_when(condition, relation, columns) -%}
{%- for column in columns -%}
case when {{ condition }}
            then cast(coalesce({{ relation }}.{{ column }}, 0) as bigint) end as {{ column }}{{ ',\n        ' if not loop.last }}
{%- endfor -%}
{%- endmacro %}
