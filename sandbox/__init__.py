"""The sandbox: a seeded, spec-faithful emulator of the Creator Platform API.

Layout: `generate` (+ `gen_catalog`, `gen_sales`, `rollups`) builds the columnar `dataset`;
`schema` and `collections` are the per-type and per-collection facts; `query`, `filters`,
`relations` and `render` answer reads; `auth`, `faults`, `ratelimit`, `webhooks`, `activity` and
`payouts` implement the rest; `app` is the ASGI app, `server`/`cli`/`testing` run it.
"""
