-- description: the build's as-of dates: --as-of when given, else the latest transaction's day
-- in the reporting time zone; for the settlement rule, the latest UTC day of a transaction or a
-- payout initiation (payouts show the platform's clock). One row.
with transactions as (select * from {{ ref('stg_transactions') }}),

payouts as (select * from {{ ref('stg_payouts') }}),

latest as (
    select
        (select max(created_at) from transactions) as latest_transaction_at,
        (select max(initiated_at) from payouts) as latest_payout_at
),

final as (
    select
        coalesce(
            {{ setting('as_of_date') }},
            cast(latest_transaction_at at time zone {{ setting('timezone') }} as date),
            cast(current_timestamp at time zone {{ setting('timezone') }} as date)
        ) as as_of_date,
        coalesce(
            {{ setting('as_of_date') }},
            cast(greatest(
                coalesce(latest_transaction_at, latest_payout_at),
                coalesce(latest_payout_at, latest_transaction_at)
            ) at time zone 'UTC' as date),
            cast(current_timestamp at time zone 'UTC' as date)
        ) as as_of_utc_date,
        latest_transaction_at
    from latest
)

select * from final
