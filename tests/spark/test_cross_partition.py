"""Spark writes of a cross-partition upsert table (primary key without the partition field, bucket -1): rows are
routed by key, so keys that move between partitions keep one row, and unrouted writes by several tasks fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.spark import write_dataframe

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string()),
                    pa.field("dt", pa.string())])


def frame(spark: Any, rows: list[tuple[Any, ...]], parts: int) -> Any:
    return spark.createDataFrame(rows, "id bigint, v string, dt string").repartition(parts)


def test_routed_spark_writes_move_keys_between_partitions(spark: Any, warehouse: str) -> None:
    table = Catalog(warehouse).create_table("db.xp", SCHEMA, primary_keys=["id"], partition_keys=["dt"],
                                            options={"dynamic-bucket.target-row-num": "20"})
    first = [(i, f"a{i}", f"d{i % 3}") for i in range(100)]
    assert write_dataframe(frame(spark, first, 3), warehouse, "db.xp", parallelism=3) == 1
    second = [(i, f"b{i}", f"d{(i + 1) % 3}") for i in range(50, 150)]   # 50 keys move, 50 are new
    assert write_dataframe(frame(spark, second, 2), warehouse, "db.xp", parallelism=3) == 2
    got = {r["id"]: (r["v"], r["dt"]) for r in table.read().to_pylist()}
    assert table.read().num_rows == 150 == len(got)
    assert got == {i: (v, dt) for i, v, dt in first[:50] + second}
    assert not list(Path(table.path).glob("index/*"))  # no HASH index in this mode


def test_unrouted_spark_write_by_several_tasks_fails_and_commits_nothing(spark: Any, warehouse: str) -> None:
    table = Catalog(warehouse).create_table("db.xp2", SCHEMA, primary_keys=["id"], partition_keys=["dt"])
    df = frame(spark, [(i, "x", f"d{i % 2}") for i in range(40)], 2)
    with pytest.raises(Exception, match="routed by key"):
        df.write.format("paimon").mode("append").option("warehouse", warehouse).save("db.xp2")
    assert table.latest_snapshot_id() is None
    assert not list(Path(table.path).rglob("data-*"))
