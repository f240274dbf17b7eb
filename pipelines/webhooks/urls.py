"""The receiver's URL scheme, `<base>/hooks/<secret>`, its secret rule, and how to show such a
URL safely."""

from __future__ import annotations

from urllib.parse import urlsplit

from creator_sync.sources.creator_platform import redact_target_url

HOOKS_PREFIX = "/hooks/"
MIN_SECRET_CHARS = 16
SECRET_RULE = (f"at least {MIN_SECRET_CHARS} characters (it is the only thing between the "
               "internet and your warehouse); e.g. python -c 'import secrets; "
               "print(secrets.token_urlsafe(32))'")


def weak_secret(secret: str) -> str | None:
    """Why `listen` would refuse `secret` (None: it would take it)."""
    return None if len(secret) >= MIN_SECRET_CHARS else f"must be {SECRET_RULE}"


def target_secret(target_url: str) -> str | None:
    """The secret segment of a `listen` target URL (`.../hooks/<secret>`); None for a URL of
    another shape (another receiver's)."""
    path = urlsplit(target_url).path
    _, found, secret = path.rpartition(HOOKS_PREFIX)
    return secret if found and "/" not in secret else None


__all__ = ["HOOKS_PREFIX", "MIN_SECRET_CHARS", "redact_target_url", "target_secret",
           "weak_secret"]
