-- description: what the finance figures are built on, one row per raw resource they read:
-- the records loaded, the newest of them, and what the last sync of the resource did (raw
-- `sync_resources`; on a warehouse synced before that table existed, the dataset's last
-- completed load). A resource with no records is not loaded, whatever the reason; nor is one
-- whose first sync has not completed (status `partial` with no completed sync yet). A figure is
-- stated only from complete resources (`is_complete`): loaded, and the latest sync of it
-- completed (status `synced`, `complete` or `ok`), or stopped `partial` after an earlier one
-- completed (complete through that one's `complete_through_at`); any other status, such as
-- `failed`, is not, and then the marts carry no amount and `incomplete_reason` says why.
-- Nor is a resource with records set aside (raw `rejected_records`: a value that cannot be
-- read; the next sync reads them again): `rejected_count` counts them.
-- Beside the records, the API's total that the last complete listing read (raw `api_totals`,
-- summed over sites; NULL until every site has one): `is_total_matched` compares it with the
-- records it can count (those created by the time it was read: records created since, by
-- incremental syncs or webhooks, are not in it; payouts by their day, `initiated_at`, whose
-- records of the total's own day may fall either side) and `total_mismatch_reason` says why
-- they differ where the warehouse can tell.
-- grain: resource
with transactions as (select * from {{ ref('stg_transactions') }}),

purchases as (select * from {{ ref('stg_purchases') }}),

payouts as (select * from {{ ref('stg_payouts') }}),

purchase_links as (select * from {{ ref('stg_purchases_transactions') }}),

sync_resources as (select * from {{ raw('sync_resources') }}),

loads as (select * from {{ raw('_dlt_loads') }}),

rejected_records as (select * from {{ raw('rejected_records') }}),

api_totals as (select * from {{ raw('api_totals') }}),

totals as (
    -- a resource's total is known when every site listed has one
    select
        resource,
        case when count(*) = count(api_total) then sum(api_total) end as api_total,
        min(read_at) as api_total_read_at,
        max(read_at) as last_read_at,
        sum(case when first_page_total <> api_total then 1 else 0 end) as changed_listings
    from api_totals
    group by resource
),

rejected as (
    select
        resource,
        count(*) as rejected_count
    from rejected_records
    group by resource
),

records as (
    select
        'transactions' as resource,
        count(*) as records_count,
        max(created_at) as newest_record_at
    from transactions
    union all
    select 'purchases', count(*), max(created_at) from purchases
    union all
    select 'payouts', count(*), max(initiated_at) from payouts
),

created_since as (
    -- records the totals cannot count (created after the last site's was read), and those
    -- created while the sites' totals were read, which each may or may not count
    select
        'transactions' as resource,
        count(case when transactions.created_at > totals.last_read_at then 1 end) as since_count,
        count(case when transactions.created_at between totals.api_total_read_at
            and totals.last_read_at then 1 end) as unsure_count
    from transactions
    inner join totals on totals.resource = 'transactions'
    union all
    select
        'purchases',
        count(case when purchases.created_at > totals.last_read_at then 1 end),
        count(case when purchases.created_at between totals.api_total_read_at
            and totals.last_read_at then 1 end)
    from purchases
    inner join totals on totals.resource = 'purchases'
    union all
    select
        'payouts',
        count(case when cast(payouts.initiated_at as date) > cast(totals.last_read_at as date)
            then 1 end),
        count(case when cast(payouts.initiated_at as date) between
            cast(totals.api_total_read_at as date) and cast(totals.last_read_at as date) then 1 end)
    from payouts
    inner join totals on totals.resource = 'payouts'
),

purchases_with_transactions as (
    select distinct purchase_links.purchase_id
    from purchase_links
    inner join transactions
        on purchase_links.transaction_id = transactions.transaction_id
),

known_missing as (
    -- addendum A7: the transactions list can hold far fewer records than the purchases
    -- suggest; each paid purchase without a loaded transaction lacks at least one
    select
        'transactions' as resource,
        count(*) as known_missing_count
    from purchases
    left join purchases_with_transactions
        on purchases.purchase_id = purchases_with_transactions.purchase_id
    where coalesce(purchases.amount_in_cents, 0) > 0
        and purchases_with_transactions.purchase_id is null
),

latest_sync as (
    -- one row per resource by contract; the latest attempt wins should a writer ever repeat one
    select *
    from (
        select
            sync_resources.*,
            row_number() over (
                partition by resource order by last_attempt_at desc nulls last
            ) as attempt_rank
        from sync_resources
    ) as ranked
    where attempt_rank = 1
),

last_load as (
    select max(inserted_at) as last_loaded_at
    from loads
    where status = 0
),

joined as (
    select
        records.resource,
        records.records_count,
        records.newest_record_at,
        latest_sync.resource is not null as is_sync_recorded,
        latest_sync.status as sync_status,
        latest_sync.reason as sync_reason,
        latest_sync.last_attempt_at,
        case
            when latest_sync.resource is not null then latest_sync.last_synced_at
            when records.records_count > 0 then last_load.last_loaded_at
        end as last_synced_at,
        latest_sync.complete_through_at as recorded_complete_through_at,
        known_missing.known_missing_count,
        coalesce(rejected.rejected_count, 0) as rejected_count,
        totals.api_total,
        totals.api_total_read_at,
        coalesce(totals.changed_listings, 0) as changed_listings,
        records.records_count - coalesce(created_since.since_count, 0) as counted_count,
        coalesce(created_since.unsure_count, 0) as unsure_count
    from records
    cross join last_load
    {{ left_joins('records', ['latest_sync', 'known_missing', 'rejected', 'totals', 'created_since'], 'resource') }}
),

final as (
    select
        resource,
        cast(records_count as bigint) as records_count,
        -- a resource whose first listing has not completed (a sync stopped at its time
        -- budget or by a signal, status `partial`) holds part of the account: not loaded
        records_count > 0
            and not coalesce(sync_status = 'partial' and last_synced_at is null, false)
            as is_loaded,
        newest_record_at,
        is_sync_recorded,
        sync_status,
        sync_reason,
        last_attempt_at,
        last_synced_at,
        -- every record created before this instant is loaded: the platform's clock when the
        -- last completed sync began listing, else that sync's own start
        coalesce(recorded_complete_through_at, last_synced_at) as complete_through_at,
        cast(known_missing_count as bigint) as known_missing_count,
        cast(rejected_count as bigint) as rejected_count,
        records_count > 0
            and (not is_sync_recorded
                or lower(sync_status) in ('synced', 'complete', 'ok')
                or (lower(sync_status) = 'partial' and last_synced_at is not null))
            and rejected_count = 0
            as is_complete,
        case
            -- a first listing still partial holds part of the account: not loaded
            when records_count = 0 or (lower(sync_status) = 'partial' and last_synced_at is null)
                then resource || ' not loaded'
            when is_sync_recorded and lower(sync_status) not in ('synced', 'complete', 'ok', 'partial')
                then resource || ' last sync ' || coalesce(sync_status, 'unknown')
            when rejected_count > 0
                then resource || ': ' || cast(rejected_count as text)
                    || ' record(s) set aside, a value that cannot be read (rejected_records)'
        end as incomplete_reason,
        cast(api_total as bigint) as api_total,
        api_total_read_at,
        -- records created since the total was read are not in it: beside it, not against it
        case
            when api_total is not null
                then api_total between counted_count - unsure_count and counted_count
        end as is_total_matched,
        case
            when api_total is null or api_total between counted_count - unsure_count and counted_count
                then null
            else cast(abs(api_total - counted_count) as text)
                || case when api_total > counted_count then ' fewer' else ' more' end
                || ' record(s) than the API''s total'
                || case
                    when counted_count < records_count
                        then ' (not counting ' || cast(records_count - counted_count as text)
                            || ' created since it was read)'
                    else ''
                end
                || ': '
                || case
                    when api_total > counted_count and rejected_count > 0
                        then cast(rejected_count as text)
                            || ' set aside in rejected_records'
                    when changed_listings > 0
                        then 'the listing changed while it was read'
                    else 'unexplained'
                end
        end as total_mismatch_reason
    from joined
)

select * from final
