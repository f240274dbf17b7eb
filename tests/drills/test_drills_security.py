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


def test_tls_verification_on_by_default(lab):
    out = security.tls_verify_drill(lab)
    assert out.ok, out.explain()


def test_secrets_toml_is_git_ignored():
    out = security.gitignore_drill(REPO)
    assert out.ok, out.explain()


@pytest.mark.parametrize("mode", ["drop", "hash"])
def test_pii_option(lab, mode):
    out = security.pii_drill(lab, mode)
    assert out.ok, out.explain()
