"""Docs stay readable (issue 32 point 4, issue 33): the README at most 300 lines, every other
Markdown file of the repository at most 600, and every link between them lands on a file and a
heading that exist. (A page the README lists under "Read on" is checked by test_readme.py.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README_MAX, PAGE_MAX = 300, 600
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _markdown_files() -> list[str]:
    return subprocess.run(["git", "-C", str(ROOT), "ls-files", "*.md"], capture_output=True,
                          text=True, check=True).stdout.split()


def _anchors(text: str) -> set[str]:
    """GitHub's ids of a page's headings: lower case, punctuation dropped, spaces to dashes."""
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _read_on_pages() -> set[Path]:
    table = (ROOT / "README.md").read_text().split("## Read on", 1)[1].split("\n## ", 1)[0]
    return {ROOT / name for name in re.findall(r"^\| \[(docs/[\w-]+\.md)\]", table, re.M)}


def test_the_readme_is_short_and_no_page_is_long() -> None:
    files = _markdown_files()
    assert "README.md" in files
    lengths = {name: len((ROOT / name).read_text().splitlines()) for name in files
               if (ROOT / name).is_file()}
    assert lengths["README.md"] <= README_MAX, lengths["README.md"]
    long = {name: n for name, n in lengths.items() if n > PAGE_MAX}
    assert not long, f"Markdown files over {PAGE_MAX} lines: {long}"


def test_every_link_between_pages_lands() -> None:
    for name in _markdown_files():
        page = ROOT / name
        if not page.is_file():
            continue
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                # only a page the README lists under "Read on" may be missing here: test_readme.py
                # fails on it (while its issue is built elsewhere); any other link must land
                assert dest in _read_on_pages(), f"{name}: link to {target}: no such file"
                continue
            if anchor and dest.suffix == ".md":
                assert anchor in _anchors(dest.read_text()), f"{name}: link to {target}: no such heading"
