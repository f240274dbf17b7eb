"""`creator-sync sandbox` as a process: flags, the ready line, clean stop."""

from __future__ import annotations

import socket

import httpx
import pytest
from click.testing import CliRunner

from creator_sync.sandbox.cli import sandbox_command
from creator_sync.sandbox.testing import run_sandbox_process

ISSUE_FLAGS = ("--host", "--port", "--seed", "--scale", "--sites", "--now", "--token-ttl",
               "--page-size-default", "--page-size-max", "--rate-limit", "--latency-ms",
               "--fault-rate", "--quirks", "--activity-interval", "--brand",
               "--maintenance")


def test_help_lists_every_flag_of_the_issue():
    result = CliRunner().invoke(sandbox_command, ["--help"])
    assert result.exit_code == 0
    for flag in ISSUE_FLAGS:
        assert flag in result.output, flag


def test_bad_option_is_a_usage_error():
    result = CliRunner().invoke(sandbox_command, ["--page-size-default", "50",
                                                  "--page-size-max", "10"])
    assert result.exit_code == 2
    assert "page_size_default" in result.output


def test_process_prints_ready_line_serves_and_stops():
    with run_sandbox_process(scale="tiny", seed=3, port=0, now="2025-06-01T00:00:00Z") as proc:
        assert proc.base_url.startswith("http://127.0.0.1:")
        response = httpx.post(proc.api_url + "/oauth/token", data={
            "client_id": "sandbox", "client_secret": "sandbox-secret",
            "grant_type": "client_credentials"})
        assert response.status_code == 200
        assert response.headers["date"] == "Sun, 01 Jun 2025 00:00:00 GMT"
        assert proc.activity(2)["events"] == 2
    assert proc.proc.poll() is not None, "the process must be gone after the with block"


def test_a_process_that_dies_before_ready_reports_its_stderr():
    with socket.socket() as taken:  # the port is in use: uvicorn says so on stderr and exits
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match="exited before ready") as err:
            run_sandbox_process(scale="tiny", seed=3, port=port, timeout=60)
    assert "address" in str(err.value).lower() or str(port) in str(err.value)
