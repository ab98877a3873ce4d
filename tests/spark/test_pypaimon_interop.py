"""Tables written through the Spark data source read identically in pypaimon 2.1.0."""

from __future__ import annotations

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
