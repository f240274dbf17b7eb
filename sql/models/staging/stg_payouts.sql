-- description: one row per payout; amount converted exactly from the decimal to cents
-- grain: payout_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('payouts') }}),

final as (
    select
        {{ record_keys('payout_id') }},
        -- A8: written for people (`In Transit`); compared lower case, spaces as underscores
        replace(lower(trim(status)), ' ', '_') as status,
        cast(amount as decimal(38, 9)) as amount,
        cast(round(cast(amount as decimal(38, 9)) * 100, 0) as bigint) as amount_in_cents,
        -- `amount_raw`: the amount as written where it was not whole cents (the loader rounds
        -- `amount` half-even to the cent); rows loaded before it kept the fraction in `amount`
        amount_raw is null
            and cast(amount as decimal(38, 9)) * 100
            = round(cast(amount as decimal(38, 9)) * 100, 0) as is_whole_cents,
        upper(currency) as currency,
        initiated_date as initiated_at,
        estimated_arrival_date as estimated_arrival_at,
        bank_account
    from source
)

select * from final
