{#- The columns every record's staging model starts with: the record's id as text, named `key`
    (customer_id, offer_id, ...), and the site the record belongs to. `relation` qualifies
    both where the model joins another relation (stg_order_items). -#}
{% macro record_keys(key, relation=none) -%}
{%- set prefix = relation ~ '.' if relation else '' -%}
cast({{ prefix }}id as text) as {{ key }},
        {{ prefix }}site_id
{%- endmacro %}
