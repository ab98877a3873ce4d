"""Streaming scans: each scan.mode's start, one snapshot's changes per plan, skipped snapshots, position, ends."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError, SnapshotNotExistError
from table_engine.store.changes.stream_scan import StreamScan
from table_engine.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("dt", pa.string())])


@pytest.fixture
def table(catalog: Catalog) -> Table:
    """Snapshots: 1 APPEND {1:a,2:b}, 2 APPEND {2:B,3:c}, 3 COMPACT, 4 APPEND -D 1, 5 APPEND {4:d}."""
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    w(t, [1, 2], ["a", "b"])
    w(t, [2, 3], ["B", "c"])
    assert t.maintenance.compact(full=True) == 3
    t.write(pa.table({"id": [1], "v": ["a"], "dt": ["x"]}, schema=SCHEMA), row_kinds=["-D"])
    w(t, [4], ["d"])
    return t


def w(t: Table, ids: list[int], vs: list[str], dt: str = "x") -> int | None:
    return t.write(pa.table({"id": ids, "v": vs, "dt": [dt] * len(ids)}, schema=SCHEMA))


def drain(scan: StreamScan) -> list[tuple[int, str, list[tuple[Any, ...]]]]:
    out = []
    while (plan := scan.plan()) is not None:
        rows = pa.Table.from_batches(list(scan.read(plan)), schema=scan.output_schema())
        out.append((plan.snapshot_id, plan.kind,
                    sorted((r["rowkind"], r["id"], r["v"]) for r in rows.to_pylist())))
    return out


def test_latest_full_reads_the_latest_snapshot_then_new_changes(table: Table) -> None:
    scan = table.new_stream_scan()
    assert drain(scan) == [(5, "full", [("+I", 2, "B"), ("+I", 3, "c"), ("+I", 4, "d")])]
    assert scan.checkpoint() == 6 and scan.plan() is None                 # nothing new: wait
    w(table, [5], ["e"])
    table.maintenance.compact(full=True)  # COMPACT: no changes for a delta read
    w(table, [2], ["BB"])
    assert drain(scan) == [(6, "delta", [("+I", 5, "e")]), (8, "delta", [("+I", 2, "BB")])]
    assert scan.checkpoint() == 9


def test_latest_reads_only_new_changes(table: Table) -> None:
    scan = table.new_stream_scan(options={"scan.mode": "latest"})
    assert drain(scan) == [] and scan.checkpoint() == 6
    w(table, [9], ["z"])
    assert drain(scan) == [(6, "delta", [("+I", 9, "z")])]


def test_latest_on_an_empty_table_reads_the_first_snapshot_as_changes(catalog: Catalog) -> None:
    t = catalog.create_table("db.e", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    scan = t.new_stream_scan(options={"scan.mode": "latest"})
    assert scan.plan() is None and scan.checkpoint() is None
    w(t, [1], ["a"])
    assert drain(scan) == [(1, "delta", [("+I", 1, "a")])]
    full = t.new_stream_scan()                                            # latest-full waits for a snapshot too
    assert drain(full) == [(1, "full", [("+I", 1, "a")])]


def test_from_snapshot_and_from_snapshot_full(table: Table) -> None:
    scan = table.new_stream_scan(options={"scan.snapshot-id": "2"})       # default mode -> from-snapshot
    assert drain(scan) == [(2, "delta", [("+I", 2, "B"), ("+I", 3, "c")]), (4, "delta", [("-D", 1, "a")]),
                           (5, "delta", [("+I", 4, "d")])]
    scan = table.new_stream_scan(options={"scan.mode": "from-snapshot-full", "scan.snapshot-id": "2"})
    assert drain(scan) == [(2, "full", [("+I", 1, "a"), ("+I", 2, "B"), ("+I", 3, "c")]),
                           (4, "delta", [("-D", 1, "a")]), (5, "delta", [("+I", 4, "d")])]
    with pytest.raises(OptionError, match="cannot scan from a tag"):
        table.new_stream_scan(options={"scan.tag-name": "x"}).plan()


def test_from_timestamp_and_compacted_full(table: Table) -> None:
    t4 = table.snapshot(4).time_millis
    scan = table.new_stream_scan(options={"scan.mode": "from-timestamp", "scan.timestamp-millis": str(t4)})
    assert [p[0] for p in drain(scan)][0] in (4, 5)                       # snapshots may share a millisecond
    scan = table.new_stream_scan(options={"scan.mode": "compacted-full"})
    assert drain(scan) == [(3, "full", [("+I", 1, "a"), ("+I", 2, "B"), ("+I", 3, "c")]),
                           (4, "delta", [("-D", 1, "a")]), (5, "delta", [("+I", 4, "d")])]


def test_filters_prune_partitions_and_rows(catalog: Catalog, table: Table) -> None:
    scan = table.new_stream_scan(filter=[("id", ">", 2)], options={"scan.snapshot-id": "4"})
    assert drain(scan) == [(4, "delta", []), (5, "delta", [("+I", 4, "d")])]   # rows filtered exactly
    p = catalog.create_table("db.p", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "1"})
    w(p, [1], ["a"], dt="x")
    w(p, [7], ["g"], dt="y")
    scan = p.new_stream_scan(filter=[("dt", "=", "y")], options={"scan.snapshot-id": "1"})
    assert drain(scan) == [(2, "delta", [("+I", 7, "g")])]                 # snapshot 1 (dt=x) pruned entirely


def test_overwrite_snapshots_are_skipped_unless_streaming_read_overwrite(table: Table) -> None:
    plain = table.new_stream_scan(options={"scan.mode": "latest"})
    over = table.new_stream_scan(options={"scan.mode": "latest", "streaming-read-overwrite": "true"})
    assert plain.plan() is None and over.plan() is None
    table.write(pa.table({"id": [2, 8], "v": ["B", "h"], "dt": ["x", "x"]}, schema=SCHEMA), overwrite=True)
    assert drain(plain) == []
    # overwrite replaced {2:B,3:c,4:d} by {2:B,8:h}: 3 and 4 deleted, 8 inserted, 2 unchanged
    assert drain(over) == [(6, "overwrite", [("+I", 8, "h"), ("-D", 3, "c"), ("-D", 4, "d")])]


def test_append_table_overwrite_options(catalog: Catalog) -> None:
    t = catalog.create_table("db.a", pa.schema([("id", pa.int64())]))
    t.write(pa.table({"id": [1, 2]}))
    diff = t.new_stream_scan(options={"scan.mode": "latest", "streaming-read-overwrite": "true"})
    added = t.new_stream_scan(options={"scan.mode": "latest", "streaming-read-append-overwrite": "true"})
    assert diff.plan() is None and added.plan() is None
    t.write(pa.table({"id": [3]}), overwrite=True)

    def kinds(scan: StreamScan) -> list[tuple[str, int]]:
        plan = scan.plan()
        assert plan is not None and plan.kind == "overwrite"
        return sorted((r["rowkind"], r["id"]) for r in pa.Table.from_batches(list(scan.read(plan))).to_pylist())

    assert kinds(diff) == [("+I", 3), ("-D", 1), ("-D", 2)]
    assert kinds(added) == [("+I", 3)]


def test_restore_resumes_at_a_checkpoint(table: Table) -> None:
    scan = table.new_stream_scan(options={"scan.snapshot-id": "1"})
    first = scan.plan()
    assert first is not None and first.snapshot_id == 1 and scan.checkpoint() == 2
    again = table.new_stream_scan()
    again.restore(scan.checkpoint())
    assert [p[0] for p in drain(again)] == [2, 4, 5]


def test_an_expired_next_snapshot_is_an_error(table: Table) -> None:
    scan = table.new_stream_scan(options={"scan.snapshot-id": "1"})
    assert scan.plan() is not None
    table.expire_snapshots(retain_min=1, retain_max=1)
    with pytest.raises(SnapshotNotExistError, match="expired.*consumer-id"):
        scan.plan()


def test_bounded_watermark_ends_the_read_and_delay_holds_snapshots(catalog: Catalog) -> None:
    t = catalog.create_table("db.b", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    w(t, [1], ["a"])
    scan = t.new_stream_scan(options={"scan.mode": "latest", "scan.bounded.watermark": "-1"})
    assert scan.plan() is None and not scan.finished
    w(t, [2], ["b"])                                                     # no watermark: keeps going
    assert drain(scan) == [(2, "delta", [("+I", 2, "b")])]
    delayed = StreamScan(t.new_stream_scan(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1",
                                                    "streaming.read.snapshot.delay": "1 h"}).ctx)
    assert delayed.plan() is None and delayed.checkpoint() == 1            # snapshots younger than 1 h wait
    late = StreamScan(delayed.ctx, clock=lambda: 10**10)
    assert [p[0] for p in drain(late)] == [1, 2]


@pytest.mark.parametrize(("producer", "expected"), [
    ("lookup", [("+I", 1, "a"), ("+I", 2, "b")]),            # full phase: files above level 0 only
    ("full-compaction", [("+I", 1, "a"), ("+I", 2, "b")]),   # full phase: top-level files only
    ("input", [("+I", 1, "a"), ("+I", 2, "B"), ("+I", 3, "c")]),
])
def test_full_phase_levels_follow_the_changelog_producer(catalog: Catalog, producer: str,
                                                         expected: list[tuple[str, int, str]]) -> None:
    # write-only: no lookup compaction at commit, so the last write stays at level 0
    t = catalog.create_table("db.p", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "changelog-producer": producer, "write-only": "true"})
    w(t, [1, 2], ["a", "b"])
    t.maintenance.compact(full=True)
    w(t, [2, 3], ["B", "c"])                                              # level 0: its changes come later
    first = drain(t.new_stream_scan())[0]
    assert first[:2] == (3, "full") and first[2] == expected


def test_changelog_producers_stream_changelog_files(catalog: Catalog) -> None:
    t = catalog.create_table("db.i", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "changelog-producer": "input"})
    scan = t.new_stream_scan(options={"scan.mode": "latest"})
    w(t, [1], ["a"])
    t.maintenance.compact(full=True)  # COMPACT without changelog: skipped
    t.write(pa.table({"id": [1, 1], "v": ["a", "A"], "dt": ["x", "x"]}, schema=SCHEMA), row_kinds=["-U", "+U"])
    assert drain(scan) == [(1, "changelog", [("+I", 1, "a")]), (3, "changelog", [("+U", 1, "A"), ("-U", 1, "a")])]
    lookup = catalog.create_table("db.l", SCHEMA, primary_keys=["id"],
                                  options={"bucket": "1", "changelog-producer": "lookup"})
    scan = lookup.new_stream_scan(options={"scan.mode": "latest"})
    w(lookup, [1], ["a"])
    w(lookup, [1], ["b"])
    kinds = [(sid, kind) for sid, kind, _ in drain(scan)]
    assert all(kind == "changelog" for _, kind in kinds)
    assert all(lookup.snapshot(sid).commit_kind == "COMPACT" for sid, _ in kinds)   # lookup compactions' changelog
