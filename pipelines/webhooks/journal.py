"""Append-only, fsynced, segmented journal of webhook deliveries.

The receiver answers 2xx only after a delivery is on disk here, so a crash right after the
answer loses nothing; the loader reads the journal behind it and records how far it has loaded
(`loaded.offset`), so a restart replays exactly what was not yet loaded.

On-disk format, one file per segment named `seg-<first seq>.wal`:
    record = header(<IIQ: body length, crc32(seq + body), seq>) + body
A torn tail (a record whose write or fsync did not finish, so it was never acknowledged) is cut
off on open; a bad checksum anywhere else is corruption and raises `JournalCorrupt`.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from creator_sync.common.files import private_dir, private_opener

HEADER = struct.Struct("<IIQ")
MAX_RECORD_BYTES = 256 * 1024 * 1024
SEGMENT_RE = re.compile(r"^seg-(\d{20})\.wal$")
OFFSET_FILE = "loaded.offset"
WRITER_LOCK = "writer.lock"


def default_journal_dir(duckdb_path: str | Path | None, pipelines_dir: str | Path) -> Path:
    """Where `listen` journals by default (and `forget` looks): next to a DuckDB warehouse, so
    both live and are backed up together; for PostgreSQL, in the pipeline's state folder."""
    if duckdb_path is not None:
        return Path(f"{duckdb_path}.webhooks-journal")
    return Path(pipelines_dir) / "webhooks-journal"


class JournalCorrupt(RuntimeError):
    """A record inside the journal (not at its tail) fails its checksum or framing."""


class JournalInUse(RuntimeError):
    """Another process (a second `listen`) already writes this journal."""


@dataclass(frozen=True)
class Record:
    seq: int
    body: bytes


def _crc(seq: int, body: bytes) -> int:
    return zlib.crc32(body, zlib.crc32(seq.to_bytes(8, "little")))


