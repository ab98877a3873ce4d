"""The scan-mode resolver: Paimon's starting scanners as pure functions of options and snapshots."""

from __future__ import annotations

import datetime

import pytest

from table_engine.core_enums import IncrementalBetweenScanMode, StartupMode
from table_engine.core_options import CoreOptions
from table_engine.errors import OptionError, SnapshotNotExistError, UnsupportedError
from table_engine.format.snapshot import CommitKind, Snapshot
from table_engine.store.changes.starting import (
    IncrementalRange,
    StartingPoint,
    resolve_batch_start,
    resolve_incremental,
    resolve_stream_start,
    startup_mode,
)

DELTA, CHANGELOG, DIFF = IncrementalBetweenScanMode.DELTA, IncrementalBetweenScanMode.CHANGELOG, \
    IncrementalBetweenScanMode.DIFF


def snap(i: int, kind: CommitKind = CommitKind.APPEND, ident: int | None = None) -> Snapshot:
    return Snapshot(id=i, schema_id=0, base_manifest_list="b", delta_manifest_list="d", commit_user="u",
                    commit_identifier=ident if ident is not None else i, commit_kind=kind, time_millis=i * 1000,
                    total_record_count=0, delta_record_count=0)


# snapshots 3..7 live (1, 2 expired); 5 and 7 are compactions (7 a full one with identifier MAX)
SNAPS = [snap(3), snap(4), snap(5, CommitKind.COMPACT, 4), snap(6), snap(7, CommitKind.COMPACT, 2**63 - 1)]
TAGS = {"t4": SNAPS[1], "t6": SNAPS[3], "old": snap(1)}


def o(raw: dict[str, str]) -> CoreOptions:
    return CoreOptions(raw)


def batch(raw: dict[str, str], snaps: list[Snapshot] = SNAPS) -> int | None:
    s = resolve_batch_start(o(raw), snaps, TAGS.get)
    return None if s is None else s.id


def stream(raw: dict[str, str], snaps: list[Snapshot] = SNAPS, consumer: int | None = None,
           was_empty: bool = False) -> tuple[int | None, int | None]:
    p = resolve_stream_start(o(raw), snaps, consumer, was_empty)
    return p.full_snapshot, p.next_snapshot


def test_default_mode_follows_the_options_given() -> None:
    assert startup_mode(o({})) is StartupMode.LATEST_FULL
    assert startup_mode(o({"scan.mode": "full"})) is StartupMode.LATEST_FULL
    assert startup_mode(o({"scan.timestamp-millis": "5"})) is StartupMode.FROM_TIMESTAMP
    assert startup_mode(o({"scan.timestamp": "2024-01-01 00:00:00"})) is StartupMode.FROM_TIMESTAMP
    assert startup_mode(o({"scan.snapshot-id": "5"})) is StartupMode.FROM_SNAPSHOT
    assert startup_mode(o({"scan.tag-name": "t"})) is StartupMode.FROM_SNAPSHOT
    assert startup_mode(o({"incremental-between": "1,2"})) is StartupMode.INCREMENTAL
    assert startup_mode(o({"incremental-between-timestamp": "1,2"})) is StartupMode.INCREMENTAL
    assert startup_mode(o({"scan.mode": "latest", "scan.snapshot-id": "5"})) is StartupMode.LATEST


def test_batch_modes() -> None:
    assert batch({}) == 7
    assert batch({"scan.mode": "latest"}) == 7
    assert batch({"scan.mode": "latest-full"}, []) is None
    assert batch({"scan.mode": "compacted-full"}) == 7                     # latest COMPACT snapshot
    assert batch({"scan.mode": "compacted-full"}, SNAPS[:4]) == 5
    assert batch({"scan.mode": "compacted-full"}, SNAPS[:2]) == 4          # none: the latest
    # with full compactions (full-compaction.delta-commits = 3): identifier % 3 == 0 or Long.MAX
    assert batch({"scan.mode": "compacted-full", "full-compaction.delta-commits": "3"}, SNAPS[:4]) == 6
    assert batch({"scan.mode": "compacted-full", "changelog-producer": "full-compaction"}) == 7
    assert batch({"scan.snapshot-id": "4"}) == 4
    assert batch({"scan.mode": "from-snapshot-full", "scan.snapshot-id": "6"}) == 6
    assert batch({"scan.tag-name": "old"}) == 1                            # a tag holds an expired snapshot
    assert batch({"scan.timestamp-millis": "4500"}) == 4
    assert batch({"scan.timestamp-millis": "9000"}) == 7
    with pytest.raises(SnapshotNotExistError, match="out of the available snapshot id range"):
        batch({"scan.snapshot-id": "2"})
    with pytest.raises(SnapshotNotExistError, match="no snapshot earlier than or equal to timestamp"):
        batch({"scan.timestamp-millis": "100"})
    with pytest.raises(SnapshotNotExistError, match="tag 'nope'"):
        batch({"scan.tag-name": "nope"})
    with pytest.raises(OptionError, match="scan.snapshot-id must be set"):
        batch({"scan.mode": "from-snapshot-full"})
    with pytest.raises(OptionError, match="scan.timestamp-millis"):
        batch({"scan.mode": "from-timestamp"})


def test_scan_timestamp_is_local_time() -> None:
    millis = int(datetime.datetime(2024, 1, 2, 3, 4, 5).timestamp() * 1000)
    s = [snap(1), Snapshot(**{**{f: getattr(snap(2), f) for f in ("id", "schema_id", "base_manifest_list",
                                                                    "delta_manifest_list", "commit_user",
                                                                    "commit_identifier", "commit_kind",
                                                                    "total_record_count", "delta_record_count")},
                              "time_millis": millis})]
    assert batch({"scan.timestamp": "2024-01-02 03:04:05"}, s) == 2
    assert batch({"scan.timestamp": "2024-01-02 03:04:04"}, s) == 1
    with pytest.raises(OptionError, match="scan.timestamp"):
        batch({"scan.timestamp": "yesterday"}, s)


