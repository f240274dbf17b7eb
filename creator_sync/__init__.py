"""creator-sync: the one import package the wheel installs (issue 32, point 6).

Its subpackages are the repository's folders, mapped by `package-dir` in pyproject.toml:
`creator_sync.sources` (`sources/`), `.sandbox`, `.common`, `.pipelines`, `.models` (with
`.models.sql`, the `sql/` folder), `.report`. Nothing else goes to the top level, so a user's own
`common.py` or `models/` beside their script cannot shadow ours.

This package's own modules are the top layer: the `creator-sync` console script and the `demo`
that runs every step. Nothing below imports them, and this file imports nothing, because
importing any subpackage runs it first (tests/test_layers.py checks both).
"""
