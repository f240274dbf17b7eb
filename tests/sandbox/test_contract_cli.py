"""`creator-sync sandbox` (issue 2, Options): prints one ready line with the base URL, serves the
same bytes as the in-process sandbox for the same seed, and binds loopback."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

from sandbox_contract_helpers import Api


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("creator-sync")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pipelines.cli"]


def test_cli_prints_ready_line_and_serves_the_seeded_data(sandbox):
    argv = [*_cli(), "sandbox", "--scale", "tiny", "--port", "0", "--seed", "42",
            "--now", "2026-03-01T12:00:00Z"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=60)
        assert lines and "sandbox ready at " in lines[0], (lines, proc.poll())
        base_url = lines[0].split("sandbox ready at ", 1)[1].split()[0].rstrip("/")
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
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
