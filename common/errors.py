"""The errors whose message is the one line a command prints (`terminal.describe`).

The source's errors (`CreatorPlatformError` and its kinds) derive from `OneLineError`, so that the
terminal contract knows them without importing the source: `common` stands below it.
"""

from __future__ import annotations


class OneLineError(Exception):
    """Its message names what was wrong and where (resource, URL, flag, key), on one line.

    `usage`: a usage or configuration error (exit 2), not a failure at run time (exit 1).
    """

    usage = False
