{#- The zero-filled daily shape of the daily marts: one row per site, currency and reporting day
    from the first day with a fact of that site and currency up to the as-of date
    (int_date_spine), days without facts filled with zero. -#}

{% macro spine_grid(facts, spine) -%}
site_currencies as (
    select
        site_id,
        currency,
        min(date_day) as first_day
    from {{ facts }}
    group by site_id, currency
),

grid as (
    select
        site_currencies.site_id,
        site_currencies.currency,
        spine.date_day
    from site_currencies
    inner join {{ spine }} as spine
        on spine.date_day >= site_currencies.first_day
)
{%- endmacro %}

{% macro zero_filled(columns, relation='daily') -%}
{%- for column in columns %}
        cast(coalesce({{ relation }}.{{ column }}, 0) as bigint) as {{ column }}{{ ',' if not loop.last }}
{%- endfor %}
{%- endmacro %}

{% macro spine_join(relation='daily') -%}
from grid
    left join {{ relation }}
        on grid.site_id = {{ relation }}.site_id
        and grid.currency = {{ relation }}.currency
        and grid.date_day = {{ relation }}.date_day
{%- endmacro %}
