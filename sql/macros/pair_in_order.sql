{#- One matching rule of int_payout_line_matches that pairs lines and transactions in order
    within a group (rules 1 order_number and 2 same_minute, DECISIONS.md "Matching a line").

    lines and transactions are relations (CTEs) of candidates, both carrying match_scope and the
    `keys` columns; a line's group is its keys and its `line_minute`, a transaction's its keys and
    its created_minute. Lines are ranked by `line_order`, transactions by time then id, and the
    k-th line of a group takes the k-th transaction; a group of more than one line or transaction
    is a tie resolved by that order (is_tied). Emits the CTEs <prefix>_ranked_lines,
    <prefix>_ranked_transactions and <prefix>_matches. -#}
{% macro pair_in_order(prefix, rule, lines, transactions, keys, line_minute, line_order) -%}
{%- set key_list = keys | join(', ') -%}
{{ prefix }}_ranked_lines as (
    select
        *,
        row_number() over (
            partition by {{ key_list }}, {{ line_minute }}
            order by {{ line_order }}
        ) as pair_rank,
        count(*) over (
            partition by {{ key_list }}, {{ line_minute }}
        ) as group_lines
    from {{ lines }}
),

{{ prefix }}_ranked_transactions as (
    select
        *,
        row_number() over (
            partition by {{ key_list }}, created_minute
            order by created_at, transaction_id
        ) as pair_rank,
        count(*) over (
            partition by {{ key_list }}, created_minute
        ) as group_transactions
    from {{ transactions }}
),

{{ prefix }}_matches as (
    select
        ranked_lines.match_scope,
        ranked_lines.payout_id,
        ranked_lines.line_number,
        ranked_transactions.transaction_id,
        '{{ rule }}' as match_rule,
        ranked_lines.group_lines > 1
            or ranked_transactions.group_transactions > 1 as is_tied
    from {{ prefix }}_ranked_lines as ranked_lines
    inner join {{ prefix }}_ranked_transactions as ranked_transactions
        on {{ columns_equal('ranked_lines', 'ranked_transactions', keys) }}
        and ranked_lines.{{ line_minute }} = ranked_transactions.created_minute
        and ranked_lines.pair_rank = ranked_transactions.pair_rank
)
{%- endmacro %}
