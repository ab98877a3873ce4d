"""Batch writes through the ``paimon`` data source: modes, row kinds, table creation, routed dynamic buckets,
and exactly-once commits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.spark import write_dataframe
from table_engine.spark.datasource.source_writer import PaimonBatchWriter, PaimonStreamWriter
from table_engine.spark.datasource.writer import PaimonCommitMessage
from table_engine.spark.jobs.commit import TaskFiles

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string()),
                    pa.field("dt", pa.string(), nullable=False)])


def frame(spark: Any, rows: list[tuple[Any, ...]], ddl: str = "id bigint, v string, dt string", parts: int = 2) -> Any:
    return spark.createDataFrame(rows, ddl).repartition(parts)


def save(df: Any, warehouse: str, table: str, mode: str = "append", **options: str) -> None:
    writer = df.write.format("paimon").mode(mode).option("warehouse", warehouse)
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.save(table)


def content(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.read().to_pylist())


def data_files(table: Any) -> set[str]:
    return {p.name for p in Path(table.path).rglob("data-*")}


def test_append_and_overwrite_a_partitioned_primary_key_table(spark, warehouse):
    table = Catalog(warehouse).create_table("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "3"})
    rows = [(i, f"v{i}", f"d{i % 2}") for i in range(100)]
    save(frame(spark, rows), warehouse, "db.pk")
    assert content(table) == sorted(rows)
    assert table.latest_snapshot().commit_kind == "APPEND" and table.latest_snapshot_id() == 1

    updates = [(i, f"u{i}", f"d{i % 2}") for i in range(50, 150)]
    save(frame(spark, updates), warehouse, "db.pk")
    assert content(table) == sorted(rows[:50] + updates)

    # dynamic partition overwrite: only partition d1 is replaced
    save(frame(spark, [(7, "only", "d1")]), warehouse, "db.pk", mode="overwrite")
    assert content(table) == sorted([r for r in rows[:50] + updates if r[2] == "d0"] + [(7, "only", "d1")])
    assert table.latest_snapshot().commit_kind == "OVERWRITE"


def test_append_table_round_trip_and_full_overwrite(spark, warehouse):
    table = Catalog(warehouse).create_table("db.app", SCHEMA)
    rows = [(i, None if i % 5 == 0 else f"v{i}", "x") for i in range(500)]
    save(frame(spark, rows, parts=4), warehouse, "db.app")
    save(frame(spark, rows[:10]), warehouse, "db.app")
    assert content(table) == sorted(rows + rows[:10])
    assert sorted(tuple(r) for r in spark.read.format("paimon").option("warehouse", warehouse)
                  .load("db.app").collect()) == sorted(rows + rows[:10])
    save(frame(spark, [(1, "new", "x")]), warehouse, "db.app", mode="overwrite")   # unpartitioned: everything
    assert content(table) == [(1, "new", "x")]


def test_unaware_append_table_is_compacted_once_by_the_driver(spark, warehouse, caplog):
    """Every task writes bucket 0 of its partitions, so tasks do not compact (their compactions would collide);
    the driver runs the append compaction of the written partitions once after the commit."""
    table = Catalog(warehouse).create_table("db.ods", SCHEMA, partition_keys=["dt"],
                                            options={"compaction.min.file-num": "3"})
    rows: list[tuple[Any, ...]] = []
    for batch in range(3):
        new = [(batch * 100 + i, f"v{i}", f"d{i % 2}") for i in range(100)]
        save(frame(spark, new, parts=2), warehouse, "db.ods")
        rows += new
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds[:2] == ["APPEND", "APPEND"] and "COMPACT" in kinds[2:]
    assert content(table) == sorted(rows)
    assert not [r for r in caplog.records if "dropped" in r.getMessage()]
    assert Catalog(warehouse).get_table("db.ods$files").read().num_rows == 2  # one compacted file per partition


def test_row_tracking_table_gets_row_ids_at_commit_and_keeps_them_in_the_drivers_compaction(spark, warehouse):
    """Tasks write files without ids; the driver's commit assigns them and its compaction keeps them."""
    table = Catalog(warehouse).create_table("db.rt", SCHEMA, partition_keys=["dt"], options={
        "compaction.min.file-num": "3", "row-tracking.enabled": "true"})
    seen: dict[int, int] = {}
    for batch in range(3):
        save(frame(spark, [(batch * 100 + i, f"v{i}", f"d{i % 2}") for i in range(50)], parts=2), warehouse,
             "db.rt")
        got = table.read(columns=["id", "_ROW_ID"]).to_pydict()
        now = dict(zip(got["id"], got["_ROW_ID"], strict=True))
        assert {i: now[i] for i in seen} == seen and sorted(now.values()) == list(range(50 * (batch + 1)))
        seen = now
    assert "COMPACT" in [s.commit_kind for s in table.snapshots()] and table.latest_snapshot().next_row_id == 150


