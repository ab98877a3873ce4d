"""``read_table``: raw-convertible files through Spark's Parquet reader, the rest through the ``paimon`` source.

Property test: random tables (every merge engine, deletion vectors on/off, partitioned or not, evolved schemas,
compacted or not) read at the latest snapshot, an older snapshot id and a tag give exactly the Python source's rows
and schema. Focused tests assert which files went native (counts)."""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.catalog import Catalog
from table_engine.schema_change import AddColumn, RenameColumn, UpdateColumnType
from table_engine.spark import read_table
from table_engine.spark.datasource.native_read import read_table_planned
from table_engine.table import Table
from tests.budget import examples

pytestmark = pytest.mark.timeout(900)

BASE = pa.schema([("k", pa.int64()), ("p", pa.string()), ("a", pa.int32()), ("s", pa.string())])


def _create(root: Path, pk: bool, partitioned: bool, options: dict[str, str]) -> Table:
    cat = Catalog(str(root))
    cat.create_database("db", ignore_if_exists=True)
    keys = (["k", "p"] if partitioned else ["k"]) if pk else []
    return cat.create_table("db.t", BASE, primary_keys=keys, partition_keys=["p"] if partitioned else [],
                            options={"bucket": "2" if pk else "-1", **options})


def _batch(t: Table, lo: int, n: int, seed: int) -> pa.Table:
    cols: dict[str, pa.Array] = {}
    for f in t.arrow_schema:
        if f.name == "k":
            cols[f.name] = pa.array(range(lo, lo + n), pa.int64())
        elif f.name == "p":
            cols[f.name] = pa.array([f"p{(i + seed) % 3}" for i in range(n)], pa.string())
        elif pa.types.is_integer(f.type):
            cols[f.name] = pa.array([(i * 7 + seed) % 11 for i in range(n)], f.type)
        else:
            cols[f.name] = pa.array([None if (i + seed) % 5 == 0 else f"v{seed}-{i}" for i in range(n)], f.type)
    return pa.table(cols, schema=t.arrow_schema)


def _same(spark: Any, warehouse: str, dvs: bool = False, **options: str) -> tuple[int, int]:
    df, info = read_table_planned(spark, "db.t", warehouse=warehouse, native_deletion_vectors=dvs, **options)
    py = spark.read.format("paimon").option("warehouse", warehouse).options(**options).load("db.t")
    assert [(f.name, f.dataType) for f in df.schema] == [(f.name, f.dataType) for f in py.schema]
    got = sorted(map(tuple, df.collect()), key=repr)
    want = sorted(map(tuple, py.collect()), key=repr)
    assert got == want
    return info.native_files, info.python_files


