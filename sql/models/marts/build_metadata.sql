-- description: the parameters the models were built with, one row, so that the report and the
-- headline state them instead of guessing: reporting time zone, settlement delay, as-of date
-- grain: built_at
with as_of as (select * from {{ ref('int_as_of') }}),

final as (
    select
        current_timestamp as built_at,
        {{ setting('dataset') }} as dataset,
        {{ setting('timezone') }} as timezone,
        -- null unless --settlement-delay-days was given: then each site's observed delay applies
        {{ setting('settlement_delay_override_days') }} as settlement_delay_days,
        {{ setting('default_settlement_delay_days') }} as default_settlement_delay_days,
        as_of.as_of_date,
        {{ setting('as_of_date') }} is not null as is_as_of_given,
        -- the platform's amounts include sales tax: revenue excl. tax = amount - tax
        {{ setting('amounts_include_tax') }} as amounts_include_tax,
        {{ setting('creator_sync_version') }} as creator_sync_version
    from as_of
)

select * from final
