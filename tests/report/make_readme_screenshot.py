"""Regenerate docs/img/report.png, the picture of the report in docs/report.md, from demo-scale data.

    .venv/bin/python tests/report/make_readme_screenshot.py [--duckdb demo.duckdb]

Without --duckdb it runs `creator-sync demo --reset` in a temporary directory first. Not a test:
pytest collects only test_*.py files.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile

from chromium_cdp import Chromium, find_chromium
from PIL import Image

from creator_sync.report.render import write_report

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "img" / "report.png"
HEIGHT = 2600  # header, what the figures are built on, tiles and the monthly summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--duckdb", help="a synced and modelled DuckDB file (default: run the demo)"
    )
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium not found: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        db = args.duckdb
        if db is None:
            db = str(pathlib.Path(tmp) / "demo.duckdb")
            subprocess.run(
                [
                    str(pathlib.Path(sys.executable).parent / "creator-sync"),
                    "demo",
                    "--reset",
                    "--duckdb",
                    db,
                    "--report",
                    str(pathlib.Path(tmp) / "demo-report.html"),
                ],
                check=True,
                cwd=tmp,
                stdout=subprocess.DEVNULL,
            )
        report = write_report(db, str(pathlib.Path(tmp) / "report.html"))
        shot = pathlib.Path(tmp) / "shot.png"
        with Chromium(binary, width=1200) as browser:
            browser.open(report)
            browser.screenshot(shot, max_height=HEIGHT)
        # Lossless: a 256-colour palette merged the refunds and disputes colours.
        out = pathlib.Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        Image.open(shot).convert("RGB").save(out, optimize=True)
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