def test_row_kinds_through_rowkind_field(spark, warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("op", pa.string())])
    table = Catalog(warehouse).create_table("db.rk", schema, primary_keys=["id"],
                                            options={"bucket": "2", "rowkind.field": "op"})
    ddl = "id bigint, v string, op string"
    save(frame(spark, [(i, f"v{i}", "+I") for i in range(10)], ddl), warehouse, "db.rk")
    save(frame(spark, [(1, "v1", "-D"), (2, "x", "+U"), (3, "v3", "-U"), (99, "v", "-D")], ddl), warehouse, "db.rk")
    assert [(r["id"], r["v"]) for r in table.read().sort_by("id").to_pylist()] == [
        (0, "v0"), (2, "x"), *[(i, f"v{i}") for i in range(4, 10)]]


def test_creates_a_missing_table_from_the_dataframe(spark, warehouse):
    df = spark.sql("SELECT id, CAST(id % 3 AS STRING) AS dt, TIMESTAMP'2024-01-01 10:00:00' AS ts, "
                   "TIMESTAMP_NTZ'2024-01-01 10:00:00' AS ntz FROM range(30)")
    save(df, warehouse, "db.created", **{"primary-key": "id,dt", "partition": "dt", "bucket": "2",
                                         "file.format": "parquet"})
    table = Catalog(warehouse).get_table("db.created")
    assert table.primary_keys == ["id", "dt"] and table.partition_keys == ["dt"]
    assert table.options.raw == {"bucket": "2", "file.format": "parquet"}
    assert [(f.type.root, f.type.precision) for f in table.schema.fields] == [
        ("BIGINT", None), ("VARCHAR", None), ("TIMESTAMP_LTZ", 6), ("TIMESTAMP", 6)]
    assert table.read().num_rows == 30


def test_fixed_bucket_writes_are_routed_so_each_bucket_gets_one_file(spark, warehouse):
    table = Catalog(warehouse).create_table("db.fixed", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "4"})
    rows = [(i, f"v{i}", f"d{i % 2}") for i in range(2000)]
    assert write_dataframe(frame(spark, rows, parts=3), warehouse, "db.fixed", parallelism=3) == 1
    splits = table.plan()
    assert len(splits) == 8 and all(len(s.files) == 1 for s in splits)         # 2 partitions x 4 buckets
    assert content(table) == sorted(rows)


