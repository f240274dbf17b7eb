"""The page's CSS, inlined into the HTML (a Python string so that it ships inside the package)."""

from __future__ import annotations

CSS = """
:root { --ink:#1F2933; --muted:#616E7C; --line:#E4E7EB; --bg:#F5F7FA; --up:#2F7D32; --down:#C62828;
        --alert:#D62728; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       font-variant-numeric: tabular-nums; }
main { max-width:1120px; margin:0 auto; padding:24px 20px 48px; }
header h1 { margin:0; font-size:24px; }
header p { margin:4px 0 0; color:var(--muted); }
.basis { margin:12px 0 20px; padding:10px 14px; background:#fff; border:1px solid var(--line);
         border-radius:6px; font-size:12.5px; }
.basis.stale { border-color:var(--alert); border-width:2px; }
.basis p.alert { margin:0 0 8px; }
.basis dl { display:grid; grid-template-columns:max-content 1fr; gap:6px 16px; margin:0; }
.basis dt { color:var(--muted); font-weight:600; }
.basis dd { margin:0; }
.basis table { width:auto; font-size:12px; margin-top:2px; }
.basis tr.alert td { color:var(--alert); }
.basis details p { margin:2px 0 0; color:var(--muted); }
.tiles { display:grid; grid-template-columns:repeat(auto-fit, minmax(200px, 1fr)); gap:12px; }
.tile { background:#fff; border:1px solid var(--line); border-radius:8px; padding:14px 16px; }
.tile h2 { margin:0 0 8px; font-size:12px; font-weight:600; text-transform:uppercase;
           letter-spacing:.04em; color:var(--muted); }
.tile .amount { font-size:22px; font-weight:650; }
.tile .line + .line { margin-top:6px; }
.tile .note, .tile .delta { font-size:12px; color:var(--muted); }
.delta.up { color:var(--up); } .delta.down { color:var(--down); }
section { margin-top:28px; }
section > h2 { font-size:18px; margin:0 0 4px; }
section > p.lead { margin:0 0 10px; color:var(--muted); }
figure.chart { margin:0 0 14px; background:#fff; border:1px solid var(--line); border-radius:8px;
               padding:10px 12px; }
figure.chart figcaption { font-weight:600; margin-bottom:4px; }
figure.chart svg { display:block; width:100%; height:auto; }
.empty { color:var(--muted); font-style:italic; }
.ok { color:var(--up); font-weight:600; }
.alert { color:var(--alert); font-weight:600; }
table { border-collapse:collapse; width:100%; background:#fff; font-size:12.5px; }
th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { color:var(--muted); font-weight:600; background:#FAFBFC; }
td.num, th.num { text-align:right; white-space:nowrap; }
tr.items > td { padding:0 8px 8px 24px; background:#FCFCFD; }
details > summary { cursor:pointer; color:var(--muted); padding:4px 0; }
table.items { font-size:11.5px; }
section p.note { margin:0 0 10px; color:var(--muted); font-size:12.5px; }
.block { margin:0 0 18px; }
.block h3 { margin:14px 0 6px; font-size:15px; }
.block h4 { margin:12px 0 4px; font-size:13px; }
td .note, span.note { color:var(--muted); font-size:11.5px; font-weight:400; }
tr.total td, tfoot.total td { font-weight:650; border-top:2px solid var(--line); }
tr[data-partial="true"] > td { color:var(--muted); font-style:italic; }
.pair { display:grid; grid-template-columns:repeat(auto-fit, minmax(420px, 1fr)); gap:0 12px; }
footer { margin-top:36px; color:var(--muted); font-size:12px; }
@media print { body { background:#fff; } figure.chart, .tile { break-inside:avoid; } }
"""
