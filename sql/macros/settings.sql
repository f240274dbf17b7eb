{#- The build parameters as SQL literals, under the dbt vars sql/dbt_project.yml documents.
    The models call `setting('<short name>')`; each short name maps to one var, its SQL type and
    its default, so that a var left unset (dbt) or an option left out (the runner) reads the
    same. -#}
{% macro setting(name) -%}
{%- set settings = {
    'dataset': ('creator_platform_schema', 'text', 'creator_platform'),
    'timezone': ('creator_platform_reporting_timezone', 'text', 'UTC'),
    'settlement_delay_override_days': ('creator_platform_settlement_delay_days', 'integer', none),
    'default_settlement_delay_days': ('creator_platform_default_settlement_delay_days', 'integer', 2),
    'as_of_date': ('creator_platform_as_of_date', 'date', none),
    'amounts_include_tax': ('creator_platform_amounts_include_tax', 'boolean', true),
    'creator_sync_version': ('creator_sync_version', 'text', 'dbt'),
} -%}
{%- set var_name, sql_type, default = settings[name] -%}
{%- set value = var(var_name, default) -%}
{%- if value is none or value == '' -%}
cast(null as {{ sql_type }})
{%- elif sql_type == 'boolean' -%}
{{ 'true' if value in (true, 'true', 'True', 1, '1') else 'false' }}
{%- elif sql_type == 'integer' -%}
{{ value | int }}
{%- elif sql_type == 'date' -%}
cast('{{ value }}' as date)
{%- else -%}
'{{ value | string | replace("'", "''") }}'
{%- endif -%}
{%- endmacro %}
