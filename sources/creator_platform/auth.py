"""Token life cycle: client-credentials grant, proactive refresh from `exp`, fallback, revoke.

Tokens are held as `Secret`s so they never show up in a repr, a log line or an exception.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import jwt

from .errors import AuthError


class Secret:
    """A string that refuses to print itself. Call `reveal()` at the single point of use."""

    __slots__ = ("_value",)

    def __init__(self, value: str | Secret | None) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        self._value = value or ""

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickle the value into dlt state or traces
        return (Secret, ("",))


# (method, path, form, bearer) -> parsed JSON body; provided by the client (retries, limiter)
PostForm = Callable[[str, dict[str, str], "Secret | None"], dict[str, Any]]


def _scope_list(value: Any) -> frozenset[str] | None:
    """Scopes as an OAuth `scope` string ("a b", "a,b") or a list; None when absent."""
    if isinstance(value, str):
        return frozenset(s for s in value.replace(",", " ").split() if s)
    if isinstance(value, list | tuple):
        return frozenset(str(s) for s in value if s)
    return None


def token_scopes(token: str, body_scope: Any) -> frozenset[str] | None:
    """What the credential may read: the token response's `scope`, else the JWT's `scope` or
    `scp` claim; None when neither says (then nothing is skipped up front)."""
    found = _scope_list(body_scope)
    if found is not None:
        return found
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    for claim in ("scope", "scp"):
        found = _scope_list(claims.get(claim))
        if found is not None:
            return found
    return None


def token_expiry(token: str, expires_in: Any, now: float) -> float:
    """Expiry (epoch seconds) from the JWT `exp`, else from `expires_in`, else 5 minutes."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
        exp = claims.get("exp")
        if isinstance(exp, int | float):
            return float(exp)
    except jwt.PyJWTError:
        pass
    if isinstance(expires_in, int | float) and expires_in > 0:
        return now + float(expires_in)
    return now + 300.0


class TokenManager:
    """Thread-safe holder of the session's access/refresh tokens.

    Refreshes `margin_s` before `exp`; on a 401 the caller calls `invalidate(token)`. A failed
    refresh falls back to a new client-credentials grant.
    """

    def __init__(
        self,
        post_form: PostForm,
        client_id: str,
        client_secret: Secret,
        *,
        margin_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._post = post_form
        self._client_id = client_id
        self._secret = Secret(client_secret)
        self._margin = margin_s
        self._clock = clock
        self._lock = threading.Lock()
        self._access: Secret | None = None
        self._refresh: Secret | None = None
        self._expires_at = 0.0
        self._refresh_at = 0.0
        self.scopes: frozenset[str] | None = None  # of the current token (None: not stated)
        self.grants = 0
        self.refreshes = 0

    def __repr__(self) -> str:
        return f"TokenManager(client_id={self._client_id!r}, has_token={self._access is not None})"

    def access_token(self) -> Secret:
        with self._lock:
            if self._access is None:
                self._grant()
            elif self._clock() >= self._refresh_at:
                self._renew()
            assert self._access is not None
            return self._access

    def invalidate(self, token: Secret) -> None:
        """The server refused `token` (401): renew unless another thread already did."""
        with self._lock:
            if self._access is not None and self._access == token:
                self._renew()

    def _renew(self) -> None:
        if self._refresh:
            try:
                self._store(self._post("/oauth/token", {"grant_type": "refresh_token", "refresh_token": self._refresh.reveal()}, None))
                self.refreshes += 1
                return
            except AuthError:
                pass  # refresh token expired or revoked: start a new session
        self._grant()

    def _grant(self) -> None:
        form = {
            "grant_type": "client_credentials",
            "client_id": self._client_id,
            "client_secret": self._secret.reveal(),
        }
        self._store(self._post("/oauth/token", form, None))
        self.grants += 1

    def _store(self, body: dict[str, Any]) -> None:
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise AuthError("token endpoint answered without an access_token", resource="oauth")
        refresh = body.get("refresh_token")
        self._access = Secret(token)
        self._refresh = Secret(refresh) if isinstance(refresh, str) and refresh else None
        self.scopes = token_scopes(token, body.get("scope"))
        now = self._clock()
        self._expires_at = token_expiry(token, body.get("expires_in"), now)
        # refresh `margin` before expiry, or at 80% of a short lifetime (a 30 s token would
        # otherwise be refreshed before every request)
        lifetime = max(0.0, self._expires_at - now)
        self._refresh_at = self._expires_at - min(self._margin, 0.2 * lifetime)

    def revoke(self) -> bool:
        """Log the session out (both tokens). Best effort: returns False if it failed."""
        with self._lock:
            access, refresh = self._access, self._refresh
            self._access = self._refresh = None
        if access is None:
            return True
        try:
            self._post("/oauth/revoke", {"token": (refresh or access).reveal()}, access)
            return True
        except Exception:
            return False
