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

{% macro regex_matches(text, pattern) -%}
{{ adapter.dispatch('regex_matches', 'creator_platform')(text, pattern) }}
{%- endmacro %}

{% macro default__regex_matches(text, pattern) -%}regexp_matches({{ text }}, {{ pattern }}){%- endmacro %}

{% macro postgres__regex_matches(text, pattern) -%}({{ text }} ~ {{ pattern }}){%- endmacro %}

{% macro bigquery__regex_matches(text, pattern) -%}regexp_contains({{ text }}, {{ pattern }}){%- endmacro %}

{% macro snowflake__regex_matches(text, pattern) -%}regexp_instr({{ text }}, {{ pattern }}) > 0{%- endmacro %}

{#- integer division of a non-negative dividend by a positive divisor (DuckDB's //), exact on every
    warehouse: the half-up rounding of money to the cent is written with it. For a negative
    dividend the branches differ (DuckDB's // truncates towards zero, the others round down):
    divide its absolute value and restore the sign, as signed_share (shares.sql) does. -#}
{% macro floor_divide(dividend, divisor) -%}
{{ adapter.dispatch('floor_divide', 'creator_platform')(dividend, divisor) }}
{%- endmacro %}

{% macro default__floor_divide(dividend, divisor) -%}(({{ dividend }}) // ({{ divisor }})){%- endmacro %}

{% macro postgres__floor_divide(dividend, divisor) -%}cast(floor(cast({{ dividend }} as numeric) / ({{ divisor }})) as bigint){%- endmacro %}

{% macro bigquery__floor_divide(dividend, divisor) -%}cast(floor(cast({{ dividend }} as bignumeric) / ({{ divisor }})) as int64){%- endmacro %}

{% macro snowflake__floor_divide(dividend, divisor) -%}cast(floor(({{ dividend }}) / ({{ divisor }})) as bigint){%- endmacro %}
