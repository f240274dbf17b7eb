"""Spec section 5: token grants, refresh rules, revocation, 401 on every bad token, scopes."""

from __future__ import annotations

import time

import jwt
import pytest
from sandbox_contract_helpers import (
    LIMITED_CLIENT_ID,
    LIMITED_CLIENT_SECRET,
    OWNER_PASSWORD,
    OWNER_USERNAME,
    SANDBOX_CLIENT_ID,
    SANDBOX_CLIENT_SECRET,
    SITE_COLLECTIONS,
    Api,
    assert_error,
)

CLIENT = {"client_id": SANDBOX_CLIENT_ID, "client_secret": SANDBOX_CLIENT_SECRET,
          "grant_type": "client_credentials"}


@pytest.fixture
def fresh(sandbox):
    """A private session, so revoking it cannot disturb the shared `api` fixture."""
    client = Api(sandbox.base_url)
    yield client
    client.close()


def _claims(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def test_client_credentials_grant(fresh):
    response = fresh.token(**CLIENT)
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"access_token", "refresh_token", "token_type", "expires_in"}
    assert body["token_type"] == "Bearer"
    assert type(body["expires_in"]) is int and body["expires_in"] == 7200
    for name in ("access_token", "refresh_token"):
        claims = _claims(body[name])
        assert "exp" in claims, f"{name} is a JWT with exp"
    assert abs(_claims(body["access_token"])["exp"] - time.time() - 7200) < 60
    assert body["access_token"] != body["refresh_token"]
    assert SANDBOX_CLIENT_SECRET not in response.text


@pytest.mark.parametrize(
    "form",
    [
        {**CLIENT, "client_secret": "wrong-secret"},
        {**CLIENT, "client_id": "nobody"},
        {"client_id": SANDBOX_CLIENT_ID, "grant_type": "client_credentials"},
    ],
    ids=["bad-secret", "unknown-client", "no-secret"],
)
def test_bad_client_credentials_rejected(fresh, form):
    response = fresh.token(**form)
    assert response.status_code in (400, 401), response.text
    assert_error(response, response.status_code)
    # Documented: OAuth's error code rides along with the section 7 object.
    expected = "invalid_request" if "client_secret" not in form else "invalid_client"
    assert response.json()["error"] == expected
    assert "wrong-secret" not in response.text and SANDBOX_CLIENT_SECRET not in response.text


def test_unsupported_grant_type_is_named(fresh):
    response = fresh.token(client_id=SANDBOX_CLIENT_ID, client_secret=SANDBOX_CLIENT_SECRET,
                           grant_type="authorization_code")
    assert_error(response, 400, "grant_type")
    assert response.json()["error"] == "unsupported_grant_type"


@pytest.mark.parametrize(
    "form",
    [
        {**CLIENT, "grant_type": "password"},
        {**CLIENT, "grant_type": ""},
        {**CLIENT, "username": OWNER_USERNAME, "password": OWNER_PASSWORD},
        {"grant_type": "refresh_token"},
        {},
    ],
    ids=["wrong-grant", "empty-grant", "two-methods", "refresh-without-token", "empty"],
)
def test_malformed_token_requests_are_400(fresh, form):
    response = fresh.token(**form)
    assert_error(response, 400)
    assert response.json()["error"] in ("invalid_request", "unsupported_grant_type")


def test_token_endpoint_requires_form_encoding(fresh):
    response = fresh.http.post(fresh.url("oauth/token"), json=CLIENT)
    assert response.status_code in (400, 415)
    assert_error(response, response.status_code)


def test_refresh_from_client_credentials(fresh):
    old = fresh.tokens
    response = fresh.token(grant_type="refresh_token", refresh_token=old["refresh_token"])
    assert response.status_code == 200, response.text
    new = response.json()
    assert new["access_token"] != old["access_token"]
    assert new["token_type"] == "Bearer" and new["expires_in"] == 7200
    fresh.tokens = new
    assert fresh.raw_get("sites").status_code == 200


