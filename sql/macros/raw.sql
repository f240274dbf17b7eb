{#- The raw tables as dbt reads them. creator-sync's own runner supplies `raw` and `latest`
    itself (models/render.py) with the same meaning:
    - raw(name): every contract column (macros/raw_contract.sql) in its contract type, a typed
      NULL where the loader has not created the column, no rows where the table is absent;
    - latest(name): the same, keeping the latest extraction of each key (by _extracted_at, then
      _dlt_load_id), so a replayed or append-only load never counts a record twice. -#}

{% macro raw_columns_present(name) -%}
{#- the lower-cased column names of raw table `name`, or none when it is absent -#}
{%- if not execute -%}{{ return(none) }}{%- endif -%}
{%- set relation = adapter.get_relation(
    database=target.database,
    schema=var('creator_platform_schema', 'creator_platform'),
    identifier=name) -%}
{%- if relation is none -%}{{ return(none) }}{%- endif -%}
{{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list) }}
{%- endmacro %}

{% macro raw_projection(name) -%}
{%- set table = creator_platform_contract()[name] -%}
{%- set present = raw_columns_present(name) -%}
(select
{%- for column, column_type in table['columns'] %}
    cast({{ adapter.quote(column) if present is not none and column in present else 'null' }} as {{ contract_type(column_type) }}) as {{ adapter.quote(column) }}{{ ',' if not loop.last }}
{%- endfor %}
{%- if present is none %}
    where 1 = 0)
{%- else %}
    from {{ adapter.quote(var('creator_platform_schema', 'creator_platform')) }}.{{ adapter.quote(name) }})
{%- endif %}
{%- endmacro %}

{% macro raw(name) -%}
{{ raw_projection(name) }} as {{ adapter.quote(name) }}
{%- endmacro %}

{% macro latest(name) -%}
{%- set table = creator_platform_contract()[name] -%}
(select
    {% for column, column_type in table['columns'] %}{{ adapter.quote(column) }}{{ ', ' if not loop.last }}{% endfor %}
from (
    select *, row_number() over (
        partition by {% for column in table['key'] %}{{ adapter.quote(column) }}{{ ', ' if not loop.last }}{% endfor %}
        order by {{ adapter.quote('_extracted_at') }} desc nulls last, {{ adapter.quote('_dlt_load_id') }} desc nulls last
    ) as row_rank
    from {{ raw_projection(name) }} as raw
) as ranked
where row_rank = 1) as {{ adapter.quote(name) }}
{%- endmacro %}
