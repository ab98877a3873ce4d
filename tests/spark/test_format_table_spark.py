"""Format tables and Spark's own file sources: Spark reads the directory the engine wrote with
``spark.read.format(fmt)``, and the engine reads what Spark wrote (``partitionBy`` directories, ``part-*`` files,
``_SUCCESS``)."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from table_engine.format_table import FormatTable
from table_engine.io.file_io import LocalFileIO

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(10, 2)),
                    ("ok", pa.bool_()), ("day", pa.date32()), ("ts", pa.timestamp("us")), ("pt", pa.string())])
DATA = pa.table({
    "id": [1, 2, 3], "name": ["a,b", None, 'q"x'], "amount": [decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")],
    "ok": [True, None, False], "day": [datetime.date(2024, 1, 2), None, datetime.date(1999, 12, 31)],
    "ts": [datetime.datetime(2024, 1, 1, 12, 0, 0, 123456), None, datetime.datetime(2000, 1, 1)],
    "pt": ["x", "y", "x"]}, schema=SCHEMA)
SPARK_SCHEMA = ("id BIGINT, name STRING, amount DECIMAL(10,2), ok BOOLEAN, day DATE, ts TIMESTAMP_NTZ, "
                "pt STRING")
CSV = {"timestampNTZFormat": "yyyy-MM-dd HH:mm:ss[.SSSSSS]"}
"""Paimon's timestamp text; Spark's csv defaults otherwise match Paimon's (',', '"', '\\', no header, null '')."""


def _rows(rows: list[Any]) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in rows), key=lambda r: r["id"])


@pytest.mark.parametrize("fmt", ["csv", "parquet", "orc"])
def test_spark_reads_engine_table(spark: Any, tmp_path: Path, fmt: str) -> None:
    location = tmp_path / "t"
    FormatTable(LocalFileIO(), str(location), SCHEMA, ["pt"], {"file.format": fmt}).write(DATA)
    expected = DATA.to_pylist()
    schema = SPARK_SCHEMA
    if fmt == "orc":  # Spark maps an ORC TIMESTAMP (pyarrow's for a naive timestamp) to TIMESTAMP, never _NTZ
        schema = schema.replace("TIMESTAMP_NTZ", "TIMESTAMP")
        expected = [{k: v for k, v in r.items() if k != "ts"} for r in expected]
    reader = spark.read.format(fmt).schema(schema)
    if fmt == "csv":
        reader = reader.options(**CSV)
    df = reader.load(str(location))
    assert _rows(df.drop("ts").collect() if fmt == "orc" else df.collect()) == expected


@pytest.mark.parametrize("fmt", ["csv", "parquet", "orc", "json"])
def test_engine_reads_spark_table(spark: Any, tmp_path: Path, fmt: str) -> None:
    location = tmp_path / "t"
    df = spark.createDataFrame(DATA.to_pylist(), SPARK_SCHEMA)
    writer = df.write.format(fmt).partitionBy("pt").mode("overwrite")
    if fmt in ("csv", "json"):
        writer = writer.options(**CSV)
    writer.save(str(location))
    assert (location / "_SUCCESS").exists()
    back = FormatTable(LocalFileIO(), str(location), SCHEMA, ["pt"], {"file.format": fmt}).read()
    assert back.sort_by("id").to_pylist() == DATA.to_pylist()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_hive_registered_format_table_round_trips_with_spark(spark: Any, tmp_path: Path, fmt: str) -> None:
    """A format table as the Hive catalog registers it (its serde's ``field.delim`` for csv) and opens it again
    (``format_table_from_schema``): Spark reads what the engine wrote there, the engine reads what Spark appended,
    and an engine overwrite of one partition leaves Spark's rows of the other."""
    from table_engine.catalog.hive import mapping
    from table_engine.format_table.catalog import format_table_from_schema, format_table_schema

    location = tmp_path / "t"
    options = {"file.format": fmt, **({"csv.field-delimiter": ";"} if fmt == "csv" else {})}
    registered = mapping.format_table("db", "t", str(location), format_table_schema(SCHEMA, ["pt"], options, None),
                                      owner="me", now=1)
    definition = mapping.format_table_schema(registered)
    assert definition is not None
    table = format_table_from_schema(LocalFileIO(), str(location), definition)
    table.write(DATA)
    reader = spark.read.format(fmt).schema(SPARK_SCHEMA)
    if fmt == "csv":
        reader = reader.options(sep=";", **CSV)
    assert _rows(reader.load(str(location)).collect()) == DATA.to_pylist()

    more = spark.createDataFrame([{**DATA.to_pylist()[0], "id": 10, "pt": "y"}], SPARK_SCHEMA)
    writer = more.write.format(fmt).partitionBy("pt").mode("append")
    if fmt == "csv":
        writer = writer.options(sep=";", **CSV)
    writer.save(str(location))
    assert sorted(table.read().column("id").to_pylist()) == [1, 2, 3, 10]
    table.overwrite(DATA.filter(pc.equal(DATA.column("pt"), "x")), partitions={"pt": "x"})
    assert sorted(table.read().column("id").to_pylist()) == [1, 2, 3, 10]
    assert sorted(r.id for r in reader.load(str(location)).collect()) == [1, 2, 3, 10]
