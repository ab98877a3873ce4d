"""Tables written through the Spark data source read identically in pypaimon 2.1.0."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.spark import write_dataframe
from tests.interop.conftest import assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]

DDL = "id bigint, name string, amount decimal(12, 2), ts timestamp, ntz timestamp_ntz, dt string, op string"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                    ("amount", pa.decimal128(12, 2)), ("ts", pa.timestamp("us", tz="UTC")),
                    ("ntz", pa.timestamp("us")), pa.field("dt", pa.string(), nullable=False), ("op", pa.string())])
CASES = {
    "fixed": (["id", "dt"], ["dt"], {"bucket": "3", "rowkind.field": "op"}),
    "dynamic": (["id", "dt"], ["dt"], {"bucket": "-1", "dynamic-bucket.target-row-num": "150",
                                       "rowkind.field": "op"}),
    "append": ([], ["dt"], {}),
}


def batch(spark: Any, ids: range, kind: str, tag: str) -> Any:
    return spark.sql(
        f"SELECT id, concat('{tag}-', id) AS name, CAST(id * 1.25 AS DECIMAL(12, 2)) AS amount, "
        "timestamp_micros(id * 1000003) AS ts, CAST(timestamp_micros(id * 7) AS TIMESTAMP_NTZ) AS ntz, "
        f"concat('d', id % 3) AS dt, '{kind}' AS op FROM range({ids.start}, {ids.stop})").repartition(3)


@pytest.mark.parametrize("case", list(CASES))
def test_spark_written_tables_read_identically_in_pypaimon(spark, warehouse, pypaimon, case):
    pks, parts, options = CASES[case]
    table = Catalog(warehouse).create_table(f"db.{case}", SCHEMA, primary_keys=pks, partition_keys=parts,
                                            options=options)
    write_dataframe(batch(spark, range(1000), "+I", "a"), warehouse, f"db.{case}", parallelism=3)
    write_dataframe(batch(spark, range(500, 1200), "+I", "b"), warehouse, f"db.{case}", parallelism=2)
    if pks:
        write_dataframe(batch(spark, range(100), "-D", "c"), warehouse, f"db.{case}", parallelism=2)
    ours = table.read()
    assert ours.num_rows == (1100 if pks else 1700)
    theirs = pypaimon.read(warehouse, f"db.{case}")
    assert_same_rows(theirs, ours, pks or ["id", "name"], theirs.schema)
    for sid in range(1, (table.latest_snapshot_id() or 0) + 1):                   # every snapshot, too
        assert_same_rows(pypaimon.read(warehouse, f"db.{case}", snapshot=sid), table.read(snapshot_id=sid),
                         pks or ["id", "name"], theirs.schema)


def test_spark_written_first_row_table_is_visible_to_pypaimon(spark, warehouse, pypaimon):
    """Batch reads skip level 0 of first-row tables (Paimon): the Spark writers' commits must be compacted up."""
    ident = "db.first_row"
    table = Catalog(warehouse).create_table(ident, SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"merge-engine": "first-row"})
    write_dataframe(batch(spark, range(1000), "+I", "a"), warehouse, ident, parallelism=3)
    write_dataframe(batch(spark, range(500, 1200), "+I", "b"), warehouse, ident, parallelism=2)
    ours = table.read()
    assert ours.num_rows == 1200
    assert sorted(n for n in ours.column("name").to_pylist() if n.startswith("b")) == \
        sorted(f"b-{i}" for i in range(1000, 1200))
    theirs = pypaimon.read(warehouse, ident)
    assert_same_rows(theirs, ours, ["id", "dt"], theirs.schema)
    for sid in range(1, (table.latest_snapshot_id() or 0) + 1):
        assert_same_rows(pypaimon.read(warehouse, ident, snapshot=sid), table.read(snapshot_id=sid), ["id", "dt"],
                         theirs.schema)


FILE_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                         ("amount", pa.decimal128(12, 2)), pa.field("dt", pa.string(), nullable=False)])


def _files(directory: Any, ids: range, tag: str, files: int) -> None:
    import pyarrow.parquet as pq

    directory.mkdir()
    rows = pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"{tag}-{i}" for i in ids],
                     "amount": pa.array([Decimal(i * 125).scaleb(-2) for i in ids], pa.decimal128(12, 2)),
                     "dt": [f"d{i % 3}" for i in ids]}, schema=FILE_SCHEMA)
    step = -(-rows.num_rows // files)
    for f in range(files):
        pq.write_table(rows.slice(f * step, step), directory / f"part-{f}.parquet", row_group_size=97)


@pytest.mark.parametrize("case", list(CASES))
def test_file_route_writes_read_identically_in_pypaimon_and_paimon_java(spark, warehouse, tmp_path, caplog,
                                                                        pypaimon, paimon_java, case):
    """``write --source`` of Parquet files (tasks that read the files with pyarrow, no Spark rows): what the
    tasks commit, in two writes with updated keys, reads the same in pypaimon 2.1 and Paimon Java 1.0."""
    from table_engine.ops import Write
    from table_engine.spark.jobs.run import run_spark_job

    pks, parts, options = CASES[case]
    options = {k: v for k, v in options.items() if k != "rowkind.field"}
    ident = f"db.files_{case}"
    table = Catalog(warehouse).create_table(ident, FILE_SCHEMA, primary_keys=pks, partition_keys=parts,
                                            options=options)
    for tag, ids in (("a", range(1000)), ("b", range(500, 1200))):
        _files(tmp_path / tag, ids, tag, files=4)
        caplog.clear()
        with caplog.at_level("INFO", logger="table_engine.spark"):
            out = run_spark_job(Write(warehouse=warehouse, table=ident, source=str(tmp_path / tag),
                                      parallelism=3), spark)
        assert out["snapshot_id"] is not None
        assert "through Spark rows" not in caplog.text and "parquet files" in caplog.text  # the file route
    ours = table.read()
    assert ours.num_rows == (1200 if pks else 1700)
    keys = pks or ["id", "name"]
    theirs = pypaimon.read(warehouse, ident)
    assert_same_rows(theirs, ours, keys, theirs.schema)
    java = paimon_java.read(warehouse, ident, FILE_SCHEMA)
    assert_same_rows(java.table, ours, keys, FILE_SCHEMA)