def _fsync_dir(path: Path) -> None:
    """Make a file creation/rename durable: POSIX needs the directory itself fsynced."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _segment_name(first_seq: int) -> str:
    return f"seg-{first_seq:020d}.wal"


def list_segments(directory: Path) -> list[tuple[int, Path]]:
    """Segments sorted by the sequence number of their first record."""
    found = []
    for entry in directory.iterdir():
        match = SEGMENT_RE.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry))
    return sorted(found)


def _scan(path: Path, *, start: int = 0) -> Iterator[tuple[int, int, Record | None]]:
    """Yield (offset, end offset, record); record None marks an invalid or torn record."""
    with path.open("rb") as handle:
        handle.seek(start)
        offset = start
        while True:
            header = handle.read(HEADER.size)
            if not header:
                return
            if len(header) < HEADER.size:
                yield offset, offset + len(header), None
                return
            length, crc, seq = HEADER.unpack(header)
            if length > MAX_RECORD_BYTES:
                yield offset, offset + HEADER.size, None
                return
            body = handle.read(length)
            end = offset + HEADER.size + length
            if len(body) < length or _crc(seq, body) != crc:
                yield offset, end, None
                return
            yield offset, end, Record(seq, body)
            offset = end


def read_loaded_seq(directory: Path) -> int:
    try:
        return int((directory / OFFSET_FILE).read_text().strip() or 0)
    except FileNotFoundError:
        return 0


def journal_status(directory: str | os.PathLike[str]) -> tuple[int, int]:
    """(last complete record, last loaded record) without opening the journal for writing:
    safe to call while `listen` runs (monitoring, tests, benchmarks)."""
    path = Path(directory)
    loaded = read_loaded_seq(path)
    last = loaded
    segments = list_segments(path) if path.exists() else []
    if segments:
        first_seq, segment = segments[-1]
        last = max(last, first_seq - 1)
        for _offset, _end, record in _scan(segment):
            if record is None:
                break
            last = record.seq
    return last, loaded


class Journal:
    """Single-writer journal. `append` is called from one thread at a time (the group committer);
    readers may run concurrently in other threads and only see durable records."""

    def __init__(self, directory: str | os.PathLike[str], *, segment_bytes: int = 64 * 1024**2):
        self.directory = Path(directory)
        # deliveries hold customers' names and emails: owner-only, never committed
        private_dir(self.directory, gitignore=True)
        self.segment_bytes = segment_bytes
        self._lock_fd = self._take_writer_lock()
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # appends against a scrub (forget)
        self._file = None
        self._segment_path: Path | None = None
        self._segment_size = 0
        self.durable_seq = self._recover()

    def _take_writer_lock(self) -> int:
        """One writer per journal: recovery truncates a torn tail, which must never race a
        live writer. The kernel drops the flock when the process dies, even on SIGKILL."""
        fd = os.open(self.directory / WRITER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise JournalInUse(
                f"journal {self.directory} is in use by another process"
                + (f" (pid {holder})" if holder.isdigit() else "")
                + "; give each `listen` its own --journal"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    # -- recovery -------------------------------------------------------------------------
    def _recover(self) -> int:
        """Find the last durable record, cut a torn tail, and open the last segment for append."""
        segments = list_segments(self.directory)
        last_seq = self.loaded_seq()
        for index, (first_seq, path) in enumerate(segments):
            is_last = index == len(segments) - 1
            good_end = 0
            for _offset, end, record in _scan(path):
                if record is None:
                    if not is_last:
                        raise JournalCorrupt(
                            f"journal segment {path} has a bad record at byte {_offset}; "
                            "it is not the tail, so it cannot be a torn write"
                        )
                    break
                good_end = end
                last_seq = max(last_seq, record.seq)
            if is_last and good_end < path.stat().st_size:
                with path.open("r+b") as handle:
                    handle.truncate(good_end)
                    handle.flush()
                    os.fsync(handle.fileno())
            if first_seq > last_seq + 1 and good_end == 0:
                last_seq = first_seq - 1
        if segments:
            self._open_segment(segments[-1][1])
        return last_seq

    def _open_segment(self, path: Path) -> None:
        if self._file is not None:
            self._file.close()
        self._file = open(path, "ab", opener=private_opener)  # noqa: SIM115 - kept open
        self._segment_path = path
        self._segment_size = path.stat().st_size

    def _roll(self, first_seq: int) -> None:
        path = self.directory / _segment_name(first_seq)
        self._open_segment(path)
        _fsync_dir(self.directory)

    # -- writing --------------------------------------------------------------------------
    def append(self, bodies: list[bytes]) -> list[int]:
        """Write bodies as consecutive records, fsync once, and return their sequence numbers.

        One fsync per call is the group commit: the receiver batches concurrent deliveries so a
        burst costs one disk flush per batch, not one per delivery."""
        if not bodies:
            return []
        with self._write_lock:
            return self._append(bodies)

    def _append(self, bodies: list[bytes]) -> list[int]:
        seq = self.durable_seq
        if self._file is None or self._segment_size >= self.segment_bytes:
            self._roll(seq + 1)
        assert self._file is not None
        chunks = []
        seqs = []
        for body in bodies:
            if len(body) > MAX_RECORD_BYTES:
                raise ValueError(f"journal record of {len(body)} bytes exceeds {MAX_RECORD_BYTES}")
            seq += 1
            chunks.append(HEADER.pack(len(body), _crc(seq, body), seq))
            chunks.append(body)
            seqs.append(seq)
        data = b"".join(chunks)
        try:
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())
        except BaseException:
            self._undo_partial_write()
            raise
        self._segment_size += len(data)
        with self._cond:
            self.durable_seq = seq
            self._cond.notify_all()
        return seqs

    def scrub(self, transform: Callable[[bytes], bytes | None]) -> int:
        """Rewrite the records `transform` changes (it returns the new body, or None to keep
        one): `forget` erasing a person. The segment being written is closed first (the next
        append starts a new one); each segment with a changed record is written anew beside
        itself and renamed over it, so a crash leaves it old or new, never half. Readers must
        locate their place again afterwards (byte offsets change); returns records changed."""
        changed = 0
        with self._write_lock:
            if self._segment_size:
                self._roll(self.durable_seq + 1)
            for _first, path in list_segments(self.directory):
                if path == self._segment_path:
                    continue
                records = [r for _o, _e, r in _scan(path) if r is not None]
                bodies = [transform(r.body) for r in records]
                if all(b is None for b in bodies):
                    continue
                changed += sum(b is not None for b in bodies)
                fresh = path.with_name(path.name + ".scrub")
                with open(fresh, "wb", opener=private_opener) as handle:
                    for record, body in zip(records, bodies, strict=True):
                        body = record.body if body is None else body
                        handle.write(HEADER.pack(len(body), _crc(record.seq, body), record.seq))
                        handle.write(body)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(fresh, path)
                _fsync_dir(self.directory)
        return changed

    def _undo_partial_write(self) -> None:
        """After a failed write (disk full...), cut the segment back to its last acknowledged
        byte: a torn record followed by later, acknowledged ones would hide them on recovery."""
        assert self._segment_path is not None
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self._file = None
        with self._segment_path.open("r+b") as handle:
            handle.truncate(self._segment_size)
            handle.flush()
            os.fsync(handle.fileno())
        self._open_segment(self._segment_path)

    def wait_for(
        self, after_seq: int, timeout: float, stop: threading.Event | None = None
    ) -> bool:
        """Block until a record after `after_seq` is durable, `stop` is set (see `wake`), or the
        timeout passes; True if there is such a record."""
        with self._cond:
            self._cond.wait_for(
                lambda: self.durable_seq > after_seq or (stop is not None and stop.is_set()),
                timeout,
            )
            return self.durable_seq > after_seq

    def wake(self) -> None:
        """Wake every `wait_for` so that a stopping loader does not sit out its interval."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
        with self._cond:
            self._cond.notify_all()

    # -- loader offset --------------------------------------------------------------------
    def loaded_seq(self) -> int:
        """Sequence number of the last record the loader committed to the warehouse (0: none)."""
        return read_loaded_seq(self.directory)

    def commit_loaded(self, seq: int) -> None:
        """Persist the loader's position atomically (temp file, fsync, rename, fsync dir)."""
        path = self.directory / OFFSET_FILE
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", opener=private_opener) as handle:
            handle.write(f"{seq}\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_dir(self.directory)

    def prune(self) -> list[Path]:
        """Delete segments whose every record is loaded; never the one being written."""
        loaded = self.loaded_seq()
        segments = list_segments(self.directory)
        removed = []
        for (_first, path), (next_first, _next) in itertools.pairwise(segments):
            if next_first - 1 <= loaded and path != self._segment_path:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                removed.append(path)
        return removed


class JournalReader:
    """Sequential reader that remembers its file position, so each batch reads only new bytes."""

    def __init__(self, journal: Journal, after_seq: int):
        self.journal = journal
        self.position = after_seq
        self._segment: Path | None = None
        self._offset = 0

    def read(self, limit: int) -> list[Record]:
        """Up to `limit` durable records after the current position."""
        records: list[Record] = []
        durable = self.journal.durable_seq
        while len(records) < limit and self.position < durable:
            if self._segment is None or not self._segment.exists():
                self._locate()
                if self._segment is None:
                    break
            progressed = False
            for _offset, end, record in _scan(self._segment, start=self._offset):
                if record is None or record.seq > durable:
                    break
                self._offset = end
                progressed = True
                if record.seq <= self.position:
                    continue
                records.append(record)
                self.position = record.seq
                if len(records) >= limit:
                    return records
            if not self._advance_segment() and not progressed:
                break
        return records

    def _locate(self) -> None:
        """Open the segment holding the record after `position`."""
        self._segment, self._offset = None, 0
        for first_seq, path in list_segments(self.journal.directory):
            if first_seq <= self.position + 1 or self._segment is None:
                self._segment = path
        return None

    def _advance_segment(self) -> bool:
        """Move to the next segment if the current one is finished; False if there is none."""
        segments = list_segments(self.journal.directory)
        names = [path for _first, path in segments]
        if self._segment not in names:
            self._locate()
            return self._segment is not None
        index = names.index(self._segment)
        if index + 1 < len(names) and segments[index + 1][0] == self.position + 1:
            self._segment, self._offset = names[index + 1], 0
            return True
        return False
