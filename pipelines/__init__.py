"""The dlt pipeline layer: `sync` (pull) and `webhooks` (push), built on `common`."""
