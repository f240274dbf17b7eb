"""`forget` and a running `listen`: the journal has one writer, so a request to erase a person
from it is left in the journal's folder for the receiver, which scrubs between two batches and
answers. Without a receiver, `forget` opens the journal and scrubs it itself.

The request names the person's texts (the journal must be searched for them), so it is written
owner-only and removed as soon as it is answered.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson

from creator_sync.common.files import private_opener

from ..forget_scrub import Person, erase_in_body
from .journal import Journal, JournalInUse

REQUEST = "forget.request"
ANSWER = "forget.answer"
ANSWER_TIMEOUT_S = 30.0


def scrub_journal(directory: Path, person: Person, timeout: float = ANSWER_TIMEOUT_S) -> str:
    """Erase the person from the journal in `directory`; returns what happened, in words."""
    if not directory.is_dir():
        return "no journal"
    try:
        journal = Journal(directory)
    except JournalInUse:
        return _ask_the_receiver(directory, person, timeout)
    try:
        changed = journal.scrub(lambda body: erase_in_body(body, person))
    finally:
        journal.close()
    return f"{changed} deliveries scrubbed"


def _ask_the_receiver(directory: Path, person: Person, timeout: float) -> str:
    request = directory / REQUEST
    answer = directory / ANSWER
    answer.unlink(missing_ok=True)
    body = orjson.dumps({"contact_ids": sorted(person.contact_ids),
                         "customer_ids": sorted(person.customer_ids),
                         "texts": sorted(person.texts)})
    _write_atomically(request, body)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if answer.exists():
                changed = int(orjson.loads(answer.read_bytes())["changed"])
                answer.unlink(missing_ok=True)
                return f"{changed} deliveries scrubbed by the running listen"
            time.sleep(0.1)
    finally:
        request.unlink(missing_ok=True)
    raise TimeoutError(f"the running listen did not scrub its journal {directory} within "
                       f"{timeout:.0f} s; run forget again once it is stopped")


def answer_pending(journal: Journal) -> bool:
    """For the receiver, between batches: scrub as asked, answer; True if it did (the caller's
    reader must locate its place again)."""
    request = journal.directory / REQUEST
    if not request.exists():
        return False
    try:
        asked = orjson.loads(request.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False  # half-written by a forget that died: it is gone or rewritten
    person = Person(frozenset(asked["contact_ids"]), frozenset(asked["customer_ids"]),
                    frozenset(asked["texts"]))
    changed = journal.scrub(lambda body: erase_in_body(body, person))
    request.unlink(missing_ok=True)
    _write_atomically(journal.directory / ANSWER, orjson.dumps({"changed": changed}))
    return True


def _write_atomically(path: Path, body: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb", opener=private_opener) as handle:
        handle.write(body)
    os.replace(tmp, path)