@pytest.mark.parametrize("bad", ["not-a-jwt", "access"], ids=["garbage", "access-token"])
def test_refresh_rejects_non_refresh_tokens(fresh, bad):
    token = fresh.tokens["access_token"] if bad == "access" else bad
    response = fresh.token(grant_type="refresh_token", refresh_token=token)
    assert response.status_code in (400, 401)
    assert_error(response, response.status_code)


def test_refresh_rejects_tampered_token(fresh):
    token = fresh.tokens["refresh_token"]
    head, payload, signature = token.split(".")
    tampered = f"{head}.{payload}.{signature[:-4]}{'AAAA' if signature[-4:] != 'AAAA' else 'BBBB'}"
    response = fresh.token(grant_type="refresh_token", refresh_token=tampered)
    assert response.status_code in (400, 401)


def test_user_login_grant(fresh):
    response = fresh.token(username=OWNER_USERNAME, password=OWNER_PASSWORD)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer"
    fresh.tokens = body
    assert fresh.raw_get("contacts", {"filter[site_id]": fresh.all("sites")[0]["id"]}).status_code == 200
    assert OWNER_PASSWORD not in response.text
    # Refresh works only for tokens of a client-credentials grant (5.1).
    refused = fresh.token(grant_type="refresh_token", refresh_token=body["refresh_token"])
    assert refused.status_code in (400, 401)
    assert_error(refused, refused.status_code)


def test_owner_login_holds_the_contacts_scope(fresh, api, site_id):
    response = fresh.token(username=OWNER_USERNAME, password=OWNER_PASSWORD)
    fresh.tokens = response.json()
    created = fresh.post_json("hooks", _hook_body(site_id, "tag_added"))
    assert created.status_code == 201, created.text
    api.http.delete(api.url(f"hooks/{created.json()['data']['id']}"), headers=api.headers)


def test_user_login_wrong_password(fresh):
    response = fresh.token(username=OWNER_USERNAME, password="guess")
    assert response.status_code in (400, 401)
    assert_error(response, response.status_code)
    assert "guess" not in response.text


@pytest.mark.parametrize("which", ["access_token", "refresh_token"])
def test_revoking_either_token_invalidates_both(fresh, which):
    tokens = fresh.tokens
    other = Api(fresh.base_url)  # another session stays valid
    try:
        response = fresh.http.post(fresh.url("oauth/revoke"), data={"token": tokens[which]},
                                   headers=fresh.headers)
        assert response.status_code in (200, 204), response.text
        assert_error(fresh.raw_get("sites"), 401)
        refreshed = fresh.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
        assert refreshed.status_code in (400, 401)
        assert other.raw_get("sites").status_code == 200
    finally:
        other.close()


def test_revoke_needs_the_bearer_header(fresh):
    response = fresh.http.post(fresh.url("oauth/revoke"), data={"token": fresh.tokens["access_token"]})
    assert_error(response, 401)
    assert fresh.raw_get("sites").status_code == 200, "an unauthenticated revoke must not log out"


PATHS = [*SITE_COLLECTIONS, "sites", "courses", "hooks", "hooks/purchase_sample", "contacts/2999999999"]


@pytest.mark.parametrize("path", PATHS)
def test_missing_token_is_401_everywhere(fresh, path):
    response = fresh.http.get(fresh.url(path))
    assert_error(response, 401)


@pytest.mark.parametrize(
    "header",
    ["Bearer", "Bearer not-a-jwt", "Basic c2FuZGJveDpzYW5kYm94LXNlY3JldA==", "bearer-token", "TAMPER",
     "UNSIGNED"],
)
def test_bad_token_is_401(fresh, header):
    token = fresh.tokens["access_token"]
    if header == "TAMPER":
        claims = _claims(token)
        claims["exp"] = int(time.time()) + 10**6
        header = "Bearer " + jwt.encode(claims, "not-the-sandbox-signing-key-but-32-bytes-long", algorithm="HS256")
    elif header == "UNSIGNED":
        header = "Bearer " + jwt.encode(_claims(token), None, algorithm="none")
    response = fresh.http.get(fresh.url("sites"), headers={"Authorization": header})
    assert_error(response, 401)


