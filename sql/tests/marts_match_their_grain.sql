-- test: no fan-out: one-row-per-entity marts have exactly as many rows as their staged entities
with counts as (
    select 'orders' as mart,
        (select count(*) from {{ ref('fct_orders') }}) as mart_rows,
        (select count(*) from {{ ref('stg_orders') }}) as expected_rows
    union all
    select 'customers',
        (select count(*) from {{ ref('dim_customers') }}),
        (select count(*) from {{ ref('stg_customers') }})
    union all
    select 'payouts',
        (select count(*) from {{ ref('fct_payouts') }}),
        (select count(*) from {{ ref('stg_payouts') }})
    union all
    select 'payout_reconciliation',
        (select count(*) from {{ ref('payout_reconciliation') }}),
        (select count(*) from {{ ref('stg_payouts') }})
    union all
    select 'payout_lines',
        (select count(*) from {{ ref('fct_payout_lines') }}),
        (select count(*) from {{ ref('stg_payout_lines') }})
    union all
    select 'int_transactions',
        (select count(*) from {{ ref('int_transactions') }}),
        (select count(*) from {{ ref('stg_transactions') }}
            where coalesce(state, 'succeeded') = 'succeeded')
),

final as (
    select * from counts where mart_rows <> expected_rows
)

select * from final
