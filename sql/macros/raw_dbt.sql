{#- What macros/raw.sql asks of its builder, answered under dbt (creator-sync's runner answers
    the same two questions itself and does not read this file). -#}

{% macro raw_contract_of(name) -%}
{#- the columns ([[name, type]...]) and key of raw table `name`, from the sources YAML -#}
{%- for node in graph.sources.values() if node.source_name == 'creator_platform' and node.name == name -%}
{%- set meta = node.config.meta if node.config.meta else node.meta -%}
{%- set columns = [] -%}
{%- for column in node.columns.values() -%}{%- set _ = columns.append([column.name, column.data_type]) -%}{%- endfor -%}
{{ return({'columns': columns, 'key': meta.get('key', ['id'])}) }}
{%- endfor -%}
{{ exceptions.raise_compiler_error("raw('" ~ name ~ "') is not a table of the creator_platform source") }}
{%- endmacro %}

{% macro raw_columns_present(name) -%}
{#- the lower-cased column names of raw table `name`, or none when it is absent -#}
{%- set declared = source('creator_platform', name) -%}
{%- set relation = adapter.get_relation(
    database=declared.database, schema=declared.schema, identifier=declared.identifier) -%}
{%- if relation is none -%}{{ return(none) }}{%- endif -%}
{{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list) }}
{%- endmacro %}