def test_stream_modes() -> None:
    assert stream({}) == (7, 8)                                            # latest-full
    assert stream({}, []) == (None, None)                                  # wait for a snapshot
    assert stream({"scan.mode": "latest"}) == (None, 8)
    assert stream({"scan.mode": "latest"}, SNAPS, was_empty=True) == (None, 1)
    assert stream({"scan.mode": "compacted-full"}, SNAPS[:4]) == (5, 6)
    assert stream({"scan.snapshot-id": "4"}) == (None, 4)                  # from-snapshot: its changes on
    assert stream({"scan.snapshot-id": "1"}) == (None, 3)                  # expired: from the earliest
    assert stream({"scan.mode": "from-snapshot-full", "scan.snapshot-id": "4"}) == (4, 5)
    assert stream({"scan.mode": "from-snapshot-full", "scan.snapshot-id": "1"}) == (3, 4)
    # from-timestamp: after the last snapshot strictly earlier than the time
    assert stream({"scan.timestamp-millis": "5000"}) == (None, 5)
    assert stream({"scan.timestamp-millis": "5001"}) == (None, 6)
    assert stream({"scan.timestamp-millis": "10"}) == (None, 3)
    with pytest.raises(OptionError, match="cannot scan from a tag"):
        stream({"scan.tag-name": "t4"})
    with pytest.raises(OptionError, match="not supported in streaming mode"):
        stream({"incremental-between": "3,4"})
    with pytest.raises(OptionError, match="not supported in streaming mode"):
        stream({"scan.mode": "latest-delta"})
    with pytest.raises(UnsupportedError, match="from-file-creation-time is not supported"):
        stream({"scan.mode": "from-file-creation-time"})
    with pytest.raises(UnsupportedError, match="from-creation-timestamp is not supported"):
        batch({"scan.mode": "from-creation-timestamp"})


def test_a_consumer_overrides_the_mode_unless_ignore_progress() -> None:
    assert stream({"consumer-id": "c"}, SNAPS, consumer=6) == (None, 6)
    assert stream({"consumer-id": "c"}, SNAPS, consumer=1) == (None, 3)    # at least the earliest
    assert stream({"consumer-id": "c"}, SNAPS, consumer=None) == (7, 8)    # new consumer: scan.mode
    assert stream({"consumer-id": "c", "consumer.ignore-progress": "true"}, SNAPS, consumer=6) == (7, 8)
    assert resolve_stream_start(o({"consumer-id": "c"}), [], 4) == StartingPoint(None, None, StartupMode.LATEST_FULL)


def incr(raw: dict[str, str], snaps: list[Snapshot] = SNAPS) -> tuple[int, int, IncrementalBetweenScanMode]:
    r = resolve_incremental(o(raw), snaps, TAGS.get)
    return r.start, r.end, r.scan_mode


def test_incremental_ranges() -> None:
    assert incr({"incremental-between": "3,6"}) == (3, 6, DELTA)
    assert incr({"incremental-between": "2,6"}) == (2, 6, DELTA)           # start may be earliest - 1
    assert incr({"incremental-between": "3,6", "changelog-producer": "input"}) == (3, 6, CHANGELOG)
    assert incr({"incremental-between": "3,6", "incremental-between-scan-mode": "changelog"}) == (3, 6, CHANGELOG)
    assert incr({"incremental-between": "3,6", "incremental-between-scan-mode": "diff"}) == (3, 6, DIFF)
    assert IncrementalRange(*incr({"incremental-between": "5,5"})).empty
    # two tags: the diff of their snapshots, or the changes between them with incremental-between-tag-to-snapshot
    r = resolve_incremental(o({"incremental-between": "t4,t6"}), SNAPS, TAGS.get)
    assert (r.start, r.end, r.scan_mode, r.after) == (4, 6, DIFF, SNAPS[3])
    assert incr({"incremental-between": "t4,t6", "incremental-between-tag-to-snapshot": "true"}) == (4, 6, DELTA)
    with pytest.raises(OptionError, match="didn't find two tags"):
        incr({"incremental-between": "t4,6"})
    with pytest.raises(OptionError, match="should be >="):
        incr({"incremental-between": "6,4"})
    with pytest.raises(OptionError, match="must specify"):
        incr({"incremental-between": "6"})
    with pytest.raises(SnapshotNotExistError, match="out of the available snapshot id range"):
        incr({"incremental-between": "1,6"})
    with pytest.raises(SnapshotNotExistError, match="out of the available snapshot id range"):
        incr({"incremental-between": "3,9"})


def test_incremental_between_timestamps() -> None:
    assert incr({"incremental-between-timestamp": "4000,6500"}) == (4, 6, DELTA)
    assert incr({"incremental-between-timestamp": "10,4000"}) == (2, 4, DELTA)     # from before the earliest
    assert incr({"incremental-between-timestamp": "4000,99999"}) == (4, 7, DELTA)
    assert IncrementalRange(*incr({"incremental-between-timestamp": "8000,9000"})).empty   # after the latest
    assert IncrementalRange(*incr({"incremental-between-timestamp": "1,2"})).empty         # before the earliest
    assert IncrementalRange(*incr({"incremental-between-timestamp": "4000,4000"})).empty
    assert incr({"scan.mode": "latest-delta"}) == (6, 7, DELTA)
    with pytest.raises(OptionError, match="should be >="):
        incr({"incremental-between-timestamp": "5,4"})
