"""httpx's transport with a connection pool that is linear in its connections
(docs/performance.md#cpu).

httpcore's `ConnectionPool._assign_requests_to_connections` runs twice per request (when it is
queued and when its response closes). For every idle connection it builds a list over all
connections (`len([c.is_idle() for c in connections])`, whose length is just the number of
connections), so its cost grows with the square of the pool: with the list and detail pools'
~20 connections open, ~155 µs of CPU per call, 0.7 s of a full `small` sync (3.5 % of its CPU).

`LinearPool` does the same work in one pass: the same checks in the same order, the same
connections closed, the same request assigned to the same connection; the count is taken as
`len(connections)`, and the candidate lists are built only where they are used. Everything
else is httpcore's (pinned in requirements.lock; tests/sources/test_httppool.py compares the
two on many pool states, so an httpcore upgrade that changes the original is caught).
"""

from __future__ import annotations

from typing import Any

import httpcore
import httpx


class LinearPool(httpcore.ConnectionPool):
    """httpcore's pool, whose request assignment is linear in its connections."""

    def _assign_requests_to_connections(self) -> list[Any]:
        closing: list[Any] = []
        # closed, expired, or idle beyond the keep-alive limit (the original's count is the
        # length of a list over every connection: the number of connections)
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
            elif connection.has_expired() or (
                connection.is_idle() and len(self._connections) > self._max_keepalive_connections
            ):
                self._connections.remove(connection)
                closing.append(connection)
        for pool_request in [request for request in self._requests if request.is_queued()]:
            origin = pool_request.request.url.origin
            available = next((c for c in self._connections
                              if c.can_handle_request(origin) and c.is_available()), None)
            if available is not None:  # reuse an existing connection
                pool_request.assign_to_connection(available)
                continue
            if len(self._connections) >= self._max_connections:
                idle = next((c for c in self._connections if c.is_idle()), None)
                if idle is None:
                    continue  # the request waits for a connection
                self._connections.remove(idle)  # make room: close an idle connection
                closing.append(idle)
            connection = self.create_connection(origin)
            self._connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing


def pooled_transport(limits: httpx.Limits, verify: Any = True) -> httpx.HTTPTransport:
    """The transport `httpx.Client(limits=..., verify=...)` would build, on a `LinearPool`."""
    transport = httpx.HTTPTransport(verify=verify, limits=limits)
    if type(transport._pool) is httpcore.ConnectionPool:  # (a proxy's pool is left as it is)
        transport._pool.__class__ = LinearPool
    return transport
