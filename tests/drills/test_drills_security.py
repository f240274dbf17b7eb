"""Security drills: secrets, plain HTTP, TLS, secrets.toml, PII."""

from __future__ import annotations

from pathlib import Path

import pytest
from drillkit import security

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_no_secret_or_token_anywhere(lab):
    out = security.secret_scan_drill(lab)
    assert out.ok, out.explain()


def test_plain_http_refused_unless_insecure(lab):
    out = security.plain_http_drill(lab)
    assert out.ok, out.explain()


@pytest.fixture(scope="module")
def tls_outcome(lab):
    return security.tls_verify_drill(lab, clear_message=False)


def test_tls_verification_on_by_default(tls_outcome):
    assert tls_outcome.ok, tls_outcome.explain()


def test_tls_refusal_names_the_certificate(tls_outcome):
    reason = next(d for d in tls_outcome.details if d.startswith("reason: ")).lower()
    assert any(w in reason for w in security.TLS_WORDS), reason


def test_secrets_toml_is_git_ignored():
    out = security.gitignore_drill(REPO)
    assert out.ok, out.explain()


@pytest.mark.parametrize("mode", ["drop", "hash"])
def test_pii_option(lab, mode):
    out = security.pii_drill(lab, mode)
    assert out.ok, out.explain()
