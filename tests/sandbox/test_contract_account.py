"""Addendum A4: `GET /v1/me` (the credential's user), `GET /v1/version` (no authentication, a
health check that answers 503 when the service is unavailable) and `GET /v1/sites/{id}`."""

from __future__ import annotations

import re

import httpx
import pytest
from sandbox_contract_helpers import (
    ISO_TS,
    LIMITED_CLIENT_ID,
    LIMITED_CLIENT_SECRET,
    OWNER_PASSWORD,
    OWNER_USERNAME,
    Api,
    assert_error,
    parse_ts,
)


def _user(client: Api) -> dict:
    body = client.get("me")
    data = body["data"]
    assert isinstance(data["id"], str) and data["id"].isdigit() and data["type"]
    attributes = data["attributes"]
    assert {"name", "email", "initials", "role_level"} <= set(attributes)
    assert all(isinstance(attributes[k], str) and attributes[k] for k in attributes)
    words = attributes["name"].split()
    assert attributes["initials"] == "".join(w[0] for w in words).upper()
    assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", attributes["email"])
    assert re.fullmatch(r"[A-Z_]+", attributes["role_level"])
    return data


def test_me_is_the_credentials_user(api, sandbox):
    owner = _user(api)
    assert owner["attributes"]["role_level"] == "OWNER"
    limited = Api(sandbox.base_url, LIMITED_CLIENT_ID, LIMITED_CLIENT_SECRET)
    try:
        other = _user(limited)
    finally:
        limited.close()
    assert other["id"] != owner["id"]
    assert other["attributes"]["role_level"] in ("ADMINISTRATOR", "OWNER")


def test_me_of_the_owner_login_is_the_owner(api, sandbox):
    login = Api(sandbox.base_url, authenticate=False)
    try:
        response = login.token(username=OWNER_USERNAME, password=OWNER_PASSWORD)
        assert response.status_code == 200
        login.tokens = response.json()
        user = _user(login)
    finally:
        login.close()
    assert user["attributes"]["email"] == OWNER_USERNAME
    assert user == _user(api), "the sandbox client belongs to the owner"


def test_me_needs_a_token(api):
    assert_error(api.raw_get("me", headers={}), 401)


def test_version_needs_no_token(api):
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        response = api.raw_get("version", headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert isinstance(body["meta"]["title"], str) and body["meta"]["title"]
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?", body["meta"]["version"])
        assert body["links"]["documentation"].startswith("https://")
        assert isinstance(body["jsonapi"]["version"], str) and body["jsonapi"]["version"]


def test_version_answers_503_when_the_service_is_unavailable(sandbox_factory):
    handle = sandbox_factory(maintenance=True)
    with httpx.Client(timeout=30) as http:
        for path in ("/v1/version", "/v1/sites", "/v1/oauth/token"):
            response = http.request("POST" if "oauth" in path else "GET", handle.api_url[:-3] + path)
            assert_error(response, 503)
            assert response.headers.get("retry-after") == "60"
        assert http.get(handle.base_url + "/_sandbox/health").status_code == 200
        switch = http.post(handle.base_url + "/_sandbox/maintenance", json={"on": False})
        assert switch.status_code == 200 and switch.json() == {"maintenance": False}
        assert http.get(handle.api_url + "/version").status_code == 200
        http.post(handle.base_url + "/_sandbox/maintenance", json={"on": True})
        assert http.get(handle.api_url + "/version").status_code == 503
        bad = http.post(handle.base_url + "/_sandbox/maintenance", json={"on": "yes"})
        assert_error(bad, 422, "/on")


def test_site_read_has_the_live_attributes(api, site_ids):
    for site_id in site_ids:
        body = api.get(f"sites/{site_id}")
        data = body["data"]
        assert data["id"] == site_id and data["type"] == "sites"
        a = data["attributes"]
        assert isinstance(a["title"], str) and a["title"]
        assert re.fullmatch(r"[a-z0-9-]+", a["subdomain"])
        assert ISO_TS.match(a["created_at"]) and ISO_TS.match(a["updated_at"])
        assert parse_ts(a["updated_at"]) >= parse_ts(a["created_at"])
        assert {"name", "currency", "timezone"} <= set(a), "the earlier attributes stay"
        listed = {s["id"]: s for s in api.all("sites")}[site_id]
        assert listed["attributes"] == a
    assert len({api.get(f"sites/{s}")["data"]["attributes"]["subdomain"] for s in site_ids}) == 2


@pytest.mark.parametrize("bad", ["2999999999", "abc", "2200000099"])
def test_site_read_of_an_unknown_id_is_404(api, bad):
    assert_error(api.raw_get(f"sites/{bad}"), 404)
