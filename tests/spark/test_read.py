"""Batch reads through the ``paimon`` data source: rows, schema, splits, time travel, filters, incremental reads."""

from __future__ import annotations

import datetime as dt
import decimal
import time
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.spark.datasource.spark_types import arrow_schema_for

pytestmark = pytest.mark.spark

KINDS = pa.schema([
    pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
    pa.field("b", pa.bool_()), pa.field("i8", pa.int8()), pa.field("i16", pa.int16()), pa.field("i32", pa.int32()),
    pa.field("f32", pa.float32()), pa.field("f64", pa.float64()), pa.field("dec", pa.decimal128(20, 4)),
    pa.field("s", pa.string()), pa.field("bin", pa.binary()), pa.field("d", pa.date32()),
    pa.field("ts3", pa.timestamp("ms")), pa.field("ts9", pa.timestamp("ns")),
    pa.field("ltz", pa.timestamp("us", tz="UTC")),
    pa.field("arr", pa.list_(pa.int32())), pa.field("m", pa.map_(pa.string(), pa.int64())),
    pa.field("row", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])),
])


def all_types(n: int, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()), "dt": [f"2024-01-0{1 + i % 3}" for i in ids],
        "b": [None if i % 7 == 0 else i % 2 == 0 for i in ids], "i8": pa.array([i % 100 for i in ids], pa.int8()),
        "i16": pa.array(list(ids), pa.int16()), "i32": pa.array([i * 3 for i in ids], pa.int32()),
        "f32": pa.array([i / 2 for i in ids], pa.float32()), "f64": [i / 3 for i in ids],
        "dec": pa.array([decimal.Decimal(i * 13) / 4 if i % 5 else None for i in ids], pa.decimal128(20, 4)),
        "s": [f"s{i}" if i % 4 else None for i in ids], "bin": [bytes([i % 256]) * 3 for i in ids],
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids], pa.date32()),
        "ts3": pa.array([i * 1001 for i in ids], pa.timestamp("ms")),
        "ts9": pa.array([i * 1_000_000_123 for i in ids], pa.timestamp("ns")),
        "ltz": pa.array([i * 1_000_007 for i in ids], pa.timestamp("us", tz="UTC")),
        "arr": [[i, i + 1] if i % 3 else None for i in ids], "m": [[("k", i)] for i in ids],
        "row": [{"x": i, "y": str(i)} for i in ids],
    }, schema=KINDS)


def load(spark: Any, warehouse: str, table: str, **options: Any) -> Any:
    reader = spark.read.format("paimon").option("warehouse", warehouse)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(table)


def spark_rows(df: Any, key: str = "id") -> pa.Table:
    """A DataFrame's rows as Arrow, sorted (via Arrow, so types stay exact)."""
    table = df.toArrow()
    return table.sort_by(key) if table.num_rows else table


def expected(table: pa.Table, spark_schema: Any, key: str = "id") -> pa.Table:
    """Engine rows in the layout Spark returns (microsecond timestamps, Spark's nullability)."""
    return table.cast(arrow_schema_for(spark_schema), safe=False).sort_by(key)


def same(actual: pa.Table, exp: pa.Table) -> None:
    assert actual.num_rows == exp.num_rows
    for name in exp.column_names:
        a, e = actual.column(name).combine_chunks(), exp.column(name).combine_chunks()
        assert a.cast(e.type).equals(e), f"column {name}: {a.slice(0, 3)} != {e.slice(0, 3)}"


def test_primary_key_table_reads_like_the_engine_with_one_partition_per_split(spark, warehouse):
    table = Catalog(warehouse).create_table("db.pk", KINDS, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "2"})
    table.write(all_types(300))
    table.write(all_types(100, start=250))                          # updates 50 keys, adds 50
    table.write(all_types(10, start=0).select(["id", "dt"] + KINDS.names[2:]), row_kinds=["-D"] * 10)
    df = load(spark, warehouse, "db.pk")
    assert df.rdd.getNumPartitions() == len(table.plan()) == 6      # 3 partitions x 2 buckets
    schema = df.schema
    assert [f.nullable for f in schema.fields][:3] == [False, False, True]
    assert schema["ts3"].dataType.typeName() == "timestamp_ntz" and schema["ltz"].dataType.typeName() == "timestamp"
    same(spark_rows(df), expected(table.read(), schema))
    assert spark_rows(df).num_rows == 340


def test_append_table_and_path_based_load(spark, warehouse):
    table = Catalog(warehouse).create_table("db.app", KINDS, partition_keys=["dt"],
                                            options={"source.split.target-size": "1 kb"})
    table.write(all_types(200))
    table.write(all_types(200, start=1000))
    by_path = spark.read.format("paimon").load(table.path)
    assert len(table.plan()) == 3 and by_path.rdd.getNumPartitions() == 6     # append splits packed by size
    same(spark_rows(by_path), expected(table.read(), by_path.schema))
    assert by_path.count() == 400


