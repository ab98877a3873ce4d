"""Format tables and Spark's own file sources: Spark reads the directory the engine wrote with
``spark.read.format(fmt)``, and the engine reads what Spark wrote (``partitionBy`` directories, ``part-*`` files,
``_SUCCESS``)."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
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
