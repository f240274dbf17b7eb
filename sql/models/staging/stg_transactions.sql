-- description: one row per listed transaction; money stays in integer cents, currencies
-- upper-cased; provider, action, state and payment type compared normalised (A8: lower case,
-- spaces and underscores alike). A fee the processor did not state stays NULL: the API states
-- `payment_fee_in_cents` only for the platform's own processor (never guessed as 0)
-- grain: transaction_id
-- the latest extraction of each id (macros/raw.sql)
with source as (select * from {{ latest('transactions') }}),

final as (
    select
        {{ record_keys('transaction_id') }},
        customer_id,
        offer_id,
        replace(lower(trim(provider)), ' ', '_') as provider,
        replace(lower(trim(action)), ' ', '_') as action,
        replace(lower(trim(state)), ' ', '_') as state,
        replace(lower(trim(payment_type)), ' ', '_') as payment_type,
        coalesce(amount_in_cents, 0) as amount_in_cents,
        coalesce(sales_tax_in_cents, 0) as sales_tax_in_cents,
        payment_fee_in_cents,
        upper(currency) as currency,
        settlement_amount_in_cents,
        settlement_fee_amount_in_cents,
        upper(settlement_currency) as settlement_currency,
        created_at
    from source
)

select * from final