def test_refresh_token_is_not_a_bearer_credential(fresh):
    response = fresh.http.get(fresh.url("sites"),
                              headers={"Authorization": f"Bearer {fresh.tokens['refresh_token']}"})
    assert_error(response, 401)


def test_expired_access_token_then_refresh_until_the_refresh_token_expires(sandbox_factory):
    """`exp` has whole-second resolution, so the lifetimes leave a second of slack each way."""
    handle = sandbox_factory(scale="tiny", seed=11, token_ttl=2, refresh_token_ttl=4)
    client = Api(handle.base_url)
    started = time.monotonic()
    try:
        first = client.tokens
        assert first["expires_in"] == 2
        assert client.raw_get("sites").status_code == 200
        time.sleep(2.1)
        assert_error(client.raw_get("sites"), 401)
        response = client.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
        assert response.status_code == 200, response.text
        client.tokens = response.json()
        assert client.raw_get("sites").status_code == 200
        time.sleep(max(0.0, 4.1 - (time.monotonic() - started)))
        response = client.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
        assert response.status_code in (400, 401), "an expired refresh token must be refused"
        assert_error(response, response.status_code)
    finally:
        client.close()


def test_secrets_never_appear_in_urls_or_headers(fresh):
    response = fresh.raw_get("contacts", {"filter[site_id]": fresh.all("sites")[0]["id"]})
    text = response.text + str(dict(response.headers))
    assert fresh.tokens["access_token"] not in text
    assert SANDBOX_CLIENT_SECRET not in text


# ---- scopes -----------------------------------------------------------------------------------


@pytest.fixture
def limited(sandbox):
    client = Api(sandbox.base_url, LIMITED_CLIENT_ID, LIMITED_CLIENT_SECRET)
    yield client
    client.close()


def test_limited_client_reads_contacts(limited, api, site_id):
    response = limited.raw_get("contacts", {"filter[site_id]": site_id})
    assert response.status_code == 200
    assert [r["id"] for r in response.json()["data"]] == [
        r["id"] for r in api.get("contacts", {"filter[site_id]": site_id})["data"]
    ]


@pytest.mark.parametrize("collection", ["purchases", "transactions", "orders", "form_submissions",
                                        "platform_payments_payouts"])
def test_limited_client_cannot_read_other_scopes(limited, site_id, collection):
    response = limited.raw_get(collection, {"filter[site_id]": site_id})
    assert_error(response, 403)


def _hook_body(site_id: str, event: str, target: str = "http://127.0.0.1:9/hook") -> dict:
    return {"data": {"type": "hooks", "attributes": {"event": event, "target_url": target},
                     "relationships": {"site": {"data": {"id": site_id, "type": "sites"}}}}}


@pytest.mark.parametrize("event", ["purchase", "payment_succeeded", "order_created", "form_submission"])
def test_hook_creation_needs_the_event_scopes(limited, site_id, event):
    response = limited.post_json("hooks", _hook_body(site_id, event))
    assert_error(response, 403)


@pytest.mark.parametrize("event", ["tag_added", "tag_removed"])
def test_limited_client_may_create_contact_hooks(limited, api, site_id, event):
    response = limited.post_json("hooks", _hook_body(site_id, event))
    assert response.status_code in (200, 201), response.text
    hook_id = response.json()["data"]["id"]
    api.http.delete(api.url(f"hooks/{hook_id}"), headers=api.headers)


def test_forbidden_error_names_the_scope(limited, site_id):
    error = assert_error(limited.post_json("hooks", _hook_body(site_id, "order_created")), 403)
    assert "view:orders" in error["detail"] or "view:transactions" in error["detail"]



