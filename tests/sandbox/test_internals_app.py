"""App behaviour the contract suite does not reach: the response cache, internal errors."""

from __future__ import annotations

import httpx

FORM = {"client_id": "sandbox", "client_secret": "sandbox-secret",
        "grant_type": "client_credentials"}


def _client(handle) -> httpx.Client:
    client = httpx.Client(base_url=handle.api_url)
    token = client.post("/oauth/token", data=FORM).json()["access_token"]
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def test_cached_reads_follow_the_data_and_still_check_the_token(sandbox_factory):
    handle = sandbox_factory(seed=31)
    client = _client(handle)
    try:
        site = client.get("/sites").json()["data"][0]["id"]
        params = {"filter[site_id]": site, "page[size]": 100}
        first = client.get("/contacts", params=params)
        again = client.get("/contacts", params=params)
        assert first.content == again.content
        before = first.json()["meta"]["total_count"]
        handle.activity(40)
        after = client.get("/contacts", params=params)
        assert after.json()["meta"]["total_count"] > before, "cache must drop on new data"
        assert after.headers["date"] != first.headers["date"]
        token = client.headers["Authorization"].split()[1]
        client.post("/oauth/revoke", data={"token": token})
        assert client.get("/contacts", params=params).status_code == 401
    finally:
        client.close()


def test_a_sandbox_bug_is_still_an_error_object(sandbox_factory, monkeypatch):
    handle = sandbox_factory(seed=32)

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(handle.app, "_list", broken)
    client = _client(handle)
    try:
        response = client.get("/sites")
        assert response.status_code == 500
        error = response.json()["errors"][0]
        assert error["status"] == "500" and error["source"]["pointer"] == "/v1/sites"
    finally:
        client.close()


def test_relationship_links_lead_somewhere(sandbox):
    client = _client(sandbox)
    try:
        site = client.get("/sites").json()["data"][0]["id"]
        customers = client.get("/customers", params={"filter[site_id]": site}).json()["data"]
        customer = customers[0]
        links = customer["relationships"]["offers"]["links"]
        full = client.get(f"/customers/{customer['id']}").json()["data"]
        expected = [o["id"] for o in full["relationships"]["offers"]["data"]]
        linkage = client.get(links["self"])
        assert linkage.status_code == 200
        assert [o["id"] for o in linkage.json()["data"]] == expected
        related = client.get(links["related"]).json()["data"]
        assert [o["id"] for o in related] == expected
        assert all(o["type"] == "offers" and "attributes" in o for o in related)
        assert client.get(f"/customers/{customer['id']}/nothing").status_code == 404
    finally:
        client.close()
