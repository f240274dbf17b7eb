"""Files and folders only their owner may read, and state folders git never picks up.

Everything the tool writes holds personal data, state or logs: logs, locks, the pipeline's
local state, the webhook journal.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .errors import OneLineError

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_opener(path: str, flags: int) -> int:
    """`open(..., opener=private_opener)`: a new file is created readable by its owner only."""
    return os.open(path, flags, PRIVATE_FILE)


class UnwritableFolder(OneLineError):
    """A folder the tool must write cannot be created: named with the real cause (the
    first failure `mkdir` meets is the missing parent, which says nothing)."""

    def __init__(self, directory: Path, exc: OSError) -> None:
        blocked = Path(exc.filename) if exc.filename else directory
        cause = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        super().__init__(f"cannot create the folder {blocked}: {cause} (run from a directory "
                         "you can write, or set pipelines_dir and the warehouse's path)")


GITIGNORE_ALL = "# created by creator-sync: local state, logs or personal data; never commit\n*\n"
STATE_DIR_NAME = ".creator-sync"


def private_dir(path: str | os.PathLike[str], *, gitignore: bool = False) -> Path:
    """Create `path` (and parents) as 0700 when new; an existing directory keeps its mode.

    `gitignore`: put a `.gitignore` of `*` inside (as pytest does for its cache), so that a
    user's repository never picks the directory up, whatever their own `.gitignore` says.
    """
    directory = Path(path)
    if not directory.exists():
        try:
            directory.mkdir(parents=True, mode=PRIVATE_DIR, exist_ok=True)
        except OSError as exc:
            raise UnwritableFolder(directory, exc) from None
    if gitignore:
        ignore = directory / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError):
                ignore.write_text(GITIGNORE_ALL)
    return directory


def make_state_dir(path: str | os.PathLike[str]) -> Path:
    """Create `path` as a private directory; the `.creator-sync` folder on its path is
    git-ignored as a whole. Where a warehouse's state folder is, is `common.warehouse`'s to say."""
    directory = private_dir(path)
    for parent in (directory, *directory.parents):
        if parent.name == STATE_DIR_NAME:
            private_dir(parent, gitignore=True)
            break
    return directory