def test_refresh_does_not_rotate(fresh):
    """Documented: the old refresh token stays valid until it expires or is revoked."""
    refresh = fresh.tokens["refresh_token"]
    for _ in range(2):
        response = fresh.token(grant_type="refresh_token", refresh_token=refresh)
        assert response.status_code == 200, response.text


def test_refresh_with_bad_token_is_invalid_grant(fresh):
    response = fresh.token(grant_type="refresh_token", refresh_token="not-a-jwt")
    assert_error(response, 400, "refresh_token")
    assert response.json()["error"] == "invalid_grant"


def test_revoking_an_unknown_token_is_ignored(fresh):
    response = fresh.http.post(fresh.url("oauth/revoke"), data={"token": "garbage"}, headers=fresh.headers)
    assert response.status_code == 200
    assert fresh.raw_get("sites").status_code == 200


def test_client_credentials_with_a_narrower_scope(fresh, site_id):
    response = fresh.token(**CLIENT, scope="view:contacts")
    assert response.status_code == 200, response.text
    fresh.tokens = response.json()
    assert fresh.raw_get("contacts", {"filter[site_id]": site_id}).status_code == 200
    assert_error(fresh.raw_get("purchases", {"filter[site_id]": site_id}), 403)


def test_scope_beyond_the_client_is_invalid_scope(fresh):
    response = fresh.token(client_id=LIMITED_CLIENT_ID, client_secret=LIMITED_CLIENT_SECRET,
                           grant_type="client_credentials", scope="view:purchases")
    assert_error(response, 400, "scope")
    assert response.json()["error"] == "invalid_scope"


@pytest.mark.parametrize("path", ["sites", "hooks", "contact_tags"])
def test_limited_client_reads_scope_free_routes(limited, site_id, path):
    params = {"filter[site_id]": site_id} if path == "contact_tags" else None
    assert limited.raw_get(path, params).status_code == 200


def test_token_errors_never_echo_secrets(fresh):
    response = fresh.token(client_id=SANDBOX_CLIENT_ID, client_secret="s3cr3t-guess-value",
                           grant_type="client_credentials")
    assert "s3cr3t-guess-value" not in response.text


def test_tokens_carry_no_secret_and_errors_echo_no_token(fresh):
    for name in ("access_token", "refresh_token"):
        claims = _claims(fresh.tokens[name])
        assert SANDBOX_CLIENT_SECRET not in str(claims)
    claims = _claims(fresh.tokens["access_token"])
    claims["exp"] = int(time.time()) - 10
    forged = jwt.encode(claims, "a-forged-signing-key-of-at-least-32-bytes", algorithm="HS256")
    for token in (forged, fresh.tokens["refresh_token"], "opaque-secret-token-value"):
        response = fresh.http.get(fresh.url("sites"), headers={"Authorization": f"Bearer {token}"})
        assert_error(response, 401)
        assert token not in response.text
    revoked = fresh.tokens["access_token"]
    fresh.http.post(fresh.url("oauth/revoke"), data={"token": revoked}, headers=fresh.headers)
    response = fresh.http.get(fresh.url("sites"), headers={"Authorization": f"Bearer {revoked}"})
    assert_error(response, 401)
    assert revoked not in response.text


@pytest.mark.parametrize(("extra", "field"), [({"refresh_token": "x"}, "refresh_token"),
                                              ({"username": OWNER_USERNAME}, "username"),
                                              ({"password": "p"}, "password")])
def test_fields_of_another_grant_are_named(fresh, extra, field):
    response = fresh.token(**CLIENT, **extra)
    assert_error(response, 400, field)


def test_user_login_accepts_an_explicit_password_grant(fresh):
    """The spec does not show the grant_type of user login; the sandbox documents `password`
    as optional."""
    response = fresh.token(username=OWNER_USERNAME, password=OWNER_PASSWORD, grant_type="password")
    assert response.status_code == 200, response.text
    assert response.json()["token_type"] == "Bearer"
