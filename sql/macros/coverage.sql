{#- Why a mart's figures built on `resources` cannot be stated: the body of a one-row CTE whose
    column `alias` joins the `incomplete_reason` of each resource that data_coverage does not hold
    complete, and is NULL when every one of them is complete. `coverage` is the mart's import CTE
    of data_coverage. The marts that read it state no amount while it is set (DECISIONS.md). -#}
{% macro unavailable_reason(coverage, resources, alias) -%}
    select string_agg(incomplete_reason, '; ' order by resource) as {{ alias }}
    from {{ coverage }}
    where resource in ({% for resource in resources %}'{{ resource }}'{{ ', ' if not loop.last }}{% endfor %})
        and not is_complete
{%- endmacro %}

{#- The body of a CTE listing each of `resources` that data_coverage (`coverage`, the mart's
    import CTE of it) does not hold complete: a mart that states nothing unless its inputs are
    complete keeps its rows `where not exists (select 1 from <that CTE>)`. -#}
{% macro incomplete_resources(coverage, resources) -%}
    select resource
    from {{ coverage }}
    where resource in ({% for resource in resources %}'{{ resource }}'{{ ', ' if not loop.last }}{% endfor %})
        and not is_complete
{%- endmacro %}
