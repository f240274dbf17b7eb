"""`httppool.LinearPool` assigns requests as httpcore's pool does, in one pass
(docs/performance.md#cpu)."""

from __future__ import annotations

import random
from typing import Any

import httpcore

from creator_sync.sources.creator_platform import api_client
from creator_sync.sources.creator_platform.httppool import LinearPool

ORIGINS = ("a", "b")


class FakeConnection:
    """A connection in one of httpcore's states; counts the `is_idle` questions it is asked."""

    def __init__(self, name: str, origin: str, state: str, available: bool = False) -> None:
        self.name, self.origin, self.state, self.available = name, origin, state, available
        self.idle_asked = 0

    def is_closed(self) -> bool:
        return self.state == "closed"

    def has_expired(self) -> bool:
        return self.state == "expired"

    def is_idle(self) -> bool:
        self.idle_asked += 1
        return self.state == "idle"

    def is_available(self) -> bool:
        return self.state == "idle" or self.available

    def can_handle_request(self, origin: str) -> bool:
        return origin == self.origin


class FakeRequest:
    def __init__(self, name: str, origin: str, queued: bool) -> None:
        self.name, self.queued, self.assigned = name, queued, None
        self.request = type("R", (), {"url": type("U", (), {"origin": origin})()})()

    def is_queued(self) -> bool:
        return self.queued

    def assign_to_connection(self, connection: FakeConnection) -> None:
        self.assigned, self.queued = connection.name, False


def _pool(cls: type, spec: dict[str, Any]) -> Any:
    pool = cls(max_connections=spec["max"], max_keepalive_connections=spec["keepalive"])
    pool._connections = [FakeConnection(*c) for c in spec["connections"]]
    pool._requests = [FakeRequest(*r) for r in spec["requests"]]
    made = iter(range(1000))
    pool.create_connection = lambda origin: FakeConnection(f"new{next(made)}", origin, "active")
    return pool


def _outcome(pool: Any) -> tuple[Any, ...]:
    closing = pool._assign_requests_to_connections()
    return ([c.name for c in closing], [c.name for c in pool._connections],
            [(r.name, r.assigned) for r in pool._requests])


def _random_spec(rng: random.Random) -> dict[str, Any]:
    connections = [
        (f"c{i}", rng.choice(ORIGINS), rng.choice(["closed", "expired", "idle", "active", "active"]),
         rng.random() < 0.3)
        for i in range(rng.randint(0, 12))
    ]
    requests = [(f"r{i}", rng.choice(ORIGINS), rng.random() < 0.6) for i in range(rng.randint(0, 6))]
    return {"max": rng.randint(1, 14), "keepalive": rng.randint(0, 14),
            "connections": connections, "requests": requests}


def test_linear_pool_closes_keeps_and_assigns_exactly_as_httpcore_does() -> None:
    rng = random.Random(32)
    for _ in range(3000):
        spec = _random_spec(rng)
        assert _outcome(_pool(LinearPool, spec)) == _outcome(_pool(httpcore.ConnectionPool, spec)), spec


def test_the_clients_pool_asks_each_idle_connection_a_bounded_number_of_times() -> None:
    """httpcore's pool asks every connection `is_idle` once per idle connection (20 idle
    connections: 400 questions per request, twice per request); the client's asks each a
    few times."""
    client = api_client("http://127.0.0.1:1", client_id="x", client_secret="y")
    try:
        pool = client._http._transport._pool
        assert type(pool) is LinearPool
        spec = {"max": 24, "keepalive": 24, "connections": [(f"c{i}", "a", "idle") for i in range(20)],
                "requests": [("r", "a", True)]}
        for cls, most in ((LinearPool, 2), (httpcore.ConnectionPool, None)):
            fake = _pool(cls, spec)
            _outcome(fake)
            asked = max(c.idle_asked for c in fake._connections)
            if most is not None:
                assert asked <= most
            else:
                assert asked >= 20  # the original is quadratic: this test can tell them apart
    finally:
        client.close()
