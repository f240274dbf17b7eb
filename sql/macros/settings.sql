{#- The build parameters as SQL literals, under the dbt vars sql/dbt_project.yml documents
    and gives their defaults (the one place they are written: the runner reads them there too).
    The models call `setting('<short name>')`; each short name maps to one var and its SQL type. -#}
{% macro setting(name) -%}
{%- set settings = {
    'dataset': ('creator_platform_schema', 'text'),
    'timezone': ('creator_platform_reporting_timezone', 'text'),
    'settlement_delay_override_days': ('creator_platform_settlement_delay_days', 'integer'),
    'default_settlement_delay_days': ('creator_platform_default_settlement_delay_days', 'integer'),
    'as_of_date': ('creator_platform_as_of_date', 'date'),
    'amounts_include_tax': ('creator_platform_amounts_include_tax', 'boolean'),
    'creator_sync_version': ('creator_sync_version', 'text'),
} -%}
{%- set var_name, sql_type = settings[name] -%}
{%- set value = var(var_name) -%}
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