def test_buckets_go_round_robin_over_the_writer_tasks(spark, warehouse):
    from pyspark.sql import functions as F

    from table_engine.spark.datasource.writer import _task_selector

    table = Catalog(warehouse).create_table("db.rr", SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    for n in (2, 3, 4):
        df = spark.range(40).select((F.col("id") % 4).cast("int").alias("b"))
        routed = df.repartition(n, _task_selector(df, table, F.col("b"), n))
        placed = {(r["b"], r["p"]) for r in routed.select("b", F.spark_partition_id().alias("p")).collect()}
        assert placed == {(b, b % n) for b in range(4)}


def _key_columns(n: int) -> pa.Table:
    """``n`` random values per integer-like type, led by each type's extremes, 0 and -1 (negatives included)."""
    import datetime as dt

    import numpy as np

    rng = np.random.default_rng(3)

    def ints(bits: int, dtype: Any) -> pa.Array:
        lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        edges = [lo, lo + 1, -1, 0, 1, hi - 1, hi]
        return pa.array(edges + rng.integers(lo, hi, n - len(edges), dtype=np.int64, endpoint=True).tolist(), dtype)

    days = [-719162, -1, 0, 1, 2932896] + rng.integers(-100_000, 100_000, n - 5).tolist()   # 0001-01-01..9999-12-31
    return pa.table({
        "k8": ints(8, pa.int8()), "k16": ints(16, pa.int16()), "k32": ints(32, pa.int32()),
        "k64": ints(64, pa.int64()),
        "d": pa.array([dt.date(1970, 1, 1) + dt.timedelta(days=x) for x in days], pa.date32()),
        "b": pa.array((rng.integers(0, 2, n) == 1).tolist()),
    })


@pytest.mark.parametrize("keys", [["k8"], ["k16"], ["k32"], ["k64"], ["d"], ["b"], ["k32", "k64"], ["d", "k16"],
                                  ["k8", "k16", "k32", "d", "k64", "b"]])
def test_native_bucket_expression_equals_the_engine_bucket_function(spark, keys):
    """The Spark-side bucket (:func:`bucket_expression`) is the engine's, bit for bit, for every bucket count."""
    from table_engine.format.bucket import bucket_of, hash_key_columns
    from table_engine.format.schema_file import new_schema
    from table_engine.spark.datasource.writer import bucket_expression
    from table_engine.types import fields_from_arrow_schema

    data = _key_columns(5000)
    fields, highest = fields_from_arrow_schema(pa.schema([f.with_nullable(False) for f in data.schema]))
    schema = new_schema(0, fields, [], keys, {"bucket": "1"}, None, highest)
    counts = (1, 2, 3, 4, 7, 10, 16, 128, 1000, 2**31 - 1)
    exprs = []
    for n in counts:
        expr = bucket_expression(schema, n)
        assert expr is not None
        exprs.append(expr.alias(f"b{n}"))
    hashes = hash_key_columns([data[k] for k in keys], [schema.field(k).type for k in keys])
    ours = spark.createDataFrame(data).select(*exprs).toArrow()        # local rows keep their order
    assert ours.num_rows == data.num_rows
    for n in counts:
        assert ours[f"b{n}"].to_pylist() == bucket_of(hashes, n).tolist(), (keys, n)


def test_no_native_bucket_expression_for_strings_or_nullable_keys():
    from table_engine.format.schema_file import new_schema
    from table_engine.spark.datasource.writer import bucket_expression
    from table_engine.types import fields_from_arrow_schema

    for arrow in (pa.schema([pa.field("s", pa.string(), nullable=False)]), pa.schema([pa.field("s", pa.int64())]),
                  pa.schema([pa.field("s", pa.float64(), nullable=False)])):
        fields, highest = fields_from_arrow_schema(arrow)
        assert bucket_expression(new_schema(0, fields, [], [], {"bucket-key": "s"}, None, highest), 4) is None


def test_the_arrow_bucket_step_puts_each_row_where_the_engine_writer_does(tmp_path):
    """Keys without a native expression (strings, nullable keys) get their bucket in a ``mapInArrow`` step: the
    bucket the engine's writer puts the row in, also from Arrow types wider than the table's (as Spark hands over)."""
    from table_engine.spark.datasource.writer import BUCKET_COLUMN, _add_buckets

    schema = pa.schema([("s", pa.string()), ("n", pa.int32()), ("v", pa.int64())])
    table = Catalog(str(tmp_path)).create_table("db.b", schema, options={"bucket": "5", "bucket-key": "s,n"})
    rows = {"s": [f"k{i}" if i % 7 else None for i in range(200)],
            "n": [i - 100 if i % 5 else None for i in range(200)], "v": list(range(200))}
    table.write(pa.table(rows, schema=schema))
    placed = {v: split.bucket for split in table.plan() for v in table.new_read().read_split(split)["v"].to_pylist()}
    as_spark = pa.record_batch({"s": pa.array(rows["s"], pa.large_string()), "n": pa.array(rows["n"], pa.int64()),
                                "v": pa.array(rows["v"], pa.int64())})
    out = pa.Table.from_batches(list(_add_buckets(table.schema, 5, iter([as_spark]))))
    assert out.column_names == ["s", "n", "v", BUCKET_COLUMN] and len(set(placed.values())) == 5
    assert dict(zip(out["v"].to_pylist(), out[BUCKET_COLUMN].to_pylist(), strict=True)) == placed


def test_dynamic_bucket_writes_route_keys_so_no_key_is_written_twice(spark, warehouse):
    table = Catalog(warehouse).create_table("db.dyn", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "-1", "dynamic-bucket.target-row-num": "100"})
    first = [(i, f"a{i}", f"d{i % 2}") for i in range(1000)]
    sid = write_dataframe(frame(spark, first, parts=3), warehouse, "db.dyn", parallelism=3)
    assert sid == 1
    second = [(i, f"b{i}", f"d{i % 2}") for i in range(500, 1600)]          # 500 known keys, 600 new
    assert write_dataframe(frame(spark, second, parts=2), warehouse, "db.dyn", parallelism=4) == 2
    rows = table.read()
    assert rows.num_rows == 1600 and len(set(zip(rows["id"].to_pylist(), rows["dt"].to_pylist()))) == 1600
    assert content(table) == sorted(first[:500] + second)
    # every key sits in one bucket of its partition, and each bucket's hash index is one file
    placements: dict[tuple[Any, int], int] = {}
    for split in table.plan():
        for r in table.new_read().read_split(split).select(["id", "dt"]).to_pylist():
            assert placements.setdefault((r["dt"], r["id"]), split.bucket) == split.bucket
    with_ids = spark.read.format("paimon").option("warehouse", warehouse).load("db.dyn")
    assert with_ids.count() == 1600


