-- test: mrr = previous month's mrr + new + expansion + contraction + churned + reactivation, the
-- previous month is the mart's own previous row, and months have no gaps
with mrr as (
    select
        *,
        lag(mrr_in_cents) over (partition by site_id, currency order by date_month) as lag_mrr,
        lag(date_month) over (partition by site_id, currency order by date_month) as lag_month
    from {{ ref('mrr_monthly') }}
),

final as (
    select *
    from mrr
    where mrr_in_cents <> previous_mrr_in_cents + new_mrr_in_cents + expansion_mrr_in_cents
            + contraction_mrr_in_cents + churned_mrr_in_cents + reactivation_mrr_in_cents
        or previous_mrr_in_cents <> coalesce(lag_mrr, 0)
        or (lag_month is not null and cast(lag_month + interval '1 month' as date) <> date_month)
        or new_mrr_in_cents < 0 or expansion_mrr_in_cents < 0 or reactivation_mrr_in_cents < 0
        or contraction_mrr_in_cents > 0 or churned_mrr_in_cents > 0
)

select * from final
