"""Journal: durability framing, torn-tail recovery, corruption detection, offsets, rotation."""

from __future__ import annotations

import threading

import pytest

from creator_sync.pipelines.webhooks.journal import (
    HEADER,
    Journal,
    JournalCorrupt,
    JournalInUse,
    JournalReader,
    journal_status,
    list_segments,
)


def bodies(n: int, start: int = 0) -> list[bytes]:
    return [f'{{"n": {i}}}'.encode() for i in range(start, start + n)]


def test_append_assigns_consecutive_seqs_and_survives_reopen(tmp_path):
    journal = Journal(tmp_path)
    assert journal.append(bodies(3)) == [1, 2, 3]
    assert journal.append(bodies(2, 3)) == [4, 5]
    journal.close()

    reopened = Journal(tmp_path)
    assert reopened.durable_seq == 5
    records = JournalReader(reopened, 0).read(100)
    assert [r.seq for r in records] == [1, 2, 3, 4, 5]
    assert [r.body for r in records] == bodies(5)
    assert reopened.append([b"x"]) == [6]


def test_torn_tail_is_cut_and_numbering_continues(tmp_path):
    journal = Journal(tmp_path)
    journal.append(bodies(3))
    journal.close()
    (_first, segment) = list_segments(tmp_path)[-1]
    good_size = segment.stat().st_size
    # a crash in the middle of writing record 4: header plus half a body
    with segment.open("ab") as handle:
        handle.write(HEADER.pack(100, 0, 4) + b"half")

    recovered = Journal(tmp_path)
    assert recovered.durable_seq == 3
    assert segment.stat().st_size == good_size
    assert recovered.append([b"after"]) == [4]
    assert [r.body for r in JournalReader(recovered, 3).read(10)] == [b"after"]


def test_bad_checksum_in_a_sealed_segment_is_corruption(tmp_path):
    journal = Journal(tmp_path, segment_bytes=1)  # every append rolls to a new segment
    journal.append([b"first-record"])
    journal.append([b"second-record"])
    journal.close()
    first = list_segments(tmp_path)[0][1]
    data = bytearray(first.read_bytes())
    data[-1] ^= 0xFF
    first.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match="bad record"):
        Journal(tmp_path)


def test_rotation_reader_spans_segments_and_prune_keeps_unloaded(tmp_path):
    journal = Journal(tmp_path, segment_bytes=64)
    for i in range(10):
        journal.append(bodies(2, 2 * i))
    segments = list_segments(tmp_path)
    assert len(segments) > 3
    reader = JournalReader(journal, 0)
    seen = []
    while batch := reader.read(3):
        seen.extend(batch)
    assert [r.seq for r in seen] == list(range(1, 21))

    journal.commit_loaded(11)
    journal.prune()
    remaining = JournalReader(journal, journal.loaded_seq()).read(100)
    assert [r.seq for r in remaining] == list(range(12, 21))
    assert len(list_segments(tmp_path)) < len(segments)
    journal.close()
    # after pruning and a restart, numbering continues (no seq reuse)
    again = Journal(tmp_path, segment_bytes=64)
    assert again.durable_seq == 20
    assert again.append([b"z"]) == [21]


def test_offset_commit_is_persistent(tmp_path):
    journal = Journal(tmp_path)
    assert journal.loaded_seq() == 0
    journal.append(bodies(5))
    journal.commit_loaded(4)
    journal.close()
    assert Journal(tmp_path).loaded_seq() == 4


def test_reader_sees_only_durable_records_while_writer_appends(tmp_path):
    journal = Journal(tmp_path, segment_bytes=4096)
    total = 2000
    reader = JournalReader(journal, 0)
    got: list[int] = []

    def write() -> None:
        for i in range(0, total, 50):
            journal.append(bodies(50, i))

    writer = threading.Thread(target=write)
    writer.start()
    while len(got) < total:
        journal.wait_for(reader.position, timeout=1.0)
        for record in reader.read(128):
            assert record.seq <= journal.durable_seq
            got.append(record.seq)
    writer.join()
    assert got == list(range(1, total + 1))


def test_a_second_writer_is_refused_and_status_reads_without_truncating(tmp_path):
    journal = Journal(tmp_path)
    journal.append(bodies(3))
    with pytest.raises(JournalInUse, match="in use by another process"):
        Journal(tmp_path)
    (_first, segment) = list_segments(tmp_path)[-1]
    with segment.open("ab") as handle:  # a record being written right now
        handle.write(HEADER.pack(100, 0, 4) + b"partial")
    size = segment.stat().st_size
    assert journal_status(tmp_path) == (3, 0)
    assert segment.stat().st_size == size  # the live writer's bytes are untouched
    journal.close()
    Journal(tmp_path).close()  # the lock is released on close


def test_a_failed_write_is_undone_so_later_records_survive_recovery(tmp_path):
    journal = Journal(tmp_path)
    journal.append([b"acked-1"])
    real_file = journal._file

    class HalfWrite:
        def write(self, data):
            real_file.write(data[: len(data) // 2])
            real_file.flush()
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(real_file, name)

    journal._file = HalfWrite()
    with pytest.raises(OSError, match="No space"):
        journal.append([b"never-acked"])
    assert journal.durable_seq == 1
    assert journal.append([b"acked-2"]) == [2]
    journal.close()
    reopened = Journal(tmp_path)
    assert [r.body for r in JournalReader(reopened, 0).read(10)] == [b"acked-1", b"acked-2"]
    reopened.close()
