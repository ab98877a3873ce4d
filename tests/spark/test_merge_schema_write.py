"""``write.merge-schema`` on Spark's file route: the job's driver alters the table (the one decision the engine's own
writes use, ``table_engine.table.writing.merge_schema``) before the tasks write the files, and the table then reads
as the engine's own merge-schema write of the same files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import SchemaError
from table_engine.ops import Write
from table_engine.spark.jobs.run import run_spark_job
from tests.table_engine.test_bad_input import warehouse_state

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int32())])
MERGE = {"write.merge-schema": "true"}


def test_the_file_route_merges_the_schema_as_the_engine_does(spark: Any, warehouse: str, tmp_path: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    catalog = Catalog(warehouse)
    tables = {name: catalog.create_table(name, SCHEMA, primary_keys=["k"], options={"bucket": "2"})
              for name in ("db.ref", "db.out")}
    for t in tables.values():
        t.write(pa.table({"k": [1, 2], "v": pa.array([10, 20], pa.int32())}, schema=SCHEMA))
    src = tmp_path / "src"
    src.mkdir()
    files = [pa.table({"k": [2, 3], "v": pa.array([2**40, 30], pa.int64()), "tag": ["b", "c"]}),
             pa.table({"k": [4, 1], "v": pa.array([40, 11], pa.int64()), "tag": [None, "a"]})]
    for i, f in enumerate(files):
        pq.write_table(f, src / f"part-{i}.parquet")
    for f in files:
        catalog.get_table("db.ref").copy(MERGE).write(f)  # the reference: the engine's own merge-schema writes
    with caplog.at_level("INFO", logger="table_engine"):
        result = run_spark_job(Write(warehouse=warehouse, table="db.out", source=str(src), options=MERGE,
                                     parallelism=2), spark)
    assert result["rows"] == 4
    assert "through Spark rows" not in caplog.text and "write.merge-schema: schema 1" in caplog.text
    ref, out = catalog.get_table("db.ref"), catalog.get_table("db.out")
    assert [(f.name, str(f.type)) for f in out.schema.fields] == [("k", "BIGINT NOT NULL"), ("v", "BIGINT"),
                                                                  ("tag", "STRING")]
    assert out.schema.fields == ref.schema.fields
    assert out.read().sort_by("k").to_pylist() == ref.read().sort_by("k").to_pylist() == [
        {"k": 1, "v": 11, "tag": "a"}, {"k": 2, "v": 2**40, "tag": "b"}, {"k": 3, "v": 30, "tag": "c"},
        {"k": 4, "v": 40, "tag": None}]
    # a column that cannot merge: one line before any task, the table as it was
    bad = tmp_path / "bad"
    bad.mkdir()
    pq.write_table(pa.table({"k": [5], "v": ["five"], "tag": ["e"]}), bad / "part-0.parquet")
    before = warehouse_state(warehouse)
    with pytest.raises(SchemaError, match="column 'v' is BIGINT in the table and STRING in the data") as info:
        run_spark_job(Write(warehouse=warehouse, table="db.out", source=str(bad), options=MERGE), spark)
    assert "\n" not in str(info.value)
    assert warehouse_state(warehouse) == before
