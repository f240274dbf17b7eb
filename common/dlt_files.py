"""The project's `.dlt/config.toml` and `.dlt/secrets.toml`, updated in place (`init`).

A key set here replaces the one already there (never a second copy), and everything else a user
wrote stays as written: their other keys, sections and comments (tomlkit keeps the document's
layout). The secrets file is owner-only (0600) whoever created it; every file is replaced whole
(written beside, then renamed), so an interrupted write leaves the old one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from .files import PRIVATE_FILE

DLT_DIR = ".dlt"
CONFIG_FILE = "config.toml"
SECRETS_FILE = "secrets.toml"


GITIGNORE = "# written by creator-sync init: the client secret never goes into git\nsecrets.toml\n"


def ignore_secrets(folder: Path) -> None:
    """A `.gitignore` beside the secrets file naming it, unless the folder has its own."""
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text(GITIGNORE, encoding="utf-8")


class UnreadableToml(ValueError):
    """A `.dlt` file that is not TOML: it is not overwritten."""


def read(path: Path) -> TOMLDocument:
    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:  # tomlkit's parse errors have no common base beyond this
        raise UnreadableToml(f"{path} is not valid TOML ({exc}); fix or move it first") from None


def _written_dotted(node: Any, part: str) -> bool:
    """Whether `part` of `node` is written as a dotted key (`a.b.key = 1`), not a `[header]`."""
    container = node if isinstance(node, TOMLDocument) else getattr(node, "value", None)
    return any(key is not None and key.key == part and key.is_dotted()
               for key, _ in getattr(container, "body", ()))


def _section(doc: TOMLDocument, section: str, *, create: bool) -> Any:
    node: Any = doc
    parts = section.split(".")
    dotted = False
    for depth, part in enumerate(parts, 1):
        if part not in node:
            if not create:
                return None
            # `[a.b]` alone, not an empty `[a]` above it
            node[part] = tomlkit.table(is_super_table=depth < len(parts))
        dotted = dotted or _written_dotted(node, part)
        node = node[part]
    if create and not dotted and isinstance(node, Table) and node.is_super_table():
        # a table written only through its subtables (`[a.b.c]`) holds keys now: give it a
        # header. Not one written with dotted keys (`a.b.key = 1`): a header above those would
        # move every key under `[a.b]` to `a.b.a.b.key`; new keys are written dotted too.
        node._is_super_table = False
    return node


def get(doc: TOMLDocument, section: str, key: str) -> Any:
    node = _section(doc, section, create=False)
    return node.get(key) if node is not None and hasattr(node, "get") else None


def set_keys(doc: TOMLDocument, section: str, values: Mapping[str, Any]) -> None:
    """Set each key of `section` (replacing the one there, in its place)."""
    node = _section(doc, section, create=True)
    for key, value in values.items():
        node[key] = list(value) if isinstance(value, tuple) else value


def remove_keys(doc: TOMLDocument, section: str, keys: Iterable[str]) -> list[str]:
    """Remove the keys of `section` that are there; returns those removed."""
    node = _section(doc, section, create=False)
    removed = []
    for key in keys:
        if node is not None and key in node:
            del node[key]
            removed.append(key)
    return removed


def write(path: Path, doc: TOMLDocument, *, private: bool = False) -> None:
    """Replace `path` with `doc`; `private`: mode 0600 (the secrets file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    mode = PRIVATE_FILE if private or not path.exists() else path.stat().st_mode & 0o777
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            text = tomlkit.dumps(doc)
            if tomlkit.parse(text).unwrap() != doc.unwrap():  # a layout tomlkit cannot update
                raise UnreadableToml(f"{path} cannot be updated in place (its layout would "
                                     "change what it means); set the keys by hand")
            out.write(text if text.endswith("\n") or not text else text + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, PRIVATE_FILE if private else mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
