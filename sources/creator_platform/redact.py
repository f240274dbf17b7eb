"""Masking of credentials that travel inside API data.

A hook's `target_url` carries the secret path segment that authenticates deliveries to the
webhook receiver (`<base>/hooks/<secret>`); hook listings, logs and the warehouse's
`hooks.target_url` must not hand it out.
"""

from __future__ import annotations

import re

_SECRET_SEGMENT = re.compile(r"(/hooks/)[^/?#]+")


def redact_target_url(url: str | None) -> str | None:
    """Mask the secret path segment of a receiver URL; other URLs pass unchanged."""
    if not url:
        return url
    return _SECRET_SEGMENT.sub(r"\1***", url, count=1)
