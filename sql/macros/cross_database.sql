{#- SQL that differs by warehouse, dispatched per adapter (duckdb, postgres, bigquery,
    snowflake). The SQL of the models is DuckDB's; these macros hold what is not portable. -#}

{% macro contract_type(duckdb_type) -%}
{{ adapter.dispatch('contract_type', 'creator_platform')(duckdb_type) }}
{%- endmacro %}

{% macro default__contract_type(duckdb_type) -%}{{ duckdb_type }}{%- endmacro %}

{% macro postgres__contract_type(duckdb_type) -%}
{{ {'double': 'double precision', 'json': 'jsonb'}.get(duckdb_type, duckdb_type) }}
{%- endmacro %}

{% macro bigquery__contract_type(duckdb_type) -%}
{{ {'text': 'string', 'bigint': 'int64', 'boolean': 'bool', 'timestamptz': 'timestamp',
    'double': 'float64', 'json': 'json', 'decimal(38, 9)': 'bignumeric',
    'integer': 'int64', 'date': 'date'}.get(duckdb_type, duckdb_type) }}
{%- endmacro %}

{% macro snowflake__contract_type(duckdb_type) -%}
{{ {'text': 'varchar', 'timestamptz': 'timestamp_tz', 'double': 'double',
    'json': 'variant', 'decimal(38, 9)': 'number(38, 9)'}.get(duckdb_type, duckdb_type) }}
{%- endmacro %}

{% macro epoch_seconds(timestamp) -%}
{{ adapter.dispatch('epoch_seconds', 'creator_platform')(timestamp) }}
{%- endmacro %}

{% macro default__epoch_seconds(timestamp) -%}cast(floor(epoch({{ timestamp }})) as bigint){%- endmacro %}

{% macro postgres__epoch_seconds(timestamp) -%}cast(floor(extract(epoch from {{ timestamp }})) as bigint){%- endmacro %}

{% macro bigquery__epoch_seconds(timestamp) -%}unix_seconds({{ timestamp }}){%- endmacro %}

{% macro snowflake__epoch_seconds(timestamp) -%}date_part(epoch_second, {{ timestamp }}){%- endmacro %}
