"""The receiver's URL scheme, `<base>/hooks/<secret>`, and how to show such a URL safely."""

from __future__ import annotations

import re

HOOKS_PREFIX = "/hooks/"
_SECRET_SEGMENT = re.compile(r"(/hooks/)[^/?#]+")


def redact_target_url(url: str | None) -> str | None:
    """Mask the secret path segment: hook listings, logs and the warehouse's `hooks.target_url`
    must not hand out the credential that authenticates deliveries."""
    if not url:
        return url
    return _SECRET_SEGMENT.sub(r"\1***", url, count=1)