def test_unrouted_dynamic_bucket_write_by_several_tasks_fails_without_leaving_anything(spark, warehouse):
    table = Catalog(warehouse).create_table("db.dyn2", SCHEMA, primary_keys=["id", "dt"], options={"bucket": "-1"})
    with pytest.raises(Exception, match="routed by key"):
        save(frame(spark, [(i, "x", "d") for i in range(100)], parts=2), warehouse, "db.dyn2")
    assert table.latest_snapshot_id() is None
    assert data_files(table) == set()
    assert list(Path(table.path, "index").iterdir()) == []
    # one task is fine without routing
    save(frame(spark, [(i, "x", "d") for i in range(100)], parts=1), warehouse, "db.dyn2")
    assert table.read().num_rows == 100


def test_write_dataframe_with_a_commit_user_commits_once(spark, warehouse):
    table = Catalog(warehouse).create_table("db.once", SCHEMA, primary_keys=["id", "dt"], options={"bucket": "2"})
    df = frame(spark, [(i, "x", "d") for i in range(20)])
    assert write_dataframe(df, warehouse, "db.once", commit_user="job-42") == 1
    files = data_files(table)
    assert write_dataframe(df, warehouse, "db.once", commit_user="job-42") == 1      # a re-run: no new snapshot
    assert table.latest_snapshot_id() == 1 and data_files(table) == files           # its files were removed


def _task_messages(table: Any, rows: pa.Table, task: int) -> PaimonCommitMessage:
    w = table.new_write()
    w.write(rows)
    return PaimonCommitMessage(TaskFiles(task, 0, tuple(w.prepare_commit()), rows.num_rows))


def test_a_repeated_job_commit_is_idempotent_and_abort_after_commit_keeps_files(warehouse):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    table = Catalog(warehouse).create_table("db.idem", SCHEMA, primary_keys=["id", "dt"], options={"bucket": "2"})
    spark_schema = StructType([StructField("id", LongType(), False), StructField("v", StringType()),
                               StructField("dt", StringType(), False)])
    writer = PaimonBatchWriter(table, spark_schema, False, {})
    msgs = [_task_messages(table, pa.table({"id": [1, 2], "v": ["a", "b"], "dt": ["x", "x"]}, schema=SCHEMA), 0),
            None,  # a failed task's slot
            _task_messages(table, pa.table({"id": [3], "v": ["c"], "dt": ["y"]}, schema=SCHEMA), 2)]
    writer.commit(msgs)
    writer.commit(msgs)                       # Spark (or a re-run worker) commits the same job again
    assert table.latest_snapshot_id() == 1 and table.read().num_rows == 3
    assert table.latest_snapshot().commit_identifier == BATCH_COMMIT_IDENTIFIER
    writer.abort(msgs)                        # abort after the commit happened: files must stay
    assert table.read().num_rows == 3

    stream = PaimonStreamWriter(table, spark_schema, False, {"checkpointLocation": "/tmp/ckpt-x"})
    batch = [_task_messages(table, pa.table({"id": [4], "v": ["d"], "dt": ["x"]}, schema=SCHEMA), 0)]
    stream.commit(batch, 7)
    stream.commit(batch, 7)                   # a replayed micro-batch
    assert table.latest_snapshot_id() == 2 and table.latest_snapshot().commit_identifier == 7
    again = PaimonStreamWriter(table, spark_schema, False, {"checkpointLocation": "/tmp/ckpt-x/"})
    assert again.commit_user == stream.commit_user          # stable across restarts of the query

    lost = [_task_messages(table, pa.table({"id": [5], "v": ["e"], "dt": ["x"]}, schema=SCHEMA), 0)]
    orphan_files = {Path(p).name for p in _paths(table, lost)}
    writer2 = PaimonBatchWriter(table, spark_schema, False, {})
    writer2.abort(lost)                       # a failed job: its files are deleted
    assert not orphan_files & data_files(table)


def _paths(table: Any, msgs: list[PaimonCommitMessage]) -> list[str]:

    paths = table.store.path_factory
    out = [paths.data_file(m.partition, m.bucket, f) for pm in msgs for m in pm.files.messages for f in m.new_files]
    assert all(os.path.exists(p) for p in out)
    return out


def test_postpone_bucket_table_each_task_is_a_postpone_writer(spark, warehouse):
    """``bucket`` = -2: no routing shuffle; every task writes its rows to ``bucket-postpone`` (its own writer prefix),
    invisible until the compaction publishes them."""
    table = Catalog(warehouse).create_table("db.pp", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "-2"})
    rows = [(i, f"v{i}", f"d{i % 2}") for i in range(100)]
    save(frame(spark, rows), warehouse, "db.pp")
    assert table.read().num_rows == 0
    postponed = list(Path(table.path).rglob("bucket-postpone/data-*.avro"))
    assert len({p.name.rsplit("-w-", 1)[0] for p in postponed}) == 2  # two tasks, two writers
    table.maintenance.compact()
    assert content(table) == sorted(rows)
