"""OAuth token life cycle: client-credentials, refresh and user-login grants, JWTs, revocation.

Tokens are HS256 JWTs signed with a per-process random key; `exp` uses the real wall clock so
that `--token-ttl` works in real seconds. A session id (`sid`) ties an access token to its refresh
token: revoking either revokes the session.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass

import jwt

from creator_sync.sandbox.collections import ALL_SCOPES
from creator_sync.sandbox.errors import ApiError

CLIENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sandbox": ("sandbox-secret", ALL_SCOPES),
    "limited": ("limited-secret", ("view:contacts",)),
}
OWNER_LOGIN = ("owner@example.com", "sandbox-password")
GRANT_FIELDS = {
    "client_credentials": {"client_id", "client_secret", "grant_type", "scope"},
    "refresh_token": {"refresh_token", "grant_type"},
    "password": {"username", "password", "grant_type", "scope"},
}


@dataclass(frozen=True)
class Principal:
    client_id: str
    scopes: frozenset[str]
    session: str


def _invalid(detail: str, error: str, status: int = 400, pointer: str | None = None) -> ApiError:
    return ApiError(status, detail, pointer=pointer, oauth_error=error)


class Auth:
    def __init__(self, token_ttl: int = 7200, refresh_ttl: int = 30 * 86400):
        self.token_ttl = token_ttl
        self.refresh_ttl = refresh_ttl
        self._key = secrets.token_bytes(32)
        self._revoked: set[str] = set()
        self._lock = threading.Lock()

    # -- issuing ---------------------------------------------------------------------------
    def _issue(self, subject: str, scopes: tuple[str, ...], grant: str) -> dict:
        now = int(time.time())
        sid = secrets.token_hex(8)
        common = {"iss": "creator-sync-sandbox", "sub": subject, "sid": sid,
                  "scope": " ".join(scopes), "grant": grant, "iat": now}
        access = jwt.encode({**common, "typ": "access", "exp": now + self.token_ttl,
                             "jti": secrets.token_hex(8)}, self._key, algorithm="HS256")
        refresh = jwt.encode({**common, "typ": "refresh", "exp": now + self.refresh_ttl,
                              "jti": secrets.token_hex(8)}, self._key, algorithm="HS256")
        return {"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
                "expires_in": self.token_ttl, "scope": " ".join(scopes)}

    def token(self, form: dict[str, str]) -> dict:
        """POST /v1/oauth/token. Only the fields of one grant method may be sent."""
        grant = form.get("grant_type")
        if grant is None and "username" in form:
            grant = "password"
        if grant is None:
            raise _invalid("grant_type is required", "invalid_request", pointer="grant_type")
        if grant not in GRANT_FIELDS:
            raise _invalid(f"unsupported grant_type {grant!r}", "unsupported_grant_type",
                           pointer="grant_type")
        extra = sorted(set(form) - GRANT_FIELDS[grant])
        if extra:
            raise _invalid(f"send only the fields of one grant method; {grant} does not take "
                           f"{', '.join(extra)}", "invalid_request", pointer=extra[0])
        if grant == "client_credentials":
            return self._client_credentials(form)
        if grant == "refresh_token":
            return self._refresh(form)
        return self._password(form)

    def _scopes(self, granted: tuple[str, ...], form: dict[str, str]) -> tuple[str, ...]:
        wanted = form.get("scope")
        if not wanted:
            return granted
        asked = tuple(s for s in wanted.replace(",", " ").split() if s)
        outside = sorted(set(asked) - set(granted))
        if outside:
            raise _invalid(f"scope not granted to this credential: {', '.join(outside)}",
                           "invalid_scope", pointer="scope")
        return asked

    def _client_credentials(self, form: dict[str, str]) -> dict:
        for name in ("client_id", "client_secret"):
            if not form.get(name):
                raise _invalid(f"{name} is required", "invalid_request", pointer=name)
        known = CLIENTS.get(form["client_id"])
        if known is None or not secrets.compare_digest(known[0], form["client_secret"]):
            raise _invalid("unknown client_id or wrong client_secret", "invalid_client",
                           status=401, pointer="client_secret")
        return self._issue(form["client_id"], self._scopes(known[1], form), "client_credentials")

    def _password(self, form: dict[str, str]) -> dict:
        for name in ("username", "password"):
            if not form.get(name):
                raise _invalid(f"{name} is required", "invalid_request", pointer=name)
        user, password = OWNER_LOGIN
        if form["username"].strip().lower() != user or not secrets.compare_digest(
                password, form["password"]):
            raise _invalid("wrong username or password", "invalid_grant", pointer="password")
        return self._issue(user, self._scopes(ALL_SCOPES, form), "password")

    def _refresh(self, form: dict[str, str]) -> dict:
        token = form.get("refresh_token")
        if not token:
            raise _invalid("refresh_token is required", "invalid_request",
                           pointer="refresh_token")
        claims = self._decode(token, "refresh_token")
        if claims.get("typ") != "refresh":
            raise _invalid("refresh_token is not a refresh token", "invalid_grant",
                           pointer="refresh_token")
        if claims.get("grant") != "client_credentials":
            raise _invalid("only refresh tokens from a client-credentials grant can be "
                           "refreshed", "invalid_grant", pointer="refresh_token")
        scopes = tuple(claims["scope"].split())
        return self._issue(claims["sub"], scopes, "client_credentials")

    def _decode(self, token: str, pointer: str) -> dict:
        try:
            claims = jwt.decode(token, self._key, algorithms=["HS256"],
                                options={"require": ["exp", "sid", "typ"]})
        except jwt.ExpiredSignatureError:
            raise _invalid(f"{pointer} has expired", "invalid_grant", pointer=pointer) from None
        except jwt.PyJWTError:
            raise _invalid(f"{pointer} is not a valid token", "invalid_grant",
                           pointer=pointer) from None
        with self._lock:
            if claims["sid"] in self._revoked:
                raise _invalid(f"{pointer} has been revoked", "invalid_grant", pointer=pointer)
        return claims

    # -- using -----------------------------------------------------------------------------
    def authenticate(self, header: str | None) -> Principal:
        def unauthorized(detail: str) -> ApiError:
            return ApiError(401, detail, pointer="/headers/Authorization",
                            headers={"www-authenticate": 'Bearer error="invalid_token"'})

        if not header:
            raise unauthorized("missing Authorization header (Bearer access token)")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise unauthorized("Authorization header must be 'Bearer <access token>'")
        try:
            claims = jwt.decode(token.strip(), self._key, algorithms=["HS256"],
                                options={"require": ["exp", "sid", "typ"]})
        except jwt.ExpiredSignatureError:
            raise unauthorized("access token has expired") from None
        except jwt.PyJWTError:
            raise unauthorized("access token is not valid") from None
        if claims.get("typ") != "access":
            raise unauthorized("a refresh token cannot be used as a bearer token")
        with self._lock:
            if claims["sid"] in self._revoked:
                raise unauthorized("access token has been revoked")
        return Principal(claims["sub"], frozenset(claims["scope"].split()), claims["sid"])

    def revoke(self, principal: Principal, form: dict[str, str]) -> None:
        """Revoke the session of `token` (access or refresh). Unknown tokens are a no-op
        (RFC 7009); a token of another client is refused."""
        token = form.get("token")
        if not token:
            raise _invalid("token is required", "invalid_request", pointer="token")
        try:
            claims = jwt.decode(token, self._key, algorithms=["HS256"],
                                options={"verify_exp": False})
        except jwt.PyJWTError:
            return
        if claims.get("sub") != principal.client_id:
            raise ApiError(403, "cannot revoke a token of another client", pointer="token")
        with self._lock:
            self._revoked.add(claims["sid"])
