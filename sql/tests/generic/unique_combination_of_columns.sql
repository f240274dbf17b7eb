{#- A grain of more than one column has one row per combination (dbt_utils' test of the same
    name, written here because the package takes nothing from the dbt hub). creator-sync's
    runner runs the same check from the schema YAML (models/schema.py). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}
select {{ combination_of_columns | join(', ') }}, count(*) as n
from {{ model }}
group by {{ combination_of_columns | join(', ') }}
having count(*) > 1
{% endtest %}