def test_small_append_reads_are_cut_so_every_core_gets_files(spark, warehouse):
    from table_engine.spark.datasource.reader import pack_splits

    table = Catalog(warehouse).create_table("db.few", KINDS)
    for k in range(4):
        table.write(all_types(100, start=k * 100))
    splits = table.plan()
    assert len(splits) == 1 and len(pack_splits(table, splits)) == 1         # 4 small files fit one target size
    assert [len(s.files) for s in pack_splits(table, splits, parallelism=2)] == [2, 2]
    assert len(pack_splits(table, splits, parallelism=8)) == 4              # never below one file
    df = load(spark, warehouse, "db.few")
    assert df.rdd.getNumPartitions() == 2                                   # the session's local[2]
    same(spark_rows(df), expected(table.read(), df.schema))


def test_time_travel_by_snapshot_tag_and_timestamp(spark, warehouse):
    table = Catalog(warehouse).create_table("db.tt", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                                ("v", pa.string())]),
                                            primary_keys=["id"], options={"bucket": "1"})
    table.write(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    table.create_tag("first")
    time.sleep(0.01)
    between = int(time.time() * 1000)
    time.sleep(0.01)
    table.write(pa.table({"id": [2, 3], "v": ["B", "c"]}))

    def rows(**opts: Any) -> list[tuple[int, str]]:
        return sorted((r.id, r.v) for r in load(spark, warehouse, "db.tt", **opts).collect())

    assert rows() == [(1, "a"), (2, "B"), (3, "c")]
    assert rows(**{"scan.snapshot-id": 1}) == [(1, "a"), (2, "b")]
    assert rows(**{"scan.tag-name": "first"}) == [(1, "a"), (2, "b")]
    assert rows(**{"scan.timestamp-millis": between}) == [(1, "a"), (2, "b")]
    assert rows(**{"scan.snapshot-id": 2}) == rows()


def test_filters_prune_splits_and_filter_rows_exactly(spark, warehouse):
    table = Catalog(warehouse).create_table("db.f", KINDS, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "2"})
    table.write(all_types(300))
    df = load(spark, warehouse, "db.f")
    engine = table.read()

    one_day = df.filter("dt = '2024-01-02'")
    assert one_day.rdd.getNumPartitions() == 2                      # one partition's buckets only
    assert sorted(r.id for r in one_day.select("id").collect()) == [i for i in range(300) if i % 3 == 1]

    cases = {
        "id > 250 AND dt IN ('2024-01-01', '2024-01-03')": lambda r: r["id"] > 250 and r["dt"] != "2024-01-02",
        "s IS NULL": lambda r: r["s"] is None,
        "s != 's5'": lambda r: r["s"] is not None and r["s"] != "s5",                      # NULLs excluded
        "s NOT IN ('s1', 's2')": lambda r: r["s"] is not None and r["s"] not in ("s1", "s2"),
        "f64 > 50.0": lambda r: r["f64"] > 50.0,                                           # not pushed (float)
        "dec >= 10": lambda r: r["dec"] is not None and r["dec"] >= 10,
        "d < DATE'2024-02-01'": lambda r: r["d"] < dt.date(2024, 2, 1),
        "ltz >= TIMESTAMP'1970-01-01 00:02:00'": lambda r: r["ltz"] >= dt.datetime(1970, 1, 1, 0, 2,
                                                                                     tzinfo=dt.UTC),
        "ts3 < TIMESTAMP_NTZ'1970-01-01 00:00:30'": lambda r: r["ts3"] < dt.datetime(1970, 1, 1, 0, 0, 30),
        "b = true AND i8 <=> 4": lambda r: r["b"] is True and r["i8"] == 4,
        "s LIKE 's1%'": lambda r: r["s"] is not None and r["s"].startswith("s1"),          # not translated
        "i32 IN (3, 6, NULL)": lambda r: r["i32"] in (3, 6),
    }
    rows = engine.to_pylist()
    for condition, keep in cases.items():
        got = sorted(r.id for r in df.filter(condition).select("id").collect())
        assert got == sorted(r["id"] for r in rows if keep(r)), condition


def test_reads_without_filter_pushdown_when_the_session_disables_it(spark, warehouse):
    table = Catalog(warehouse).create_table("db.np", pa.schema([("id", pa.int64()), ("dt", pa.string())]),
                                            partition_keys=["dt"])
    table.write(pa.table({"id": [1, 2, 3], "dt": ["a", "b", "b"]}))
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        df = load(spark, warehouse, "db.np", filterPushdown="false").filter("dt = 'b'")
        assert sorted(r.id for r in df.collect()) == [2, 3]
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


