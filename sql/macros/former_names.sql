{#- dbt's on-run-end (dbt_project.yml): a renamed mart's former name (its YAML
    `config.meta.former_name`) kept for one release as a view of it; a table of that name from an
    earlier build gives way to the view. creator-sync's runner does the same itself
    (models/runner.py) and does not read this file. -#}
{% macro former_name_views() -%}
{%- if execute -%}
{%- for node in graph.nodes.values()
      if node.resource_type == 'model' and node.package_name == 'creator_platform'
      and node.config.meta.get('former_name') -%}
{%- set built = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
{%- if built is not none -%}
{%- set former = adapter.get_relation(database=node.database, schema=node.schema,
                                      identifier=node.config.meta['former_name']) -%}
{%- if former is not none %}
drop {{ 'view' if former.is_view else 'table' }} {{ former }};
{%- endif %}
create view {{ built.incorporate(path={'identifier': node.config.meta['former_name']}, type='view') }} as select * from {{ built }};
{% endif -%}
{%- endfor -%}
{%- endif -%}
{%- endmacro %}
