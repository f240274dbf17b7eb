-- description: one row per subscriber (customer) and reporting month in which their MRR moved:
-- new, expansion, contraction, churn or reactivation, with the MRR before and after; a churn
-- carries the reason the platform gave for ending the subscription and its kind. Summed per
-- site, currency, month and movement it equals mrr_monthly's movement columns.
-- grain: site_id, currency, customer_id, date_month
with subscriber_months as (select * from {{ ref('int_subscriber_mrr_months') }}),

subscription_months as (select * from {{ ref('int_subscription_months') }}),

subscriptions as (select * from {{ ref('int_subscriptions') }}),

months as (select * from {{ ref('int_month_spine') }}),

movements as (
    select
        site_id,
        currency,
        subscriber_id,
        date_month,
        previous_mrr_in_cents as mrr_before_in_cents,
        mrr_in_cents as mrr_after_in_cents,
        case
            when new_mrr_in_cents <> 0 then 'new'
            when reactivation_mrr_in_cents <> 0 then 'reactivation'
            when expansion_mrr_in_cents <> 0 then 'expansion'
            when contraction_mrr_in_cents <> 0 then 'contraction'
            when churned_mrr_in_cents <> 0 then 'churn'
        end as movement
    from subscriber_months
    where mrr_in_cents <> previous_mrr_in_cents
),

churns as (
    select *
    from movements
    where movement = 'churn'
),

ended as (
    -- the subscriptions a churned subscriber held at last month's snapshot and no longer holds
    select
        churns.site_id,
        churns.currency,
        churns.subscriber_id,
        churns.date_month,
        previous_months.purchase_id,
        previous_months.mrr_in_cents,
        subscriptions.deactivated_at,
        subscriptions.deactivation_reason
    from churns
    inner join months
        on churns.date_month = months.date_month
    inner join months as previous_month
        on previous_month.month_index = months.month_index - 1
    inner join subscription_months as previous_months
        on {{ columns_equal('churns', 'previous_months', ['site_id', 'currency', 'subscriber_id']) }}
        and previous_months.date_month = previous_month.date_month
    left join subscription_months as current_months
        on previous_months.purchase_id = current_months.purchase_id
        and current_months.date_month = churns.date_month
    inner join subscriptions
        on previous_months.purchase_id = subscriptions.purchase_id
    where current_months.purchase_id is null
),

churn_reasons as (
    -- one reason per churn: the ended subscription that carried the most MRR, then the one
    -- that ended last
    select *
    from (
        select
            ended.*,
            row_number() over (
                partition by site_id, currency, subscriber_id, date_month
                order by mrr_in_cents desc, deactivated_at desc nulls last, purchase_id
            ) as reason_rank
        from ended
    ) as ranked
    where reason_rank = 1
),

final as (
    select
        movements.site_id,
        movements.currency,
        movements.date_month,
        movements.subscriber_id as customer_id,
        movements.movement,
        cast(movements.mrr_before_in_cents as bigint) as mrr_before_in_cents,
        cast(movements.mrr_after_in_cents as bigint) as mrr_after_in_cents,
        cast(movements.mrr_after_in_cents - movements.mrr_before_in_cents as bigint)
            as mrr_change_in_cents,
        churn_reasons.purchase_id as churn_purchase_id,
        churn_reasons.deactivation_reason as churn_reason,
        case
            when movements.movement <> 'churn' then null
            -- the platform's words, matched loosely so that a synonym lands in the same kind;
            -- money taken back first, then a failed payment, then a cancellation
            when lower(churn_reasons.deactivation_reason) like '%refund%'
                or lower(churn_reasons.deactivation_reason) like '%disput%'
                or lower(churn_reasons.deactivation_reason) like '%chargeback%'
                then 'refunded_or_disputed'
            when lower(churn_reasons.deactivation_reason) like '%fail%'
                or lower(churn_reasons.deactivation_reason) like '%declin%'
                or lower(churn_reasons.deactivation_reason) like '%unpaid%'
                or lower(churn_reasons.deactivation_reason) like '%past_due%'
                or lower(churn_reasons.deactivation_reason) like '%delinquen%'
                or lower(churn_reasons.deactivation_reason) like '%dunning%'
                then 'payment_failed'
            when lower(churn_reasons.deactivation_reason) like '%cancel%'
                or lower(churn_reasons.deactivation_reason) like '%voluntar%'
                then 'voluntary'
            else 'unknown'
        end as churn_kind,
        months.is_partial_month
    from movements
    inner join months
        on movements.date_month = months.date_month
    left join churn_reasons
        on {{ columns_equal('movements', 'churn_reasons', ['site_id', 'currency', 'subscriber_id', 'date_month']) }}
)

select * from final
