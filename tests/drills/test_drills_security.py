"""Security drills: secrets, plain HTTP, TLS, secrets.toml, PII."""

from __future__ import annotations

from pathlib import Path

import pytest
from drillkit import security
from drillkit.drills import DrillOutcome, Lab, run_parallel

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

# The drills that sync, keyed by the tests that read them; the selected ones run two at a time
# (DRILLS_WORKERS), each with its own sandbox and workspace. Longest first.
DRILLS = {
    "secrets_never_leak": security.secret_scan_drill,
    "tls_verified": lambda lab: security.tls_verify_drill(lab, clear_message=False),
    "pii_drop": lambda lab: security.pii_drill(lab, "drop"),
    "pii_hash": lambda lab: security.pii_drill(lab, "hash"),
    "plain_http_refused": security.plain_http_drill,
}
TESTS = {
    "test_no_secret_or_token_anywhere": ["secrets_never_leak"],
    "test_plain_http_refused_unless_insecure": ["plain_http_refused"],
    "test_tls_verification_on_by_default": ["tls_verified"],
    "test_tls_refusal_names_the_certificate": ["tls_verified"],
    "test_pii_option": ["pii_drop", "pii_hash"],
}


@pytest.fixture(scope="module")
def outcomes(lab: Lab, selected) -> dict[str, DrillOutcome]:
    lab.reference  # noqa: B018 - built once, before the drills that compare against it
    wanted = {d for test in selected() for d in TESTS.get(test, [])}
    names = [n for n in DRILLS if n in wanted]
    done = run_parallel([lambda n=n: [DRILLS[n](lab)] for n in names])
    return {n: outs[0] for n, outs in zip(names, done, strict=True)}


def test_no_secret_or_token_anywhere(outcomes):
    out = outcomes["secrets_never_leak"]
    assert out.ok, out.explain()


def test_plain_http_refused_unless_insecure(outcomes):
    out = outcomes["plain_http_refused"]
    assert out.ok, out.explain()


def test_tls_verification_on_by_default(outcomes):
    out = outcomes["tls_verified"]
    assert out.ok, out.explain()


def test_tls_refusal_names_the_certificate(outcomes):
    out = outcomes["tls_verified"]
    reason = next(d for d in out.details if d.startswith("reason: ")).lower()
    assert any(w in reason for w in security.TLS_WORDS), reason


def test_secrets_toml_is_git_ignored():
    out = security.gitignore_drill(REPO)
    assert out.ok, out.explain()


@pytest.mark.parametrize("mode", ["drop", "hash"])
def test_pii_option(outcomes, mode):
    out = outcomes[f"pii_{mode}"]
    assert out.ok, out.explain()
