-- description: completed transactions with their purchase, offer, reporting day and revenue
-- class. The API lists only succeeded ones; rows from elsewhere (webhooks) in another state are
-- left out. A renewal (recurring) is a charge of a subscription purchase after its first charge.
-- Revenue excl. tax is amount - sales tax (the platform's amounts include tax, as its orders show;
-- var creator_platform_amounts_include_tax false: the amount). A fee not stated stays NULL.
-- grain: transaction_id
with transactions as (select * from {{ ref('stg_transactions') }}),

purchase_links as (select * from {{ ref('stg_purchases_transactions') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

offers as (select * from {{ ref('stg_offers') }}),

customers as (select * from {{ ref('stg_customers') }}),

transaction_purchases as (
    -- a transaction belongs to one purchase
    {{ least_parent('transaction_id', 'purchase_id', 'purchase_links') }}
),

joined as (
    select
        transactions.*,
        transaction_purchases.purchase_id,
        -- a webhook-delivered row may lack the site: its customer's or purchase's says it
        coalesce(transactions.site_id, customers.site_id, purchases.site_id) as resolved_site_id,
        coalesce(transactions.offer_id, purchases.offer_id) as resolved_offer_id,
        coalesce(transactions.currency, purchases.currency, offers.currency, 'XXX')
            as resolved_currency,
        coalesce(purchases.payment_type, '') like 'subscription%'
            or coalesce(offers.is_subscription, false) as is_subscription_purchase,
        case
            when transactions.action = 'refund' then 'refund'
            when transactions.action = 'dispute' then 'dispute'
            else 'gross'
        end as revenue_type
    from transactions
    left join transaction_purchases
        on transactions.transaction_id = transaction_purchases.transaction_id
    left join purchases
        on transaction_purchases.purchase_id = purchases.purchase_id
    left join offers
        on coalesce(transactions.offer_id, purchases.offer_id) = offers.offer_id
    left join customers
        on transactions.customer_id = customers.customer_id
    where coalesce(transactions.state, 'succeeded') = 'succeeded'
),

numbered as (
    select
        *,
        row_number() over (
            partition by purchase_id, revenue_type
            order by created_at, transaction_id
        ) as purchase_charge_number
    from joined
),

final as (
    select
        transaction_id,
        resolved_site_id as site_id,
        customer_id,
        resolved_offer_id as offer_id,
        purchase_id,
        provider,
        action,
        state,
        payment_type,
        resolved_currency as currency,
        created_at,
        cast(created_at at time zone {{ setting('timezone') }} as date) as date_day,
        cast(date_trunc('month', cast(created_at at time zone {{ setting('timezone') }} as date)) as date)
            as date_month,
        revenue_type,
        amount_in_cents,
        sales_tax_in_cents,
        payment_fee_in_cents,
        cast(amount_in_cents - case when {{ setting('amounts_include_tax') }}
            then sales_tax_in_cents else 0 end as bigint) as revenue_ex_tax_in_cents,
        payment_fee_in_cents as fee_in_cents,
        payment_fee_in_cents is not null as is_fee_known,
        is_subscription_purchase,
        case when revenue_type = 'gross' then amount_in_cents else 0 end as gross_in_cents,
        case when revenue_type = 'refund' then amount_in_cents else 0 end as refunds_in_cents,
        case when revenue_type = 'dispute' then amount_in_cents else 0 end as disputes_in_cents,
        case
            when revenue_type <> 'gross' then false
            when purchase_id is not null
                then is_subscription_purchase and purchase_charge_number > 1
            else action = 'subscription_charge'
        end as is_recurring,
        settlement_amount_in_cents,
        settlement_fee_amount_in_cents,
        settlement_currency
    from numbered
)

select * from final
