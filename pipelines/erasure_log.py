"""The log of erasures `forget` keeps: who was erased, as salted hashes only, and when.

A later sync or a webhook delivery may bring an erased person back (the platform still holds
them until it erases them too): the log lets the product recognise them and erase them again,
without itself holding any personal data. One JSON object per line, in the pipeline's state
folder, owner-only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from creator_sync.common.files import make_state_dir, private_opener

from .forget_scrub import Person

LOG_NAME = "erasures.jsonl"


def digest(salt: str, value: str) -> str:
    """sha256 of the salt and the value, normalised (trimmed, lower case)."""
    return hashlib.sha256((salt + " ".join(str(value).split()).lower()).encode()).hexdigest()


@dataclass(frozen=True)
class Erasure:
    erased_at: str
    emails: frozenset[str]  # digests
    ids: frozenset[str]  # digests of contact and customer ids
    erased: dict[str, object]


def log_path(pipelines_dir: str | Path) -> Path:
    return Path(pipelines_dir) / LOG_NAME


def record(pipelines_dir: str | Path, salt: str, emails: Iterable[str], ids: Iterable[str],
           erased: dict[str, object]) -> Erasure:
    """Append one erasure (hashes of the person's emails and ids, what was erased where)."""
    entry = Erasure(datetime.now(UTC).isoformat(timespec="seconds"),
                    frozenset(digest(salt, e) for e in emails),
                    frozenset(digest(salt, i) for i in ids), erased)
    make_state_dir(Path(pipelines_dir))
    line = orjson.dumps({"erased_at": entry.erased_at, "email_sha256": sorted(entry.emails),
                         "id_sha256": sorted(entry.ids), "erased": erased})
    with open(log_path(pipelines_dir), "ab", opener=private_opener) as handle:
        handle.write(line + b"\n")
    return entry


def entries(pipelines_dir: str | Path) -> Iterator[Erasure]:
    path = log_path(pipelines_dir)
    if not path.exists():
        return
    for line in path.read_bytes().splitlines():
        if line.strip():
            item = orjson.loads(line)
            yield Erasure(item["erased_at"], frozenset(item["email_sha256"]),
                          frozenset(item["id_sha256"]), item.get("erased") or {})


def erased_before(pipelines_dir: str | Path, salt: str, value: str) -> Erasure | None:
    """The last erasure of a person one of whose emails or ids is `value`, if any."""
    wanted = digest(salt, value)
    last = None
    for entry in entries(pipelines_dir):
        if wanted in entry.emails or wanted in entry.ids:
            last = entry
    return last


class ErasedPeople:
    """The erasure log as the webhook receiver reads it (again whenever it changes): a delivery
    that names a person `forget` erased is scrubbed before it lands."""

    def __init__(self, pipelines_dir: str | Path, salt: str | None) -> None:
        self.path = log_path(pipelines_dir)
        self.salt = salt
        self._stamp: float | None = None
        self._emails: frozenset[str] = frozenset()
        self._ids: frozenset[str] = frozenset()

    def _refresh(self) -> bool:
        if not self.salt or not self.path.exists():
            return False
        stamp = self.path.stat().st_mtime
        if stamp != self._stamp:
            found = list(entries(self.path.parent))
            self._emails = frozenset().union(*(e.emails for e in found))
            self._ids = frozenset().union(*(e.ids for e in found))
            self._stamp = stamp
        return bool(self._emails or self._ids)

    def named_in(self, payload: object) -> Person | None:
        """The erased people a delivery's payload names (its contacts and customers), if any."""
        if not isinstance(payload, list) or not self._refresh():
            return None
        salt = str(self.salt)
        people: dict[str, set[str]] = {"contacts": set(), "customers": set()}
        texts: set[str] = set()
        for resource in payload:
            if not isinstance(resource, dict) or resource.get("type") not in people:
                continue
            attributes = resource.get("attributes") or {}
            email = attributes.get("email")
            if (digest(salt, str(resource.get("id"))) in self._ids
                    or (isinstance(email, str) and digest(salt, email) in self._emails)):
                people[str(resource["type"])].add(str(resource.get("id")))
                texts.update(str(attributes[c]) for c in ("email", "name") if attributes.get(c))
        if not (people["contacts"] or people["customers"]):
            return None
        return Person(frozenset(people["contacts"]), frozenset(people["customers"]),
                      frozenset(texts))
