-- test: staging keeps exactly one row per distinct raw transaction id (dedup without loss)
with raw as (
    select count(distinct id) as ids from {{ raw('transactions') }}
),

staged as (
    select count(*) as rows_count from {{ ref('stg_transactions') }}
),

final as (
    select raw.ids, staged.rows_count
    from raw
    cross join staged
    where raw.ids <> staged.rows_count
)

select * from final
