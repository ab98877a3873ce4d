"""Batch reads of changes (incremental-between, -timestamp, latest-delta) and of scan.mode start snapshots."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError
from table_engine.system_tables import system_table
from table_engine.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


@pytest.fixture
def table(catalog: Catalog) -> Table:
    """1 {1:a,2:b,3:c} (tag t1) | 2 {2:B,4:d} | 3 COMPACT (tag t3) | 4 -D 3 | 5 {4:D} (tag t5)."""
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    t.create_tag("t1")
    t.write(pa.table({"id": [2, 4], "v": ["B", "d"]}, schema=SCHEMA))
    assert t.maintenance.compact(full=True) == 3
    t.create_tag("t3")
    t.write(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA), row_kinds=["-D"])
    t.write(pa.table({"id": [4], "v": ["D"]}, schema=SCHEMA))
    t.create_tag("t5")
    return t


def rows(t: Table, **opts: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in t.copy(opts).read().to_pylist())


def audit(t: Table, **opts: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in system_table(t, "audit_log").copy(opts).read().to_pylist())


def test_between_snapshot_ids_reads_every_change_unmerged(table: Table) -> None:
    # Paimon reads delta files without merging: key 4 changed twice, both versions; -D dropped in a data read
    assert rows(table, **{"incremental-between": "1,5"}) == [(2, "B"), (4, "D"), (4, "d")]
    assert audit(table, **{"incremental-between": "1,5"}) == [("+I", 2, "B"), ("+I", 4, "D"), ("+I", 4, "d"),
                                                              ("-D", 3, "c")]
    assert audit(table, **{"incremental-between": "0,1"}) == [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c")]
    assert audit(table, **{"incremental-between": "2,3"}) == []                  # COMPACT holds no changes
    assert rows(table, **{"incremental-between": "5,5"}) == []
    batches = list(table.copy({"incremental-between": "1,5"}).to_batches(columns=["v"], batch_size=1))
    assert sorted(v for b in batches for v in b.column("v").to_pylist()) == ["B", "D", "d"]


def test_between_two_tags_is_the_diff_of_their_snapshots(table: Table) -> None:
    assert audit(table, **{"incremental-between": "t1,t5"}) == [("+I", 2, "B"), ("+I", 4, "D"), ("-D", 3, "c")]
    assert rows(table, **{"incremental-between": "t1,t5"}) == [(2, "B"), (4, "D")]
    assert audit(table, **{"incremental-between": "t1,t3", "incremental-between-tag-to-snapshot": "true"}) == [
        ("+I", 2, "B"), ("+I", 4, "d")]
    assert audit(table, **{"incremental-between": "1,5", "incremental-between-scan-mode": "diff"}) == [
        ("+I", 2, "B"), ("+I", 4, "D"), ("-D", 3, "c")]
    with pytest.raises(OptionError, match="didn't find two tags"):
        rows(table, **{"incremental-between": "t1,5"})


def test_between_timestamps_and_latest_delta(table: Table) -> None:
    times = {s.id: s.time_millis for s in table.snapshots()}
    got = audit(table, **{"incremental-between-timestamp": f"{times[4]},{times[5]}"})
    if times[4] < times[5]:
        assert got == [("+I", 4, "D")]
    assert audit(table, **{"incremental-between-timestamp": f"0,{times[5]}"}) == audit(
        table, **{"incremental-between": "0,5"})
    assert audit(table, **{"scan.mode": "latest-delta"}) == [("+I", 4, "D")]


def test_filters_and_columns_on_incremental_reads(table: Table) -> None:
    t = table.copy({"incremental-between": "1,5"})
    assert t.read(filter=[("id", "=", 4)], columns=["v"]).sort_by("v").column("v").to_pylist() == ["D", "d"]
    log = system_table(table, "audit_log").copy({"incremental-between": "1,5"})
    assert log.read(filter=[("rowkind", "=", "-D")]).to_pylist() == [{"rowkind": "-D", "id": 3, "v": "c"}]
    assert log.read(columns=["rowkind"]).num_rows == 4


def test_batch_scan_modes_read_their_snapshot(table: Table) -> None:
    latest = [(1, "a"), (2, "B"), (4, "D")]
    assert rows(table) == latest
    assert rows(table, **{"scan.mode": "latest"}) == latest
    assert rows(table, **{"scan.snapshot-id": "2"}) == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert rows(table, **{"scan.mode": "from-snapshot-full", "scan.snapshot-id": "1"}) == [
        (1, "a"), (2, "b"), (3, "c")]
    assert rows(table, **{"scan.tag-name": "t1"}) == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(table, **{"scan.mode": "compacted-full"}) == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    t5 = table.snapshot(5).time_millis
    assert rows(table, **{"scan.timestamp-millis": str(t5)}) == latest
    assert rows(table, **{"scan.mode": "from-timestamp", "scan.timestamp-millis": str(t5 + 10_000)}) == latest
    assert table.copy({"scan.snapshot-id": "2"}).plan()[0].snapshot_id == 2
    # explicit arguments win over options
    assert table.copy({"scan.snapshot-id": "2"}).read(snapshot_id=1).num_rows == 3


def test_append_table_changes(catalog: Catalog) -> None:
    t = catalog.create_table("db.a", pa.schema([("x", pa.int64())]))
    t.write(pa.table({"x": [1, 2]}))
    t.write(pa.table({"x": [3]}))
    assert t.copy({"incremental-between": "1,2"}).read().to_pylist() == [{"x": 3}]
    assert system_table(t, "audit_log").copy({"incremental-between": "0,2"}).read().num_rows == 3


def test_copy_validates_options(table: Table) -> None:
    with pytest.raises(OptionError, match="scan.mode"):
        table.copy({"scan.mode": "sideways"})
    with pytest.raises(OptionError, match="incremental-between-scan-mode"):
        table.copy({"incremental-between-scan-mode": "sometimes"})
    assert "scan.snapshot-id" not in table.options.raw                     # the copy does not change the table
    # Paimon's startup-mode validation: what a mode needs, and nothing of another mode
    with pytest.raises(OptionError, match=r"\[scan.snapshot-id\] must be null when you use latest"):
        table.copy({"scan.mode": "latest", "scan.snapshot-id": "1"})
    with pytest.raises(OptionError, match="exactly one of"):
        table.copy({"scan.snapshot-id": "1", "scan.tag-name": "t1"})
    with pytest.raises(OptionError, match="exactly one of"):
        table.copy({"scan.mode": "from-snapshot-full"})
    with pytest.raises(OptionError, match=r"\[incremental-between\] must be null when you use from-timestamp"):
        table.copy({"incremental-between": "1,2", "scan.timestamp-millis": "1"})


def test_diff_and_stream_apply_deletion_vectors(catalog: Catalog) -> None:
    t = catalog.create_table("db.dv", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "deletion-vectors.enabled": "true"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    t.maintenance.compact(full=True)
    t.create_tag("a")
    t.write(pa.table({"id": [2], "v": ["B"]}, schema=SCHEMA))
    t.write(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA), row_kinds=["-D"])
    t.maintenance.compact()                                                           # deletion vectors on the old file
    t.create_tag("b")
    assert audit(t, **{"incremental-between": "a,b"}) == [("+I", 2, "B"), ("-D", 3, "c")]
    scan = t.new_stream_scan(options={"scan.mode": "from-snapshot-full", "scan.snapshot-id": "3"})
    plans = []
    while (plan := scan.plan()) is not None:
        plans.append((plan.kind, sorted(r["id"] for b in scan.read(plan) for r in b.to_pylist())))
    assert plans == [("full", [1, 2, 3]), ("delta", [3])]                 # the full phase merges level 0 too
