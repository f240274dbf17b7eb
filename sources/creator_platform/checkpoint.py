"""Where a stopped listing goes on: its place, kept in the site's resource state.

A sync commits what it has read every `checkpoint_every` seconds (pipelines/sync.py runs the
source in rounds: each round's load package carries the resource state). A complete listing
(no filter: a first sync, a full refresh) that a checkpoint, the time budget or a signal stops
keeps `RESUME_KEY` in its site's state: the plan it was reading, the platform's clock when it
began, the newest cursor value read, the page to go on from and how many records came before
that page. The next round (or run) reads the same listing from that page on; the cursors
advance only when the listing completes, to the clock at its first start.

The page to go on from is the last page read, read again: records deleted or archived since
move later records onto earlier pages, by up to a page without a skip. A listing sorted by a
field that updates change (`updated_at`) goes on from that page's lowest value of it instead
(`Place.since`, by the server filter, from page 1): records updated meanwhile move from before
the place to the end, by any number of pages, and would push unread records behind it. Of that page, only the
records not loaded already (not among the ids the place keeps) are processed: no detail read
twice; a record read twice otherwise is merged on its key. A site finished while others of the same resource were not is marked done
until the resource completes, so it is not read again meanwhile.

A listing with a window (an incremental run) is not resumable by page (newest first, or read
backwards from its tail): a checkpoint lets it read on; the budget or a signal drops its
place, and the next run reads that window again from its (unmoved) cursor.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .values import parse_timestamp

RESUME_KEY = "resume"  # in a site's resource state


def _iso(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


@dataclass(frozen=True)
class Place:
    """Where a stopped listing goes on (see the module docstring)."""

    page: int  # read again first: the overlap that covers records moved onto earlier pages
    before: int  # records on the pages before `page`, for the final count check
    started: datetime  # the platform's clock when the listing first began
    cursor: datetime | None  # the newest cursor value read so far
    reason: str  # the plan's reason, for the log and the summary
    # ids of the records of `page` already loaded (with their detail reads): read again, only
    # the records that moved onto it since are new
    ids: tuple[str, ...] = ()
    # a listing sorted by a field records change (`updated_at`): the lowest value of that field
    # on `page`. It goes on from there by the server filter (`field >= since`), not by page
    # number: activity meanwhile moves the records it updates from before the place to the
    # end, so later records move onto earlier pages, more than the page read again covers
    since: datetime | None = None

    def to_state(self) -> dict[str, Any]:
        state = {"page": self.page, "before": self.before, "started": _iso(self.started),
                 "cursor": _iso(self.cursor), "reason": self.reason, "ids": list(self.ids)}
        if self.since is not None:
            state["since"] = _iso(self.since)
        return state


def place_of(site_state: dict[str, Any]) -> Place | None:
    """The place a stopped listing of this site left, if any (a malformed one is ignored)."""
    raw = site_state.get(RESUME_KEY)
    if not isinstance(raw, dict) or not raw.get("page") or not raw.get("started"):
        return None
    try:
        return Place(page=max(1, int(raw["page"])), before=max(0, int(raw.get("before") or 0)),
                     started=parse_timestamp(raw["started"]),
                     cursor=parse_timestamp(raw["cursor"]) if raw.get("cursor") else None,
                     reason=str(raw.get("reason") or "first sync"),
                     ids=tuple(str(i) for i in raw.get("ids") or ()),
                     since=parse_timestamp(raw["since"]) if raw.get("since") else None)
    except (TypeError, ValueError):
        return None


def is_done(site_state: dict[str, Any]) -> bool:
    """This site's listing completed while the resource as a whole had not."""
    raw = site_state.get(RESUME_KEY)
    return isinstance(raw, dict) and raw.get("done") is True


def mark_done(site_state: dict[str, Any], full: bool) -> None:
    """`full`: it was a complete listing (every record of the site was read)."""
    site_state[RESUME_KEY] = {"done": True, "full": full}


def was_full(site_state: dict[str, Any]) -> bool:
    """A site marked done read every record (a complete listing)."""
    raw = site_state.get(RESUME_KEY)
    return isinstance(raw, dict) and raw.get("full") is True


def keep_place(site_state: dict[str, Any], place: Place) -> None:
    site_state[RESUME_KEY] = place.to_state()


def clear(site_states: list[dict[str, Any]]) -> None:
    """The resource completed: no site keeps a place or a done mark."""
    for site_state in site_states:
        site_state.pop(RESUME_KEY, None)


def left_of(sites: list[str | None], state: dict[str, Any]) -> str:
    """What is left of a resource, in words, from its sites' states. A site without a place
    whose listing completed once (its state has a cursor) is not "not started": what is left
    is what changed there since (a catch-up that was cut, or the window of a run stopped)."""
    parts = []
    for site in sites:
        site_state = state.get(site or "_all", {})
        if is_done(site_state):
            continue
        place = place_of(site_state)
        where = f"site {site}" if site else "listing"
        if place is not None:
            parts.append(f"{where} from page {place.page}")
        elif site_state.get("cursor"):
            parts.append(f"{where} changes since {site_state['cursor']}")
        else:
            parts.append(f"{where} not started")
    return "; ".join(parts) or "nothing"
