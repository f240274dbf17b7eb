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

{#- The body of a one-row CTE: the as-of day (`as_of`, the model's import CTE of int_as_of) and
    whether it is partial, that is the synced transactions do not reach its end in the reporting
    zone (`coverage`, the import CTE of data_coverage: complete_through_at), as the headline
    judges it. The one statement of the partial-day rule: revenue_daily flags the day with it,
    int_month_spine the month (and revenue_monthly reads int_month_spine). -#}
{% macro as_of_day(as_of='as_of', coverage='coverage') -%}
    select
        {{ as_of }}.as_of_date,
        coalesce(
            cast({{ coverage }}.complete_through_at at time zone {{ setting('timezone') }} as date)
                <= {{ as_of }}.as_of_date,
            false
        ) as is_as_of_day_partial
    from {{ as_of }}
    left join {{ coverage }}
        on {{ coverage }}.resource = 'transactions'
{%- endmacro %}
