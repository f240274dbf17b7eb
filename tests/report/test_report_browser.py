"""The report in a real browser (headless Chromium over the DevTools protocol)."""

from __future__ import annotations

import pathlib
import re

import pytest
from browser_checks import check_report_in_browser
from chromium_cdp import Chromium
from report_fixtures import copy_to_postgres

from creator_sync.report.page import CSP
from creator_sync.report.render import write_report

pytestmark = pytest.mark.browser

PIXEL = "http://127.0.0.1:9/pixel.png"


@pytest.fixture(scope="module")
def report(warehouse: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return write_report(str(warehouse), str(tmp_path_factory.mktemp("browser") / "report.html"))


def test_report_renders_in_chromium(
    chromium: Chromium, report: pathlib.Path, warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    seen = check_report_in_browser(chromium, report, warehouse, tmp_path / "report.png")
    assert len(seen["charts"]) == 10


@pytest.mark.postgres
def test_report_from_postgres_renders_in_chromium(
    chromium: Chromium, postgres_dsn: str, warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """The same warehouse in PostgreSQL: the page read through the PostgreSQL adapter shows
    every chart and every headline figure of the marts, and the same HTML as from DuckDB."""
    copy_to_postgres(warehouse, postgres_dsn, ("analytics", "creator_platform"))
    report = write_report(
        "unused.duckdb", str(tmp_path / "pg.html"), destination="postgres",
        postgres_dsn=postgres_dsn,
    )
    seen = check_report_in_browser(chromium, report, warehouse, tmp_path / "pg.png")
    assert len(seen["charts"]) == 10
    from_duckdb = write_report(str(warehouse), str(tmp_path / "duck.html")).read_text()
    generated = re.compile(r"generated [^<·]*")
    assert generated.sub("", report.read_text()) == generated.sub("", from_duckdb)


def test_the_browser_check_can_fail(
    chromium: Chromium, report: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """Guard against checks that cannot fail: a page that fetches and logs an error is seen, and
    the page's own CSP stops a stray external reference before any byte leaves."""
    html = report.read_text()

    unsafe = tmp_path / "unsafe.html"
    unsafe.write_text(
        html.replace(CSP, "default-src *; script-src 'unsafe-inline'").replace(
            "</main>", f'<img src="{PIXEL}"><script>console.error("boom")</script></main>'
        )
    )
    url = chromium.open(unsafe)
    assert chromium.requested_urls() == [url, PIXEL]
    assert chromium.blocked_urls() == {}
    assert "boom" in chromium.console_errors()

    stray = tmp_path / "stray.html"
    stray.write_text(html.replace("</main>", f'<img src="{PIXEL}"></main>'))
    chromium.open(stray)
    assert chromium.blocked_urls() == {PIXEL: "csp"}
    assert any("Content Security Policy" in e for e in chromium.console_errors())
