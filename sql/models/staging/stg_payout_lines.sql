-- description: one row per line of a payout detail (the platform's itemisation, addendum A3):
-- the line type normalised from any case or plural, money converted exactly from the decimals
-- to cents, the order number as the integer orders carry ('ORD-12345' and '12345' alike)
-- grain: payout_id, line_number
-- the latest extraction of each (payout_id, line_number) (macros/raw.sql)
with source as (select * from {{ latest('payout_lines') }}),

typed as (
    select
        *,
        replace(lower(trim(transaction_type)), ' ', '_') as type_word,
        -- 'ORD-12345' -> '12345'; anything else is kept as sent (and only used if all digits)
        case
            when upper(trim(order_number)) like 'ORD-%' then trim(substr(trim(order_number), 5))
            else trim(order_number)
        end as order_digits
    from source
),

final as (
    select
        cast(payout_id as text) as payout_id,
        line_number,
        site_id,
        case
            when type_word in ('sale', 'sales') then 'sale'
            when type_word in ('refund', 'refunds') then 'refund'
            when type_word in ('adjustment', 'adjustments') then 'adjustment'
            -- an unknown type stays visible (and is never matched to a transaction)
            else type_word
        end as line_type,
        transaction_type,
        -- A8: lines write values for people (`Subscription`, `Acme Payments`, `Visa`):
        -- compared lower case, spaces and underscores alike
        replace(lower(trim(pricing_type)), ' ', '_') as pricing_type,
        cast(round(amount * 100, 0) as bigint) as amount_in_cents,
        cast(round(coalesce(fee, 0) * 100, 0) as bigint) as fee_in_cents,
        cast(round(net * 100, 0) as bigint) as net_in_cents,
        cast(round(coalesce(sales_tax, 0) * 100, 0) as bigint) as sales_tax_in_cents,
        upper(currency) as currency,
        -- without a presented amount the line was not converted: it is presented as settled
        cast(round(coalesce(presented_amount, amount) * 100, 0) as bigint)
            as presented_amount_in_cents,
        upper(coalesce(presented_currency, currency)) as presented_currency,
        coalesce(exchange_rate, cast(1 as decimal(38, 9))) as exchange_rate,
        -- a `*_raw` column holds a value as written where it was not whole cents (the loader
        -- rounds the decimal half-even to the cent); older rows kept the fraction in place
        coalesce(amount_raw, fee_raw, net_raw, sales_tax_raw, presented_amount_raw) is null
            and coalesce(amount * 100 = round(amount * 100, 0), true)
            and coalesce(fee * 100 = round(fee * 100, 0), true)
            and coalesce(net * 100 = round(net * 100, 0), true)
            and coalesce(sales_tax * 100 = round(sales_tax * 100, 0), true)
            and coalesce(presented_amount * 100 = round(presented_amount * 100, 0), true)
            as is_whole_cents,
        customer_id,
        order_number as order_number_as_sent,
        case
            when {{ regex_matches('order_digits', "'^[0-9]{1,18}$'") }} then cast(order_digits as bigint)
        end as order_number,
        replace(lower(trim(provider)), ' ', '_') as provider,
        replace(lower(trim(payment_method)), ' ', '_') as payment_method,
        created_at,
        coupon_used,
        quantity
    from typed
)

select * from final