ENGINES = st.sampled_from([
    ("append", {}), ("deduplicate", {}), ("deduplicate", {"deletion-vectors.enabled": "true"}),
    ("partial-update", {"merge-engine": "partial-update"}),
    ("partial-update", {"merge-engine": "partial-update", "deletion-vectors.enabled": "true"}),
    ("aggregation", {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum"}),
    ("aggregation", {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum",
                     "deletion-vectors.enabled": "true"}),
    ("first-row", {"merge-engine": "first-row"}),
])
STEPS = st.lists(st.sampled_from(["write", "write", "write", "compact", "add", "rename", "widen"]), min_size=2,
                 max_size=7)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(engine=ENGINES, partitioned=st.booleans(), steps=STEPS, dvs=st.booleans(), data=st.data())
def test_read_table_equals_python_source(spark: Any, tmp_path_factory: pytest.TempPathFactory,
                                         engine: tuple[str, dict[str, str]], partitioned: bool, steps: list[str],
                                         dvs: bool, data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("native")
    name, options = engine
    t = _create(root, name != "append", partitioned, options)
    t.write(_batch(t, 0, 30, 0))
    t.create_tag("first")
    done: set[str] = set()
    for i, step in enumerate(steps, start=1):
        if step == "write":
            t.write(_batch(t, data.draw(st.integers(0, 40)), data.draw(st.integers(1, 25)), i))
        elif step == "compact":
            t.maintenance.compact(full=True)
        elif step not in done:
            done.add(step)
            t.alter({"add": AddColumn("x", pa.int64()), "rename": RenameColumn("s", "s2"),
                     "widen": UpdateColumnType("a", pa.int64())}[step])
    wh = str(root)
    _same(spark, wh, dvs)
    _same(spark, wh, dvs, **{"scan.snapshot-id": "1"})
    _same(spark, wh, dvs, **{"scan.tag-name": "first"})


# ---- which files go native ----------------------------------------------------------------------------------------
def test_counts_append_compacted_and_merged(spark: Any, tmp_path: Path) -> None:
    a = _create(tmp_path / "a", False, True, {})
    for i in range(3):
        a.write(_batch(a, 0, 20, i))
    n_files = sum(len(s.files) for s in a.plan())
    assert _same(spark, str(tmp_path / "a")) == (n_files, 0)

    p = _create(tmp_path / "p", True, False, {})
    p.write(_batch(p, 0, 40, 0))
    p.write(_batch(p, 20, 40, 1))
    native, python = _same(spark, str(tmp_path / "p"))
    assert native == 0 and python > 0
    p.maintenance.compact(full=True)
    assert _same(spark, str(tmp_path / "p")) == (2, 0)  # one sorted run per bucket


def test_orc_and_avro_files_go_through_the_python_source(spark: Any, tmp_path: Path) -> None:
    t = _create(tmp_path / "m", False, False, {})
    t.write(_batch(t, 0, 20, 0))  # a Parquet file, then ORC and Avro ones: a table whose format changed
    for i, fmt in enumerate(("orc", "avro"), start=1):
        t = t.copy({"file.format": fmt})
        t.write(_batch(t, 20 * i, 20, i))
    assert _same(spark, str(tmp_path / "m")) == (1, 2)


def test_deletion_vectors_apply_as_row_positions(spark: Any, tmp_path: Path) -> None:
    t = _create(tmp_path, True, False, {"deletion-vectors.enabled": "true"})
    t.write(_batch(t, 0, 50, 0))
    t.write(_batch(t, 10, 5, 1))
    t.write(pa.table({"k": pa.array([1, 2], pa.int64()), "p": ["p1", "p2"], "a": pa.array([0, 0], pa.int32()),
                      "s": ["x", "y"]}), row_kinds=["-D", "-D"])
    splits = t.plan()
    assert any(s.deletion_files for s in splits)
    native, python = _same(spark, str(tmp_path), dvs=True)
    assert python == 0 and native == sum(len(s.files) for s in splits)
    assert read_table(spark, "db.t", warehouse=str(tmp_path), native_deletion_vectors=True).count() == 48
    with_vectors = sum(len(s.deletion_files or {}) for s in splits)
    assert _same(spark, str(tmp_path)) == (native - with_vectors, with_vectors)  # default: vectors via Python


def test_projection_filter_and_partition_pruning(spark: Any, tmp_path: Path) -> None:
    t = _create(tmp_path, False, True, {})
    t.write(_batch(t, 0, 30, 0))
    wh = str(tmp_path)
    df, info = read_table_planned(spark, "db.t", warehouse=wh, columns=["k"], filter=[("p", "=", "p1")])
    assert info.native_files == 1  # one partition's file planned
    want = sorted(r.k for r in spark.read.format("paimon").option("warehouse", wh).load("db.t")
                  .filter("p = 'p1'").select("k").collect())
    assert df.columns == ["k"] and sorted(r.k for r in df.collect()) == want
    df.createOrReplaceTempView("native_t")
    assert spark.sql("SELECT count(*) AS n FROM native_t").collect()[0].n == len(want)


def test_fallbacks_read_through_the_python_source(spark: Any, tmp_path: Path) -> None:
    t = _create(tmp_path, True, False, {})
    t.write(_batch(t, 0, 10, 0))
    t.write(_batch(t, 5, 10, 1))
    _, info = read_table_planned(spark, "db.t", warehouse=str(tmp_path), **{"incremental-between": "1,2"})
    assert info.reason == "incremental read" and info.native_files == 0
    df, info = read_table_planned(spark, "db.t", warehouse=str(tmp_path), **{"audit-log": "true"})
    assert info.reason == "audit-log read" and df.columns[0] == "rowkind"


def test_timestamps_dates_and_decimals_go_native(spark: Any, tmp_path: Path) -> None:
    cat = Catalog(str(tmp_path))
    cat.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us")), ("ms", pa.timestamp("ms")),
                        ("ltz", pa.timestamp("us", tz="UTC")), ("d", pa.date32()), ("dec", pa.decimal128(10, 2))])
    t = cat.create_table("db.t", schema, primary_keys=["k"], options={"bucket": "1"})
    t.write(pa.table({"k": pa.array([1, 2, 3], pa.int64()), "ts": pa.array([0, 1_700_000_000_123_456, None],
                                                                            pa.timestamp("us")),
                      "ms": pa.array([5, None, 1_700_000_000_123], pa.timestamp("ms")),
                      "ltz": pa.array([7, 8, None], pa.timestamp("us", tz="UTC")),
                      "d": pa.array([0, 19_000, None], pa.date32()),
                      "dec": pa.array([None, decimal.Decimal("1.25"), decimal.Decimal("-3.00")], pa.decimal128(10, 2))},
                     schema=schema))
    assert _same(spark, str(tmp_path)) == (1, 0)
