{#- The raw tables as the models read them, for both builders (dbt, and creator-sync's runner,
    which renders these macros itself):
    - raw(name): every column of the table in the package's sources YAML
      (models/staging/_creator_platform__sources.yml) in its type, a typed NULL where the loader
      has not created the column, no rows where the table is absent;
    - latest(name): the same, keeping the latest extraction of each key (the table's meta.key;
      by _extracted_at, then _dlt_load_id), so a replayed or append-only load never counts a
      record twice.
    They ask their builder two things: `raw_contract_of(name)`, the table's columns and key, and
    `raw_columns_present(name)`, the columns the warehouse holds (none: the table is absent).
    Under dbt, macros/raw_dbt.sql answers them; the runner answers them itself. -#}

{% macro raw_projection(name) -%}
{%- set relation = source('creator_platform', name) -%}
{%- if not execute -%}
{#- dbt's parse: the source() call above is the lineage; the SQL is not run -#}
(select * from {{ relation }})
{%- else -%}
{%- set table = raw_contract_of(name) -%}
{%- set present = raw_columns_present(name) -%}
(select
{%- for column, column_type in table['columns'] %}
    cast({{ adapter.quote(column) if present is not none and column in present else 'null' }} as {{ contract_type(column_type) }}) as {{ adapter.quote(column) }}{{ ',' if not loop.last }}
{%- endfor %}
{%- if present is none %}
    where 1 = 0)
{%- else %}
    from {{ relation }})
{%- endif %}
{%- endif %}
{%- endmacro %}

{% macro raw(name) -%}
{{ raw_projection(name) }} as {{ adapter.quote(name) }}
{%- endmacro %}

{% macro latest(name) -%}
{%- if not execute -%}
{{ raw(name) }}
{%- else -%}
{%- set table = raw_contract_of(name) -%}
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
{%- endif %}
{%- endmacro %}
