"""`creator-sync sandbox` (issue 2, Options): prints one ready line with the base URL, serves the
same bytes as the in-process sandbox for the same seed, and binds loopback."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from sandbox_contract_helpers import Api, assert_error


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("creator-sync")
    return [str(script)] if script.exists() else [sys.executable, "-m", "creator_sync.cli"]


@contextlib.contextmanager
def _serve(*flags: str) -> Iterator[str]:
    """`creator-sync sandbox --scale tiny --port 0 ...` until the block ends; yields its base URL."""
    argv = [*_cli(), "sandbox", "--scale", "tiny", "--port", "0", *flags]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=60)
        assert lines and "sandbox ready at " in lines[0], (lines, proc.poll())
        yield lines[0].split("sandbox ready at ", 1)[1].split()[0].rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_cli_prints_ready_line_and_serves_the_seeded_data(sandbox):
    with _serve("--seed", "42", "--now", "2026-03-01T12:00:00Z") as base_url:
        parts = urlsplit(base_url)
        assert parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.port
        cli, inproc = Api(base_url), Api(sandbox.base_url)
        try:
            site = inproc.all("sites")[0]["id"]
            for path, params in (("sites", None), ("contacts", {"filter[site_id]": site, "page[size]": 30})):
                ours = cli.raw_get(path, params).content.replace(base_url.encode(), b"BASE")
                theirs = inproc.raw_get(path, params).content.replace(sandbox.base_url.encode(), b"BASE")
                assert ours == theirs, path
        finally:
            cli.close()
            inproc.close()


def test_cli_brand_word_serves_payouts_under_it(sandbox):
    """Addendum A1: `--brand acme` serves /v1/acme_payments_payouts, type acme_payments_payouts,
    with the same data; the default word answers 404."""
    with _serve("--seed", "42", "--now", "2026-03-01T12:00:00Z", "--brand", "acme") as base_url:
        cli, inproc = Api(base_url), Api(sandbox.base_url)
        try:
            site = inproc.all("sites")[0]["id"]
            ours = cli.get("acme_payments_payouts", {"filter[site_id]": site})
            theirs = inproc.get("platform_payments_payouts", {"filter[site_id]": site})
            assert {p["type"] for p in ours["data"]} == {"acme_payments_payouts"}
            assert [p["attributes"] for p in ours["data"]] == [p["attributes"] for p in theirs["data"]]
            assert_error(cli.raw_get("platform_payments_payouts", {"filter[site_id]": site}), 404)
        finally:
            cli.close()
            inproc.close()


def test_cli_refuses_a_brand_that_is_not_one_word():
    result = subprocess.run([*_cli(), "sandbox", "--brand", "Acme Co", "--port", "0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--brand" in result.stderr and "Traceback" not in result.stderr
