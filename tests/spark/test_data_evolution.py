"""The Spark data source on a data-evolution table: reads merge the column files (no file is read natively as whole
rows; filters on updated columns prune nothing wrongly), and Spark writes of whole rows continue the row ids."""

from __future__ import annotations

import pathlib
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.spark import write_dataframe
from tests.spark.test_read import load
from tests.table_engine.ops.test_consume import REFUSED, assert_untouched, data_evolution_source

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string())])


def test_spark_reads_merged_rows_and_writes_whole_rows(spark: Any, warehouse: str) -> None:
    t = Catalog(warehouse).create_table("db.de", SCHEMA, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true"})
    t.write(pa.table({"id": pa.array(range(6), pa.int64()), "a": pa.array(range(6), pa.int64()),
                      "b": [f"b{i}" for i in range(6)]}))
    t.data_evolution.update_by_row_id(
        pa.table({"_ROW_ID": pa.array([1, 4], pa.int64()), "a": pa.array([100, 400], pa.int64())}))
    t.write(pa.table({"id": pa.array([6], pa.int64()), "b": ["only-b"]}))
    want = sorted(t.read().to_pylist(), key=lambda r: r["id"])
    assert {r["id"]: r["a"] for r in want}[4] == 400
    got = load(spark, warehouse, "db.de").toArrow().to_pylist()
    assert sorted(got, key=lambda r: r["id"]) == want
    filtered = load(spark, warehouse, "db.de").where("a >= 100").toArrow().to_pylist()
    assert sorted(r["id"] for r in filtered) == [1, 4]
    write_dataframe(spark.createDataFrame([(7, 7, "s")], "id long, a long, b string"), warehouse, "db.de")
    rows = Catalog(warehouse).get_table("db.de").read(columns=["_ROW_ID", "id"]).to_pylist()
    assert sorted((r["_ROW_ID"], r["id"]) for r in rows) == [(i, i) for i in range(8)]


def test_spark_reads_of_changes_are_refused(spark: Any, warehouse: str) -> None:
    from table_engine.errors import UnsupportedTableFeatureError

    t = Catalog(warehouse).create_table("db.dec", SCHEMA, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true"})
    t.write(pa.table({"id": pa.array([1], pa.int64()), "a": pa.array([1], pa.int64()), "b": ["x"]}))
    t.write(pa.table({"id": pa.array([2], pa.int64()), "a": pa.array([2], pa.int64()), "b": ["y"]}))
    with pytest.raises(Exception, match="data-evolution.enabled .* for incremental reads") as info:
        load(spark, warehouse, "db.dec", **{"incremental-between": "1,2"}).collect()
    assert "UnsupportedTableFeatureError" in str(info.value) or isinstance(info.value, UnsupportedTableFeatureError)


def test_the_consume_changelog_job_refuses_what_the_local_runner_refuses(spark: Any, warehouse: str,
                                                                        tmp_path: pathlib.Path) -> None:
    """The Spark runner takes consume-changelog's guards from the local one (``ops.consume.prepare``): the changes of
    a data-evolution table are refused before any output or consumer progress (tests/table_engine/ops/
    test_consume.py)."""
    from table_engine.errors import UnsupportedTableFeatureError
    from table_engine.spark.jobs.run import spark_consume_changelog

    out = tmp_path / "changes"
    for cmd in data_evolution_source(warehouse, out):
        with pytest.raises(UnsupportedTableFeatureError, match=REFUSED):
            spark_consume_changelog(cmd, spark)
    assert_untouched(warehouse, out)


def test_spark_writes_and_reads_blob_columns(spark: Any, warehouse: str) -> None:
    """A BLOB table (ADR 0018, amended): Spark's binary rows go to data files and rolled ``.blob`` files."""
    schema = pa.schema([("id", pa.int64()), ("img", pa.binary())])
    Catalog(warehouse).create_table("db.blob", schema, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-field": "img",
        "blob.target-file-size": "1 kb"})
    rows = [(i, None if i == 2 else bytes([i]) * 700) for i in range(5)]
    write_dataframe(spark.createDataFrame(rows, "id long, img binary"), warehouse, "db.blob")
    files = Catalog(warehouse).get_table("db.blob$files").read(columns=["file_path"]).column(0).to_pylist()
    assert sum(p.endswith(".blob") for p in files) > 1
    got = load(spark, warehouse, "db.blob").toArrow().to_pylist()
    assert sorted((r["id"], r["img"]) for r in got) == rows
    assert sorted(Catalog(warehouse).get_table("db.blob").read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "img": v} for i, v in rows]
