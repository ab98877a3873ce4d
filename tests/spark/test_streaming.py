"""Streaming through the ``paimon`` data source: a source over snapshots that restarts from its checkpoint, and a
sink that commits one snapshot per micro-batch."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def run_stream(spark: Any, warehouse: str, table: str, checkpoint: str, sink: Any, **options: str) -> None:
    """Process everything available once, then stop (a query run of a scheduled job)."""
    reader = spark.readStream.format("paimon").option("warehouse", warehouse)
    for k, v in options.items():
        reader = reader.option(k, v)
    query = sink(reader.load(table).writeStream.option("checkpointLocation", checkpoint)).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def collector(batches: list[tuple[int, list[tuple[Any, ...]]]]) -> Any:
    def sink(writer: Any) -> Any:
        return writer.foreachBatch(lambda df, batch_id: batches.append((batch_id, [tuple(r) for r in df.collect()])))
    return sink


def test_append_source_restarted_from_its_checkpoint_neither_loses_nor_repeats(spark, warehouse, tmp_path):
    table = Catalog(warehouse).create_table("db.events", SCHEMA)
    for i in range(3):
        table.write(pa.table({"id": [i * 10 + k for k in range(10)], "v": [f"r{i}"] * 10}, schema=SCHEMA))
    batches: list[tuple[int, list[tuple[Any, ...]]]] = []
    checkpoint = str(tmp_path / "ckpt")
    run_stream(spark, warehouse, "db.events", checkpoint, collector(batches))
    assert sorted(r for _, rows in batches for r in rows) == sorted((i, f"r{i // 10}") for i in range(30))

    for i in range(3, 6):                                  # the query is down while these are committed
        table.write(pa.table({"id": [i * 10 + k for k in range(10)], "v": [f"r{i}"] * 10}, schema=SCHEMA))
    run_stream(spark, warehouse, "db.events", checkpoint, collector(batches))
    table.write(pa.table({"id": [60], "v": ["r6"]}, schema=SCHEMA))
    run_stream(spark, warehouse, "db.events", checkpoint, collector(batches))

    everything = Counter(r for _, rows in batches for r in rows)
    assert everything == Counter((i, f"r{i // 10}") for i in range(61))      # each row exactly once
    ids = [b for b, _ in batches]
    assert ids == sorted(set(ids))                                            # batch ids only move forward


def test_primary_key_changes_replay_to_the_table_and_advance_a_consumer(spark, warehouse, tmp_path):
    table = Catalog(warehouse).create_table("db.users", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    table.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    table.write(pa.table({"id": [2], "v": ["B"]}, schema=SCHEMA))
    batches: list[tuple[int, list[tuple[Any, ...]]]] = []
    checkpoint = str(tmp_path / "ckpt")
    opts = {"audit-log": "true", "consumer-id": "etl"}
    run_stream(spark, warehouse, "db.users", checkpoint, collector(batches), **opts)
    assert table.consumers() == {"etl": 3}
    table.write(pa.table({"id": [3, 4], "v": ["c", "d"]}, schema=SCHEMA), row_kinds=["-D", "+I"])
    table.write(pa.table({"id": [1], "v": ["A"]}, schema=SCHEMA))
    run_stream(spark, warehouse, "db.users", checkpoint, collector(batches), **opts)
    assert table.consumers() == {"etl": 5}

    state: dict[int, str] = {}
    for _, rows in sorted(batches):
        for kind, key, value in rows:
            if kind in ("+I", "+U"):
                state[key] = value
            else:
                state.pop(key, None)
    assert sorted(state.items()) == sorted((r["id"], r["v"]) for r in table.read().to_pylist())
    assert batches[0][1] and all(k == "+I" for k, _, _ in batches[0][1])   # the initial full snapshot

    # a new query with the same consumer id (no checkpoint) starts where the consumer is: nothing new yet
    fresh: list[tuple[int, list[tuple[Any, ...]]]] = []
    run_stream(spark, warehouse, "db.users", str(tmp_path / "ckpt2"), collector(fresh), **opts)
    assert [r for _, rows in fresh for r in rows] == []


def test_paimon_to_paimon_stream_commits_one_snapshot_per_micro_batch(spark, warehouse, tmp_path):
    catalog = Catalog(warehouse)
    source = catalog.create_table("db.src", SCHEMA)
    target = catalog.create_table("db.dst", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    source.write(pa.table({"id": list(range(50)), "v": ["x"] * 50}, schema=SCHEMA))

    def paimon_sink(writer: Any) -> Any:
        return writer.format("paimon").option("warehouse", warehouse).option("path", "db.dst")

    checkpoint = str(tmp_path / "ckpt")
    run_stream(spark, warehouse, "db.src", checkpoint, paimon_sink)
    source.write(pa.table({"id": list(range(50, 80)), "v": ["y"] * 30}, schema=SCHEMA))
    run_stream(spark, warehouse, "db.src", checkpoint, paimon_sink)

    assert sorted((r["id"], r["v"]) for r in target.read().to_pylist()) == sorted(
        [(i, "x") for i in range(50)] + [(i, "y") for i in range(50, 80)])
    snaps = target.snapshots()
    assert [s.commit_identifier for s in snaps] == [0, 1]                    # micro-batch ids
    assert len({s.commit_user for s in snaps}) == 1                          # one user across the restart


def test_start_of_a_new_query_follows_scan_mode(spark, warehouse, tmp_path):
    """Where a query without checkpoint starts: the engine's streaming start rules (store/changes/starting.py)."""
    import time

    table = Catalog(warehouse).create_table("db.modes", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "1", "write-only": "true",
                                                     "full-compaction.delta-commits": "1"})
    table.write(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))           # 1
    time.sleep(0.02)
    between = str(int(time.time() * 1000))
    time.sleep(0.02)
    table.write(pa.table({"id": [2], "v": ["b"]}, schema=SCHEMA))           # 2
    table.maintenance.compact(full=True)                                                # 3: COMPACT
    table.write(pa.table({"id": [1], "v": ["A"]}, schema=SCHEMA))           # 4
    assert [str(table.snapshot(i).commit_kind) for i in range(1, 5)] == ["APPEND", "APPEND", "COMPACT", "APPEND"]

    def rows(name: str, **options: str) -> list[tuple[Any, ...]]:
        batches: list[tuple[int, list[tuple[Any, ...]]]] = []
        run_stream(spark, warehouse, "db.modes", str(tmp_path / name), collector(batches), **options)
        return sorted(r for _, rs in batches for r in rs)

    assert rows("default") == [(1, "A"), (2, "b")]                          # latest-full: snapshot 4 in full
    assert rows("latest", **{"scan.mode": "latest"}) == []                  # only what comes next
    assert rows("compacted", **{"scan.mode": "compacted-full"}) == [(1, "A"), (1, "a"), (2, "b")]  # 3, then 4
    assert rows("from2", **{"scan.mode": "from-snapshot", "scan.snapshot-id": "2"}) == [(1, "A"), (2, "b")]
    assert rows("from2full", **{"scan.mode": "from-snapshot-full", "scan.snapshot-id": "2"}) == \
        [(1, "A"), (1, "a"), (2, "b")]
    # from-timestamp: the changes after the last snapshot earlier than the time (snapshot 1)
    assert rows("ts", **{"scan.mode": "from-timestamp", "scan.timestamp-millis": between}) == [(1, "A"), (2, "b")]
