-- description: one row per transaction the revenue marts count (listed, succeeded, up to the
-- as-of date), as Stripe's balance transactions list them: its reporting day, amount, tax,
-- revenue excl. tax, fee (NULL when the processor stated none), processor, customer, the
-- purchases and offers it paid, the order it paid, whether it is a renewal, its settlement, and
-- the payout that carries it (not failed/canceled; by its lines, else the payout rule). Its sums
-- equal revenue_daily's per site, currency and day (data test).
-- grain: transaction_id
with transactions as (select * from {{ ref('int_transactions') }}),

transaction_offers as (select * from {{ ref('int_transaction_offers') }}),

transaction_orders as (select * from {{ ref('int_transaction_orders') }}),

transaction_payouts as (select * from {{ ref('int_transaction_payouts') }}),

as_of as (select * from {{ ref('int_as_of') }}),

counted as (
    select transactions.*
    from transactions
    cross join as_of
    where transactions.date_day <= as_of.as_of_date
),

paid_for as (
    select
        transaction_id,
        cast(count(purchase_id) as bigint) as purchases_count,
        string_agg(purchase_id, ',' order by purchase_id) as purchase_ids,
        string_agg(distinct offer_id, ',' order by offer_id) as offer_ids
    from transaction_offers
    group by transaction_id
),

payouts as (
    -- the live payout carrying the transaction (the latest, should a platform list it twice)
    select
        transaction_id,
        payout_id,
        payout_status,
        initiated_date,
        carried_by,
        row_number() over (
            partition by transaction_id order by initiated_date desc, payout_id desc
        ) as payout_rank
    from transaction_payouts
    where not is_rolled_forward
),

final as (
    select
        counted.transaction_id,
        counted.site_id,
        counted.currency,
        counted.date_day,
        counted.date_month,
        counted.created_at,
        counted.action,
        counted.revenue_type,
        counted.amount_in_cents,
        counted.sales_tax_in_cents as tax_in_cents,
        counted.revenue_ex_tax_in_cents,
        counted.fee_in_cents,
        counted.is_fee_known,
        counted.provider,
        counted.payment_type,
        counted.customer_id,
        counted.purchase_id,
        cast(coalesce(paid_for.purchases_count, 0) as bigint) as purchases_count,
        paid_for.purchase_ids,
        counted.offer_id,
        paid_for.offer_ids,
        transaction_orders.order_id,
        counted.is_recurring,
        counted.is_subscription_purchase as is_subscription,
        counted.settlement_amount_in_cents,
        counted.settlement_fee_amount_in_cents,
        counted.settlement_currency,
        payouts.payout_id,
        payouts.payout_status,
        payouts.initiated_date as payout_initiated_date,
        payouts.carried_by as payout_carried_by
    from counted
    {{ left_joins('counted', ['paid_for', 'transaction_orders', 'payouts'], 'transaction_id') }}
        and payouts.payout_rank = 1
)

select * from final
