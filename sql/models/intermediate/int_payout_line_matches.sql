-- description: each payout line matched to the listed transaction behind it, one to one within
-- a matching scope (see int_payout_lines), by three rules tried in order (DECISIONS.md,
-- "Matching a line"). Every rule requires the same site, customer, kind (a sale line only matches
-- a charge, a refund line a refund, an adjustment line a dispute), presented currency and
-- absolute presented amount; they differ in the time they compare:
--   1. order_number: a sale line whose order number names one order of the customer; the
--      transaction falls in the same UTC minute as that order;
--   2. same_minute: the transaction falls in the same UTC minute as the line;
--   3. nearest_time: within 24 hours, the line and the transaction are each other's nearest.
-- Within a group of rule 1 or 2 (same key and minute), lines and transactions are paired in
-- order (lines by time, payout initiation day, payout id, line number; transactions by time,
-- then id): the k-th line takes the k-th transaction. A group of more than one line or transaction is a
-- tie resolved by that order (is_tied). Lines that none of the rules match are not listed.
-- grain: payout_id, line_number
with lines as (select * from {{ ref('int_payout_lines') }}),

transactions as (select * from {{ ref('int_transactions') }}),

orders as (select * from {{ ref('stg_orders') }}),

candidate_lines as (
    -- a line a transaction can stand behind: a known kind, a customer, an amount and a time
    select
        match_scope,
        payout_id,
        line_number,
        site_id,
        customer_id,
        line_type as match_type,
        abs(presented_amount_in_cents) as match_amount,
        presented_currency as match_currency,
        created_at,
        date_trunc('minute', created_at) as created_minute,
        {{ epoch_seconds('created_at') }} as created_second,
        payout_initiated_date,
        order_id
    from lines
    where line_type in ('sale', 'refund', 'adjustment')
        and customer_id is not null
        and presented_amount_in_cents is not null
        and created_at is not null
),

listed as (
    select
        transaction_id,
        site_id,
        customer_id,
        case revenue_type
            when 'gross' then 'sale'
            when 'refund' then 'refund'
            else 'adjustment'
        end as match_type,
        abs(amount_in_cents) as match_amount,
        currency as match_currency,
        created_at,
        date_trunc('minute', created_at) as created_minute,
        {{ epoch_seconds('created_at') }} as created_second
    from transactions
    where customer_id is not null
),

-- rule 1: order_number -----------------------------------------------------------------------

order_lines as (
    -- the order the line's number names (int_payout_lines) must be the line's customer's
    select
        candidate_lines.*,
        orders.created_at as order_created_at,
        date_trunc('minute', orders.created_at) as order_created_minute
    from candidate_lines
    inner join orders
        on candidate_lines.order_id = orders.order_id
        and candidate_lines.customer_id = orders.customer_id
    where candidate_lines.match_type = 'sale'
        and orders.created_at is not null
),

order_keys as (
    select distinct
        match_scope, site_id, customer_id, match_amount, match_currency, order_created_minute
    from order_lines
),

order_candidates as (
    -- the sale transactions of each key
    select
        order_keys.match_scope,
        listed.*
    from listed
    inner join order_keys
        on {{ columns_equal('listed', 'order_keys', ['site_id', 'customer_id', 'match_amount', 'match_currency']) }}
        and listed.created_minute = order_keys.order_created_minute
    where listed.match_type = 'sale'
),

{{ pair_in_order(
    'order', 'order_number', 'order_lines', 'order_candidates',
    ['match_scope', 'site_id', 'customer_id', 'match_amount', 'match_currency'],
    'order_created_minute',
    'order_created_at, order_id, payout_initiated_date, payout_id, line_number'
) }},

-- rule 2: same_minute ------------------------------------------------------------------------

minute_lines as (
    select candidate_lines.*
    from candidate_lines
    left join order_matches
        on {{ columns_equal('candidate_lines', 'order_matches', ['payout_id', 'line_number']) }}
    where order_matches.payout_id is null
),

minute_keys as (
    select distinct
        match_scope, site_id, customer_id, match_type, match_amount, match_currency,
        created_minute
    from minute_lines
),

minute_candidates as (
    -- the transactions of each key not already matched in the same scope
    select
        minute_keys.match_scope,
        listed.*
    from listed
    inner join minute_keys
        on {{ columns_equal('listed', 'minute_keys', ['site_id', 'customer_id', 'match_type', 'match_amount', 'match_currency', 'created_minute']) }}
    left join order_matches
        on minute_keys.match_scope = order_matches.match_scope
        and listed.transaction_id = order_matches.transaction_id
    where order_matches.transaction_id is null
),

{{ pair_in_order(
    'minute', 'same_minute', 'minute_lines', 'minute_candidates',
    ['match_scope', 'site_id', 'customer_id', 'match_type', 'match_amount', 'match_currency'],
    'created_minute',
    'created_at, payout_initiated_date, payout_id, line_number'
) }},

-- rule 3: nearest_time -----------------------------------------------------------------------

earlier_matches as (
    select match_scope, payout_id, line_number, transaction_id from order_matches
    union all
    select match_scope, payout_id, line_number, transaction_id from minute_matches
),

nearest_lines as (
    select candidate_lines.*
    from candidate_lines
    left join earlier_matches
        on {{ columns_equal('candidate_lines', 'earlier_matches', ['payout_id', 'line_number']) }}
    where earlier_matches.payout_id is null
),

nearest_candidates as (
    select
        nearest_lines.match_scope,
        nearest_lines.payout_id,
        nearest_lines.line_number,
        nearest_lines.created_at as line_created_at,
        nearest_lines.payout_initiated_date,
        listed.transaction_id,
        listed.created_at as transaction_created_at,
        abs(nearest_lines.created_second - listed.created_second) as distance_seconds
    from nearest_lines
    inner join listed
        on {{ columns_equal('nearest_lines', 'listed', ['site_id', 'customer_id', 'match_type', 'match_amount', 'match_currency']) }}
    left join earlier_matches
        on nearest_lines.match_scope = earlier_matches.match_scope
        and listed.transaction_id = earlier_matches.transaction_id
    where earlier_matches.transaction_id is null
        and abs(nearest_lines.created_second - listed.created_second) <= 86400
),

nearest_ranked as (
    select
        *,
        row_number() over (
            partition by match_scope, payout_id, line_number
            order by distance_seconds, transaction_created_at, transaction_id
        ) as line_choice,
        row_number() over (
            partition by match_scope, transaction_id
            order by distance_seconds, line_created_at, payout_initiated_date, payout_id,
                line_number
        ) as transaction_choice,
        count(*) over (
            partition by match_scope, payout_id, line_number, distance_seconds
        ) as line_equals,
        count(*) over (
            partition by match_scope, transaction_id, distance_seconds
        ) as transaction_equals
    from nearest_candidates
),

nearest_matches as (
    select
        match_scope,
        payout_id,
        line_number,
        transaction_id,
        'nearest_time' as match_rule,
        line_equals > 1 or transaction_equals > 1 as is_tied
    from nearest_ranked
    where line_choice = 1 and transaction_choice = 1
),

final as (
    select * from order_matches
    union all
    select * from minute_matches
    union all
    select * from nearest_matches
)

select * from final
