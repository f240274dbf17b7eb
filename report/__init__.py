"""The static HTML finance report: `write_report` in `report.render`, `creator-sync report` in
`report.cli`. Reads the `analytics` marts (read-only) and writes one self-contained page."""
