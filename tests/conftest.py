"""Shared sandbox fixtures: a session sandbox (tiny, 2 sites, seed 42, fixed clock) and a
factory for sandboxes with custom options. Sandbox-only; areas keep their fixtures local."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandbox.options import DEFAULT_NOW
from sandbox.testing import SandboxHandle, start_sandbox

SANDBOX_CLIENT_ID = "sandbox"
SANDBOX_CLIENT_SECRET = "sandbox-secret"
LIMITED_CLIENT_ID = "limited"
LIMITED_CLIENT_SECRET = "limited-secret"
OWNER_USERNAME = "owner@example.com"
OWNER_PASSWORD = "sandbox-password"
SANDBOX_SEED = 42
SANDBOX_NOW = DEFAULT_NOW  # 2026-03-01T12:00:00Z


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxHandle]:
    """The shared read-mostly sandbox. Do not run activity on it: use `sandbox_factory`."""
    handle = start_sandbox(scale="tiny", sites=2, seed=SANDBOX_SEED, now=SANDBOX_NOW)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def sandbox_factory() -> Iterator[Callable[..., SandboxHandle]]:
    """`start(**options)` -> a fresh in-process sandbox (tiny unless given); all are stopped at
    teardown."""
    started: list[SandboxHandle] = []

    def start(**options: object) -> SandboxHandle:
        options.setdefault("scale", "tiny")
        options.setdefault("seed", SANDBOX_SEED)
        options.setdefault("now", SANDBOX_NOW)
        handle = start_sandbox(**options)
        started.append(handle)
        return handle

    try:
        yield start
    finally:
        for handle in started:
            handle.stop()