def test_incremental_between_snapshots_and_tags_with_audit_log(spark, warehouse):
    table = Catalog(warehouse).create_table("db.inc", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                                 ("v", pa.string())]),
                                            primary_keys=["id"], options={"bucket": "2"})
    table.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))                   # 1
    table.create_tag("t1")
    table.write(pa.table({"id": [2, 4], "v": ["B", "d"]}))                           # 2
    table.write(pa.table({"id": [3], "v": ["c"]}), row_kinds=["-D"])                 # 3
    table.write(pa.table({"id": [4], "v": ["D"]}))                                   # 4

    def rows(**opts: Any) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in load(spark, warehouse, "db.inc", **opts).collect())

    # every change as written (as Paimon: not merged per key); without audit-log only +I/+U rows
    assert rows(**{"incremental-between": "1,4"}) == [(2, "B"), (4, "D"), (4, "d")]
    assert rows(**{"incremental-between": "t1,3", "audit-log": "true"}) == [
        ("+I", 2, "B"), ("+I", 4, "d"), ("-D", 3, "c")]
    assert rows(**{"audit-log": "true"}) == [("+I", 1, "a"), ("+I", 2, "B"), ("+I", 4, "D")]
    stamps = [s.time_millis for s in table.snapshots()]
    assert rows(**{"incremental-between-timestamp": f"{stamps[2]},{stamps[3]}"}) == [(4, "D")]
    assert rows(**{"incremental-between": "4,4"}) == []


def test_scan_fallback_branch_partitions_main_lacks_come_from_the_fallback(spark, warehouse):
    """``scan.fallback-branch`` (Paimon's FallbackReadFileStoreTable) through Spark: each split is read from the
    branch it was planned on, with that branch's schema, so the DataFrame equals the engine's read."""
    from table_engine.schema_change import SetOption

    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                        pa.field("v", pa.string())])
    t = Catalog(warehouse).create_table("db.fb", schema, primary_keys=["dt", "id"], partition_keys=["dt"],
                                        options={"bucket": "2"})
    t.create_branch("stream")
    t.branch_table("stream").write(pa.table({"dt": ["d1", "d1", "d2", "d3"], "id": [1, 2, 1, 5],
                                             "v": ["s", "s", "s", "s"]}, schema=schema))
    t.write(pa.table({"dt": ["d1"], "id": [1], "v": ["m"]}, schema=schema))
    time.sleep(0.005)
    t.branch_table("stream").write(pa.table({"dt": ["d4"], "id": [7], "v": ["s"]}, schema=schema))
    t.write(pa.table({"dt": ["d1"], "id": [1], "v": ["n"]}, schema=schema))
    t.alter(SetOption("scan.fallback-branch", "stream"))
    t = Catalog(warehouse).get_table("db.fb")
    engine = t.read().sort_by([("dt", "ascending"), ("id", "ascending")])
    assert engine.to_pylist() == [{"dt": "d1", "id": 1, "v": "n"}, {"dt": "d2", "id": 1, "v": "s"},
                                  {"dt": "d3", "id": 5, "v": "s"}, {"dt": "d4", "id": 7, "v": "s"}]
    df = load(spark, warehouse, "db.fb")
    got = df.toArrow().sort_by([("dt", "ascending"), ("id", "ascending")])
    assert got.to_pylist() == engine.to_pylist()
    # time travel travels the fallback too: main's snapshot 1 predates the fallback's d4
    travelled = t.read(snapshot_id=1).sort_by([("dt", "ascending"), ("id", "ascending")])
    assert [r["dt"] for r in travelled.to_pylist()] == ["d1", "d2", "d3"]
    got = load(spark, warehouse, "db.fb", **{"scan.snapshot-id": "1"}).toArrow()
    assert got.sort_by([("dt", "ascending"), ("id", "ascending")]).to_pylist() == travelled.to_pylist()
    with pytest.raises(Exception, match="scan.fallback-branch"):  # not read without the fallback's changes
        load(spark, warehouse, "db.fb", **{"incremental-between": "1,2"}).toArrow()
    assert load(spark, warehouse, "db.fb").filter("dt = 'd3'").toArrow().column("id").to_pylist() == [5]
    # the native (row-conversion-free) read leaves such a table to the paimon source, saying why
    from table_engine.spark.datasource.native_read import read_table_planned

    native, plan = read_table_planned(spark, "db.fb", warehouse=warehouse)
    assert "scan.fallback-branch" in str(plan.reason) and native.count() == 4
