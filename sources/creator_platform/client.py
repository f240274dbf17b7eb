"""HTTP client for the Creator Platform API: pooled httpx, retries, rate limit, auth.

Usable outside dlt (the webhooks CLI uses it for POST /v1/hooks):

    with api_client(base_url, client_id, Secret(secret)) as api:  # the source's defaults
        doc = api.get("/contacts", params={"filter[site_id]": "1"}, resource="contacts")
        api.post("/hooks", json={...}, resource="hooks")

Every failure is a `CreatorPlatformError` subclass naming resource, URL (never a secret), status
and the API's `detail`/`source.pointer`.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
from tenacity import RetryCallState, Retrying, retry_if_exception_type

from .auth import Secret, TokenManager
from .errors import ApiError, AuthError, BadResponseError, CreatorPlatformError, safe_url
from .httppool import pooled_transport
from .ratelimit import LimiterClosed, RateLimiter
from .stats import RunStats
from .values import loads_exact

log = logging.getLogger("creator_sync.client")
# one line per retry of a failure, for the terminal even when quiet (`--no-progress`, cron):
# a host that does not answer is visible while it happens (common.terminal shows this logger)
retry_log = logging.getLogger("creator_sync.retries")
TOKEN_PATIENCE_S = 55.0  # the token endpoint gives up within a minute, whatever the settings
# a refused connection before the host answered anything in this run: nothing listens at that
# address (a wrong URL or port, a server down) far more often than a server restarting, so it
# is tried this many times (at most), by every command alike; once the host has answered, a
# refused connection is a restart and keeps every attempt (`max_attempts`)
FIRST_CONTACT_ATTEMPTS = 2

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504, 520, 522, 524})
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


class _Retryable(Exception):
    """Internal: a failure worth another attempt (kept message/status for the final error)."""

    def __init__(self, problem: str, status: int | None = None, retry_after: float | None = None,
                 *, refused: bool = False):
        super().__init__(problem)
        self.problem = problem
        self.status = status
        self.retry_after = retry_after
        self.refused = refused  # the connection was refused (nothing listening)


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def api_root(base_url: str, *, insecure: bool = False) -> str:
    """`https://host[/prefix]` -> `https://host[/prefix]/v1`; refuses plain http off loopback."""
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base URL must be http(s)://host..., got {safe_url(url)!r}")
    if parts.scheme == "http" and not insecure and not is_loopback(parts.hostname):
        raise ValueError(
            f"refusing plain http:// to non-loopback host {parts.hostname!r} "
            "(credentials would travel unencrypted); use https:// or pass --insecure"
        )
    return url if url.endswith("/v1") else url + "/v1"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date), capped at 120."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, min(seconds, 120.0))


def _error_detail(body: bytes) -> tuple[str | None, str | None]:
    """(detail, source.pointer) of the first JSON:API error, if the body has one."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body[:200].decode("utf-8", "replace").strip()
        return (text or None), None
    errors = doc.get("errors") if isinstance(doc, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        first = errors[0]
        source = first.get("source") if isinstance(first.get("source"), dict) else {}
        detail = first.get("detail") or first.get("title")
        return (str(detail) if detail else None), source.get("pointer")
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        # the token endpoint's errors: plain JSON (`application/json`, A8), OAuth's fields
        described = doc.get("error_description")
        if isinstance(described, str) and described.strip():
            return f"{doc['error']}: {described.strip()[:200]}", None
        return doc["error"], None
    return None, None


class CreatorPlatformClient:
    """One per run: a pooled, thread-safe client with retries, pacing and token management.

    The source's knobs (`Setting.client`) have no default here: the source passes its
    arguments, anything else the source's defaults (`defaults.api_client`)."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: Secret | str,
        *,
        rate_limit: float | None,
        adaptive_rate: bool,
        concurrency: int,
        detail_concurrency: int,
        timeout: float,
        max_attempts: int,
        backoff_initial: float,
        insecure: bool,
        throttle_patience: float = 600.0,
        backoff_max: float = 20.0,
        verify: bool = True,
        stats: RunStats | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not client_id:
            raise ValueError("client_id is required (config sources.creator_platform.client_id)")
        if not client_secret:
            raise ValueError(
                "client_secret is required (secrets.toml or SOURCES__CREATOR_PLATFORM__CLIENT_SECRET)"
            )
        self.api_url = api_root(base_url, insecure=insecure)
        self.concurrency = max(1, int(concurrency))
        self.detail_concurrency = max(1, int(detail_concurrency))
        self.max_attempts = max(1, int(max_attempts))
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.throttle_patience = throttle_patience
        self.stats = stats or RunStats()
        self.limiter = RateLimiter(rate_limit, adaptive=adaptive_rate)
        # set first by `close()`: reads still running in the pools (abandoned at a checkpoint)
        # send nothing more, not with the revoked token (a 401 spends the platform's budget)
        self._closing = threading.Event()
        limits = httpx.Limits(
            max_connections=self.concurrency + self.detail_concurrency + 4,
            max_keepalive_connections=self.concurrency + self.detail_concurrency + 4,
        )
        self._timeout = timeout
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            limits=limits,
            verify=verify,
            transport=transport or pooled_transport(limits, verify),
            headers={"Accept": "application/vnd.api+json, application/json"},
        )
        self.tokens = TokenManager(self._post_form, client_id, Secret(client_secret))
        self._pool: ThreadPoolExecutor | None = None
        self._detail_pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._server_date: datetime | None = None
        self._answered = False  # the host has answered a request (any status) in this run
        self._server_date_text: str | None = None
        # resource -> the largest page[size] the server accepted (after a 400 on ours)
        self.page_size_caps: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"CreatorPlatformClient(api_url={self.api_url!r})"

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> CreatorPlatformClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Revoke the session (also after a failure) and release connections and threads."""
        self._closing.set()
        try:
            self.tokens.revoke()
        finally:
            self.stats.rate = self.limiter.report()
            for pool in (self._pool, self._detail_pool):
                if pool is not None:
                    pool.shutdown(wait=False, cancel_futures=True)
            self._http.close()

    @property
    def pool(self) -> ThreadPoolExecutor:
        """Shared worker pool: `concurrency` bounds the requests in flight across resources."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="cp-http")
            return self._pool

    @property
    def detail_pool(self) -> ThreadPoolExecutor:
        """Pool for single-record reads (`include=` per record): independent GETs, so more in
        flight than for list pages; the shared rate limiter still bounds the request rate."""
        with self._pool_lock:
            if self._detail_pool is None:
                self._detail_pool = ThreadPoolExecutor(
                    self.detail_concurrency, thread_name_prefix="cp-detail"
                )
            return self._detail_pool

    @property
    def server_now(self) -> datetime:
        """The API's clock (HTTP `Date`), which relative filters must use; wall clock if unseen."""
        return self._server_date or datetime.now(UTC)

    # ------------------------------------------------------------------ public calls
    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """Absolute URL from the configured base (never from a link the server sent)."""
        query = urlencode({k: v for k, v in (params or {}).items() if v is not None}, safe="[],:")
        return f"{self.api_url}{path}" + (f"?{query}" if query else "")

    def get(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        resource: str | None = None,
        exact_decimals: bool = False,
        server_error_attempts: int | None = None,
        decode: Callable[[bytes], Any] | None = None,
    ) -> Any:
        return self.request("GET", self.url(path, params), resource=resource,
                            exact_decimals=exact_decimals,
                            server_error_attempts=server_error_attempts, decode=decode)

    def post(self, path: str, json: Any, *, resource: str | None = None) -> Any:
        body = orjson.dumps(json)
        return self.request(
            "POST",
            self.url(path),
            resource=resource,
            content=body,
            headers={"Content-Type": "application/vnd.api+json"},
        )

    def delete(self, path: str, *, resource: str | None = None) -> Any:
        return self.request("DELETE", self.url(path), resource=resource, allow_empty=True)

    # ------------------------------------------------------------------ core
    def request(
        self,
        method: str,
        url: str,
        *,
        resource: str | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        exact_decimals: bool = False,
        allow_empty: bool = False,
        authenticated: bool = True,
        server_error_attempts: int | None = None,
        decode: Callable[[bytes], Any] | None = None,
    ) -> Any:
        """Send with retries; returns the parsed JSON body (None for an allowed empty body).

        `decode`: parses the body instead of `exact_decimals`' choice (a payout detail whose
        lines are read as a stream, linestream.py); a ValueError from it is a malformed body,
        retried like one.

        `server_error_attempts` gives up early on repeated 5xx answers only, for a call with a
        fallback (a merged include the server cannot build); 429s, 401s and broken connections
        keep every attempt.
        """

        def attempt() -> Any:
            if authenticated and self._closing.is_set():  # no new token for a closed session
                raise LimiterClosed("the session is closed: no more requests")
            token = self.tokens.access_token() if authenticated else None
            hdrs = dict(headers or {})
            if token is not None:
                hdrs["Authorization"] = f"Bearer {token.reveal()}"
            try:
                return self._once(method, url, hdrs, content, exact_decimals, allow_empty, resource,
                                  decode)
            except _Unauthorized:
                if token is not None:
                    self.tokens.invalidate(token)
                raise _Retryable("401 unauthorized (token expired or revoked)", 401) from None

        return self._with_retries(attempt, method, url, resource, server_error_attempts)

    def _post_form(self, path: str, form: dict[str, str], bearer: Secret | None) -> dict[str, Any]:
        """Token endpoint call (used by TokenManager): form body, retried, never logged."""
        url = self.url(path)
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer.reveal()}"
        content = urlencode(form).encode()
        deadline = time.monotonic() + TOKEN_PATIENCE_S

        def attempt() -> Any:
            left = deadline - time.monotonic()
            if left <= 1.0:
                raise _Retryable("no answer within the token endpoint's time", None)
            try:
                return self._once("POST", url, headers, content, False, True, "oauth",
                                  timeout=min(self._timeout, left))
            except _Unauthorized as exc:
                raise AuthError(
                    "the token endpoint refused the credentials",
                    resource="oauth", url=url, status=exc.status, detail=exc.detail,
                ) from None
            except ApiError as exc:
                if exc.status is None:  # not an answer (e.g. TLS failure): keep the reason
                    raise
                raise AuthError(
                    "the token endpoint refused the request",
                    resource="oauth", url=url, status=exc.status, detail=exc.detail,
                    pointer=exc.pointer,
                ) from None

        return self._with_retries(attempt, "POST", url, "oauth", deadline=deadline) or {}

    def _with_retries(
        self, attempt: Any, method: str, url: str, resource: str | None,
        server_error_attempts: int | None = None, deadline: float | None = None,
    ) -> Any:
        """Call `attempt` until it returns (tenacity): at most `max_attempts` failed attempts,
        not counting 429s, which the rate limiter paces (`FIRST_CONTACT_ATTEMPTS` for a refused
        connection before the host answered anything); a request refused by 429s for longer
        than `throttle_patience` seconds gives up too, and so does one past `deadline`
        (monotonic clock). Every retry of a failure (not a 429: pacing is the summary's) is one
        line on `retry_log` naming the bound that applies, and the final error counts the same
        attempts: `retrying GET /v1/contacts in 8 s: read timeout (attempt 3 of 8)`, `...
        (attempt 1 of at most 8, within 25 s)` under a deadline.

        Measured: tenacity costs ~15 µs per request on the first-attempt path, 0.1 s of a
        6,500-request sync, so the retry policy stays declarative.
        """
        throttled = {"count": 0, "since": 0.0}
        began = time.monotonic()

        def most(exc: BaseException | None) -> int:
            """The failed attempts this failure is allowed."""
            if isinstance(exc, _Retryable) and exc.refused and not self._answered:
                return min(self.max_attempts, FIRST_CONTACT_ATTEMPTS)
            return self.max_attempts

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            assert isinstance(exc, _Retryable)
            return self._retry_delay(exc, state.attempt_number)

        def before_sleep(state: RetryCallState) -> None:
            self.stats.add("retries")
            exc = state.outcome.exception() if state.outcome else None
            log.debug("retrying %s %s after: %s", method, safe_url(url), exc)
            if isinstance(exc, _Retryable) and exc.status != 429:
                failed = state.attempt_number - throttled["count"]
                pause = state.upcoming_sleep
                when = ("now" if pause < 0.05 else
                        f"in {pause:.0f} s" if pause >= 1 else f"in {pause:.1f} s")
                bound = f"attempt {failed} of {most(exc)}"
                if deadline is not None:  # whichever comes first
                    left = max(0.0, deadline - 1.0 - time.monotonic())
                    bound = f"attempt {failed} of at most {most(exc)}, within {left:.0f} s"
                retry_log.warning("retrying %s %s %s: %s (%s)", method,
                                  urlsplit(url).path, when, exc.problem, bound)

        def stop(state: RetryCallState) -> bool:
            exc = state.outcome.exception() if state.outcome else None
            status = exc.status if isinstance(exc, _Retryable) else None
            if status == 429:
                if not throttled["count"]:
                    throttled["since"] = time.monotonic()
                throttled["count"] += 1
                waited = time.monotonic() - throttled["since"]
                return waited >= self.throttle_patience
            failed = state.attempt_number - throttled["count"]
            if failed >= most(exc):
                return True
            if deadline is not None and time.monotonic() >= deadline - 1.0:
                return True
            if (deadline is not None and isinstance(exc, _Retryable)
                    and exc.retry_after is not None
                    and time.monotonic() + exc.retry_after >= deadline - 1.0):
                return True  # asked to wait past the deadline: give up now, on the real answer
            return (
                server_error_attempts is not None
                and failed >= server_error_attempts
                and status is not None and status >= 500
            )

        retrying = Retrying(
            stop=stop,
            wait=wait,
            retry=retry_if_exception_type(_Retryable),
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except _Retryable as exc:
            kind = ApiError if exc.status else BadResponseError
            if exc.status == 401:
                kind = AuthError
            # the attempts the retry lines counted: 429s are the limiter's, said apart
            tries = retrying.statistics.get("attempt_number", self.max_attempts)
            failed = tries - throttled["count"]
            took = time.monotonic() - began
            log.warning("gave up on %s %s after %s attempts (%s x 429) in %.1f s: %s",
                        method, safe_url(url), failed, throttled["count"], took, exc.problem)
            later = (f" (the platform asks to retry in {exc.retry_after:.0f} s)"
                     if exc.retry_after and exc.status != 429 else "")
            took_s = f"{took:.0f} s" if took >= 10 else f"{took:.1f} s"
            what = (f"giving up after {failed} attempts in {took_s}" if exc.status != 429
                    else f"giving up after {throttled['count']} x 429 in {took_s}")
            if exc.refused and not self._answered:
                later += "; nothing answered at this address: is the base URL right?"
            raise kind(
                f"{what}; last problem: {exc.problem}{later}",
                resource=resource, url=url, status=exc.status,
            ) from None

    def _retry_delay(self, exc: _Retryable, number: int) -> float:
        """Exponential backoff with jitter; Retry-After wins; a 401 retries at once; a 429 goes
        straight back to the rate limiter, whose gate holds every thread until it may send."""
        if exc.status == 429:
            return 0.0
        base = min(self.backoff_max, self.backoff_initial * 2 ** (number - 1))
        delay = random.uniform(base / 2, base)
        if exc.status == 401:
            delay = 0.0  # a fresh token is already there
        if exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return delay

    def _once(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        exact_decimals: bool,
        allow_empty: bool,
        resource: str | None,
        decode: Callable[[bytes], Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        in_budget = resource != "oauth"
        permit = self.limiter.acquire(in_budget=in_budget)
        if in_budget and self._closing.is_set():  # (the revoke itself is an oauth request)
            self.limiter.on_error(permit)
            raise LimiterClosed("the session is closed: no more requests")
        self.stats.add("requests")
        try:
            extra = {"timeout": httpx.Timeout(timeout, connect=min(timeout, 10.0))} if timeout else {}
            response = self._http.request(method, url, headers=headers, content=content, **extra)
            body = response.content
        except httpx.TimeoutException as exc:
            self.limiter.on_error(permit)
            raise _Retryable(_timeout_kind(exc)) from None
        except httpx.TransportError as exc:  # resets, refused, truncated bodies
            self.limiter.on_error(permit)
            if self._closing.is_set():  # our own close cut it (a stopping run): no retry, no line
                raise LimiterClosed("the session is closed: no more requests") from None
            lasting = lasting_failure(exc, url)
            if lasting is not None:  # no retry can fix it: say what it is, at once
                raise ApiError(lasting, resource=resource, url=url) from None
            raise _Retryable(f"connection problem: {_connection_problem(exc)}",
                             refused=_refused(exc)) from None
        except BaseException:  # interrupted: a probe must not stay out forever
            self.limiter.on_error(permit)
            raise
        self._answered = True
        self.stats.add("bytes", len(body))
        self._note_date(response.headers.get("date"))
        status = response.status_code
        retry_after = (
            parse_retry_after(response.headers.get("retry-after"))
            if status in RETRY_STATUSES else None
        )
        # the token endpoint is rate limited on its own budget (if at all), not the API's
        self.limiter.on_response(permit, status, retry_after, in_budget=in_budget)
        if status == 429:
            self.stats.add("throttled")
        if status in RETRY_STATUSES:
            raise _Retryable(f"HTTP {status}", status, retry_after)
        if status == 401:
            detail, _ = _error_detail(body)
            raise _Unauthorized(status, detail)
        if status >= 400:
            detail, pointer = _error_detail(body)
            raise ApiError(
                f"{method} failed with HTTP {status}",
                resource=resource, url=url, status=status, detail=detail, pointer=pointer,
            )
        if not body.strip():
            if allow_empty:
                return None
            raise _Retryable(f"empty body with HTTP {status}", None)
        try:
            if decode is not None:
                return decode(body)
            if exact_decimals:
                return json.loads(body, parse_float=Decimal)
            return loads_exact(body)  # fractional numbers as Decimal, never float
        except (orjson.JSONDecodeError, ValueError, UnicodeDecodeError):
            ctype = response.headers.get("content-type", "?")
            raise _Retryable(
                f"HTTP {status} body is not valid JSON (content-type {ctype}, {len(body)} bytes)"
            ) from None

    def _note_date(self, value: str | None) -> None:
        if not value or value == self._server_date_text:
            return  # same second as the last response: nothing to parse
        self._server_date_text = value
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        self._server_date = when.astimezone(UTC)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


# TLS failures a retry may cure: the peer hung up mid-handshake (like a reset)
_TRANSIENT_TLS = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)


def lasting_failure(exc: BaseException, url: str) -> str | None:
    """What a connection failure is, when retrying cannot help: a certificate that does not
    verify, a TLS handshake that cannot succeed (plain http answering an https:// URL), a host
    name that does not resolve. None for failures worth a retry (refused, reset, timeout)."""
    host = urlsplit(url).hostname or "?"
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(cause):
            reason = getattr(cause, "verify_message", None) or "self-signed or untrusted certificate"
            return f"TLS certificate verification failed for {host} ({reason})"
        if isinstance(cause, ssl.SSLError) and not isinstance(cause, _TRANSIENT_TLS):
            reason = getattr(cause, "reason", None) or str(cause)
            hint = "; is it plain http on an https:// URL?" if _plain_http_answer(reason) else ""
            return f"TLS handshake with {host} failed ({reason}){hint}"
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve host {host!r} (DNS lookup failed: {cause.strerror or cause})"
    return None


def _plain_http_answer(reason: str) -> bool:
    return any(word in str(reason).upper() for word in (
        "WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST", "UNKNOWN_PROTOCOL",
        "PACKET_LENGTH_TOO_LONG", "RECORD LAYER FAILURE"))


def _refused(exc: BaseException) -> bool:
    """Was the connection refused (nothing listening at the address)?"""
    return any(isinstance(c, ConnectionRefusedError) for c in _causes(exc))


def _timeout_kind(exc: httpx.TimeoutException) -> str:
    """Which wait ran out, in words."""
    for kind, words in ((httpx.ConnectTimeout, "connect timeout"), (httpx.ReadTimeout, "read timeout"),
                        (httpx.WriteTimeout, "write timeout"), (httpx.PoolTimeout, "pool timeout")):
        if isinstance(exc, kind):
            return words
    return "timeout"


def _connection_problem(exc: BaseException) -> str:
    """A retryable connection failure in words (never a Python class name)."""
    causes = list(_causes(exc))
    for cause in reversed(causes):
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
    if any(isinstance(c, httpx.RemoteProtocolError) for c in causes):
        return "the server closed the connection before the response was complete"
    if any(isinstance(c, httpx.ReadError | httpx.WriteError) for c in causes):
        return "the connection broke while reading or writing"
    text = " ".join(str(causes[-1]).split())
    return text[:200] or "the connection failed"


class _Unauthorized(Exception):
    def __init__(self, status: int, detail: str | None) -> None:
        super().__init__(status)
        self.status = status
        self.detail = detail


__all__ = [
    "CreatorPlatformClient",
    "CreatorPlatformError",
    "Secret",
    "api_root",
    "is_loopback",
]
