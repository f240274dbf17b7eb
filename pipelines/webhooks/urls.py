"""The receiver's URL scheme, `<base>/hooks/<secret>`, and how to show such a URL safely."""

from __future__ import annotations

from sources.creator_platform.redact import redact_target_url

HOOKS_PREFIX = "/hooks/"

__all__ = ["HOOKS_PREFIX", "redact_target_url"]
