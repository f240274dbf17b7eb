"""Sets of record keys and ids, held compactly: about a bit per id handed out in sequence, at
most 8 bytes a key, instead of ~100 bytes a string (docs/performance.md#memory).

- `CompactKeySet`: the keys themselves, integer keys in bitmaps of 65,536-value chunks; the
  others build on it.
- `RecordKeySet`: text keys with membership (unchanged.py: keys a listing read).
- `DistinctIdCount`: how many distinct ids a listing returned (the drift check).
- `GatheredIds`: ids a run gathers for the steps after it (customers listed and named).

`RecordKeySet` and `DistinctIdCount` hold a plain set while few (`tuning.KEYS_PENDING_MAX`,
`tuning.ID_COUNT_SET_MAX`), then a `CompactKeySet`: numpy (~0.15 s of CPU to import) is
imported by the methods that use it, and a run with nothing new never needs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .tuning import ID_COUNT_SET_MAX, KEY_CHUNK_SHIFT, KEYS_PENDING_MAX

if TYPE_CHECKING:
    import numpy as np

# a canonical decimal that fits an int64 ("7", not "007" nor "٧"): written once, used alone
# and for a comma-joined page of keys
_CANONICAL = r"(?:0|[1-9][0-9]{0,17})"
_ONE_CANONICAL = re.compile(_CANONICAL, re.ASCII)
_ALL_CANONICAL = re.compile(rf"{_CANONICAL}(?:,{_CANONICAL})*", re.ASCII)


def canonical_int(key: str) -> int | None:
    """`key` as an int64 if it is a canonical decimal (`_CANONICAL`), else None."""
    return int(key) if _ONE_CANONICAL.fullmatch(key) else None


def canonical_ints(keys: list[str]) -> list[int] | None:
    """Every key as an int64 if every one is canonical (`canonical_int`), else None: one regex
    over the joined keys and one C-level `map(int, ...)` instead of a Python call per key (ids
    are integers in practice, so a page's keys almost always are)."""
    if not keys:
        return []
    joined = ",".join(keys)
    if _ALL_CANONICAL.fullmatch(joined) is None or joined.count(",") != len(keys) - 1:
        return None  # (a key holding a comma would pass the regex as two keys)
    return list(map(int, keys))


def _file_keys(keys: Iterable[str], add_int: Callable[[int], object], other: set[str]) -> None:
    """Canonical integer keys to `add_int` (8 bytes each where it packs them), the rest to `other`."""
    for key in keys:
        n = canonical_int(key)
        if n is None:
            other.add(key)
        else:
            add_int(n)


class CompactKeySet:
    """A set of record keys in little memory: `Batches` holds one per appended table (the keys
    emitted so far in this run, for its in-run dedupe); the sets below build on it.

    Integer keys are held in chunks of `CHUNK` consecutive values: a chunk with at least
    `DENSE_MIN` keys is a bitmap (8 KiB, one bit per value), the others stay in one sorted
    int64 array (8 bytes per key). So a key never costs more than 8 bytes, and ids handed out
    in sequence (dense, as in the sandbox) cost about one bit: at `large` a sorted array of
    every key (~11M, ~90 MB plus a copy at each merge) grew with the data
    (docs/performance.md#memory). Other keys go to a set.
    """

    PENDING_MAX = KEYS_PENDING_MAX  # recent integer keys, merged into the chunks in bulk
    SHIFT = KEY_CHUNK_SHIFT
    CHUNK = 1 << SHIFT  # values per chunk
    DENSE_MIN = CHUNK // 64  # keys from which a chunk's bitmap (CHUNK bits) is no bigger

    def __init__(self) -> None:
        self._sorted: np.ndarray | None = None  # keys of sparse chunks (numpy on first merge)
        self._dense: dict[int, np.ndarray] = {}  # chunk number -> its bitmap (CHUNK bools, packed)
        self._pending: set[int] = set()
        self._other: set[str] = set()
        # the least and greatest integer key held: a page of keys outside them (ids in sequence,
        # read in either order: the usual page) holds none, answered without numpy's per-call cost
        self._lo: int | None = None
        self._hi: int | None = None

    def __bool__(self) -> bool:
        """Any key at all (without merging or numpy)."""
        return self._lo is not None or bool(self._other)

    def __len__(self) -> int:
        """Distinct keys held."""
        if self._sorted is None:  # never merged: no numpy needed
            return len(self._pending) + len(self._other)
        import numpy as np

        self._merge()
        bits = sum(int(np.unpackbits(b).sum()) for b in self._dense.values())
        return len(self._sorted) + bits + len(self._other)

    def seen(self, keys: list[str], ints: list[int] | None = None) -> np.ndarray:
        """Per key (a bool array): emitted by an earlier `remember`. `ints`: the caller's
        `canonical_ints(keys)`, if it has it."""
        import numpy as np

        if ints is None:
            ints = canonical_ints(keys)
        if ints is None:  # some key is not a canonical integer: key by key
            return self._seen_each(keys)
        out = np.zeros(len(ints), dtype=np.bool_)
        lo, hi = self._lo, self._hi
        if not ints or lo is None or hi is None or min(ints) > hi or max(ints) < lo:
            return out
        if self._pending and not self._pending.isdisjoint(ints):
            out |= np.fromiter((n in self._pending for n in ints), dtype=np.bool_, count=len(ints))
        if self._sorted is not None:
            out |= self._merged(np.asarray(ints, dtype=np.int64))
        return out

    def _merged(self, arr: np.ndarray) -> np.ndarray:
        """Per integer key: in a dense chunk's bitmap or in the sorted array."""
        import numpy as np

        out = np.zeros(len(arr), dtype=np.bool_)
        if self._sorted is not None and len(self._sorted):
            pos = np.minimum(np.searchsorted(self._sorted, arr), len(self._sorted) - 1)
            out |= self._sorted[pos] == arr
        if self._dense and len(arr):
            chunks = arr >> self.SHIFT
            first = int(chunks[0])
            if int(chunks.min()) == int(chunks.max()):  # the usual page: one chunk
                bits = self._dense.get(first)
                if bits is not None:
                    out |= self._bits_set(bits, arr)
                return out
            for chunk in np.unique(chunks).tolist():
                bits = self._dense.get(chunk)
                if bits is not None:
                    where = chunks == chunk
                    out[where] |= self._bits_set(bits, arr[where])
        return out

    def ints(self) -> np.ndarray:
        """Every integer key held, sorted (int64)."""
        import numpy as np

        self._merge()
        assert self._sorted is not None
        parts = [self._sorted]
        for chunk, bits in self._dense.items():
            low = np.flatnonzero(np.unpackbits(bits)).astype(np.int64)
            parts.append(low + (chunk << self.SHIFT))
        return np.sort(np.concatenate(parts))

    def others(self) -> set[str]:
        """The keys held that are not canonical integers (a copy)."""
        return set(self._other)

    def _bits_set(self, bits: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Per key of one chunk: its bit in `bits`."""
        low = keys & (self.CHUNK - 1)
        return (bits[low >> 3] >> (7 - (low & 7))) & 1 == 1

    def _seen_each(self, keys: list[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros(len(keys), dtype=np.bool_)
        ints: list[int] = []
        where: list[int] = []
        for i, key in enumerate(keys):
            n = canonical_int(key)
            if n is None:
                out[i] = key in self._other
            elif n in self._pending:
                out[i] = True
            else:
                ints.append(n)
                where.append(i)
        if ints and self._sorted is not None:
            out[where] = self._merged(np.asarray(ints, dtype=np.int64))
        return out

    def remember(self, keys: Iterable[str], ints: list[int] | None = None) -> None:
        """Note `keys` as emitted (`ints`: the caller's `canonical_ints(keys)`, if it has it)."""
        keys = list(keys)
        if ints is None:
            ints = canonical_ints(keys)
        if ints is None:
            ints = []
            _file_keys(keys, ints.append, self._other)
        self.add_ints(ints)

    def add_ints(self, ints: list[int]) -> None:
        """Note integer keys (0 <= n < 2**63), whether held already or not."""
        if not ints:
            return
        lo, hi = min(ints), max(ints)
        self._lo = lo if self._lo is None else min(lo, self._lo)
        self._hi = hi if self._hi is None else max(hi, self._hi)
        self._pending.update(ints)
        if len(self._pending) >= self.PENDING_MAX:
            self._merge()

    def _merge(self) -> None:
        """The pending keys into the dense bitmaps or the sorted array; a chunk of the array
        that reaches `DENSE_MIN` keys becomes a bitmap."""
        import numpy as np

        if self._sorted is None:
            self._sorted = np.empty(0, dtype=np.int64)
        if not self._pending:
            return
        new = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
        self._pending.clear()
        new = np.sort(new[~self._merged(new)])
        chunks = new >> self.SHIFT
        grown: list[int] = []
        for chunk in np.unique(chunks).tolist():
            bits = self._dense.get(chunk)
            if bits is not None:
                self._set_bits(bits, new[chunks == chunk])
            else:
                grown.append(chunk)
        if self._dense:
            new = new[np.isin(chunks, grown)]
        if not len(new):
            return
        # (np.isin on the whole array would sort a copy of it: 5x its size)
        self._sorted = np.insert(self._sorted, np.searchsorted(self._sorted, new), new)
        for chunk in grown:
            lo, hi = np.searchsorted(self._sorted, [chunk << self.SHIFT, (chunk + 1) << self.SHIFT])
            if hi - lo >= self.DENSE_MIN:
                bits = np.zeros(self.CHUNK // 8, dtype=np.uint8)
                self._set_bits(bits, self._sorted[lo:hi])
                self._dense[chunk] = bits
                self._sorted = np.concatenate((self._sorted[:lo], self._sorted[hi:]))

    def _set_bits(self, bits: np.ndarray, keys: np.ndarray) -> None:
        import numpy as np

        low = keys & (self.CHUNK - 1)
        mask = np.zeros(self.CHUNK, dtype=np.bool_)
        mask[low] = True
        bits |= np.packbits(mask)


class _SetThenCompact:
    """Keys in a plain set while few (`SMALL`), then in `CompactKeySet` (at most 8 bytes a key,
    about a bit for ids in sequence): a run with nothing new lists little, and importing numpy
    would cost it ~0.15 s of CPU. The base of `RecordKeySet` (text keys, with membership) and
    `DistinctIdCount` (integer ids, counted)."""

    SMALL = KEYS_PENDING_MAX

    def __init__(self) -> None:
        self._small: set[Any] | None = set()
        self._big = CompactKeySet()

    def _hold(self, keys: Iterable[Any], spill: Callable[[list[Any]], None]) -> bool:
        """Add `keys` to the small set if it is still in use (True); past `SMALL` keys, they all
        go to `spill` (a `CompactKeySet` method) and the set is done with."""
        small = self._small
        if small is None:
            return False
        small.update(keys)
        if len(small) > self.SMALL:
            self._small = None
            spill(list(small))
        return True

    def __len__(self) -> int:
        """Distinct keys held."""
        return len(self._small) if self._small is not None else len(self._big)


class RecordKeySet(_SetThenCompact):
    """Text keys, with membership. For unchanged.py's check of keys read twice: every listing
    running at once holds one per table, so the set stays small (~0.4 MB)."""

    def having(self, keys: list[str], ints: list[int] | None = None) -> list[str]:
        """The keys of `keys` held (`ints`: the caller's `canonical_ints(keys)`, if it has it)."""
        if self._small is not None:
            small = self._small
            return [] if small.isdisjoint(keys) else [k for k in keys if k in small]
        held = self._big.seen(keys, ints)
        return [k for k, h in zip(keys, held.tolist(), strict=True) if h] if held.any() else []

    def add(self, keys: list[str]) -> list[str]:
        """Hold `keys` (distinct); returns those held already."""
        if self._small is not None:
            before = self.having(keys)
            self._hold(keys, self._big.remember)
            return before
        ints = canonical_ints(keys)
        before = self.having(keys, ints)
        self._big.remember(keys, ints)
        return before


class DistinctIdCount(_SetThenCompact):
    """Distinct record ids of one listing, for the drift check: only a count, so no membership
    is asked (an int64 appended per record grew with the listing, 13 MB for one `large` site's
    transactions, docs/performance.md#memory). Digit ids by value ("007" is 7), the rest as text."""

    SMALL = ID_COUNT_SET_MAX  # ids held in a set before they move to CompactKeySet

    def __init__(self) -> None:
        super().__init__()
        self._other: set[str] = set()  # ids that are not digit strings

    def add(self, records: list[Any]) -> None:
        ints: list[int] = []
        for item in records:
            rid = item.get("id") if isinstance(item, dict) else None
            text = str(rid)
            if text.isdigit() and len(text) < 19:
                ints.append(int(text))
            else:
                self._other.add(text)
        if not self._hold(ints, self._big.add_ints):
            self._big.add_ints(ints)

    def distinct(self) -> int:
        return len(self) + len(self._other)


class GatheredIds:
    """Record ids a run gathers for the steps after it (per site: the customers it listed, the
    customers new money names), held as `CompactKeySet`: about a bit per id in sequence, at most
    8 bytes. An int64 appended per id (duplicates kept until the array doubled) held ~23 MiB at
    `large` and twice that while deduplicating; a set of strings costs ~100 bytes an id
    (docs/performance.md#memory). Other ids go to a set."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._keys = CompactKeySet()
        self.update(ids)

    def update(self, ids: Iterable[str]) -> None:
        self._keys.remember(ids)

    def __len__(self) -> int:
        return len(self._keys)

    def __bool__(self) -> bool:
        """Any id at all (without numpy: the usual answer of a run with nothing new)."""
        return bool(self._keys)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return bool(self._keys.seen([key])[0])

    def without(self, other: GatheredIds | None) -> list[str]:
        """The ids here and not in `other`, sorted as text."""
        import numpy as np

        ints, rest = self._keys.ints(), self._keys.others()
        if other is not None:
            ints = np.setdiff1d(ints, other._keys.ints(), assume_unique=True)
            rest -= other._keys.others()
        return sorted([str(n) for n in ints.tolist()] + list(rest))
