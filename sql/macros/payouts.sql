{#- A payout the processor failed or canceled: its funds roll forward to the next payout, which
    carries its window again (int_payout_windows, fct_payouts, payout_reconciliation's verdict). -#}
{% macro is_rolled_forward(status) -%}
{{ status }} in ('failed', 'canceled')
{%- endmacro %}
