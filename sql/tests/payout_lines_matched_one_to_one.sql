-- test: no transaction is matched to two lines: among the payouts that were not failed or
-- canceled, and within each failed or canceled payout
with scoped as (
    select
        case when is_rolled_forward then payout_id else 'live' end as match_scope,
        transaction_id,
        payout_id,
        line_number
    from {{ ref('fct_payout_lines') }}
    where transaction_id is not null
),

final as (
    select match_scope, transaction_id, count(*) as lines_count
    from scoped
    group by match_scope, transaction_id
    having count(*) > 1
)

select * from final
