"""Project exceptions.

Every error carries *where* it happened (resource, URL without secrets, record, field) so that a
3 a.m. failure can be diagnosed from the one `error: ...` line the CLI prints.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from creator_sync.common.errors import OneLineError

_SECRET_PARAMS = {"access_token", "refresh_token", "client_secret", "token", "password"}


def safe_url(url: str | None) -> str | None:
    """Return `url` with user info and secret-looking query parameters masked."""
    if not url:
        return url
    parts = urlsplit(str(url))
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    query = [
        (k, "***" if k.lower() in _SECRET_PARAMS else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="[],:"), ""))


class CreatorPlatformError(OneLineError):
    """An API or data problem, located by resource, URL, status and the API's error detail."""

    def __init__(
        self,
        message: str,
        *,
        resource: str | None = None,
        url: str | None = None,
        status: int | None = None,
        detail: str | None = None,
        pointer: str | None = None,
        record_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.resource = resource
        self.url = safe_url(url)
        self.status = status
        self.detail = detail
        self.pointer = pointer
        self.record_id = record_id
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.resource:
            where.append(f"resource={self.resource}")
        if self.record_id:
            where.append(f"id={self.record_id}")
        if self.field:
            where.append(f"field={self.field}")
        if self.status is not None:
            where.append(f"status={self.status}")
        if self.url:
            where.append(f"url={self.url}")
        text = self.message
        if self.detail:
            text += f": {self.detail}"
        if self.pointer:
            text += f" (at {self.pointer})"
        return f"{text} [{', '.join(where)}]" if where else text


class ApiError(CreatorPlatformError):
    """The API answered with an error status (after retries, for retryable ones)."""


class AuthError(ApiError):
    """Token could not be obtained, refreshed, or was refused."""


class BadResponseError(CreatorPlatformError):
    """The body was not the JSON:API document we expect (HTML, truncated, missing `data`...)."""


class NormalizationError(CreatorPlatformError):
    """A record's value cannot be typed as the warehouse contract says (e.g. cents not integer)."""


class UnreadableValue(NormalizationError):
    """One record's value cannot be read as its column's type (`"n/a"` as an amount): the
    record is set aside in `rejected_records` and the rest of its resource loads."""

    def __init__(self, message: str, *, value: str, **where: str | None) -> None:
        self.value = value
        super().__init__(message, **where)  # type: ignore[arg-type]


class PaginationError(CreatorPlatformError):
    """Pagination does not terminate (repeated page, page cap exceeded)."""


class ConfigurationError(CreatorPlatformError):
    """The run cannot do what it was configured to (a site the account does not have): the
    CLI treats it as a usage error (exit 2)."""

    usage = True
