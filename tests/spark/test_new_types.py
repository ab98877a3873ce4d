"""VARIANT and VECTOR columns through the Spark data source (issue 23, ADR 0018): Spark reads a VECTOR as an array
and a VARIANT as Spark's VariantType, and writes them back into the table."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from table_engine import Catalog
from table_engine.types import VARIANT_ARROW_TYPE

SCHEMA = pa.schema([("id", pa.int64()), ("v", VARIANT_ARROW_TYPE), ("vec", pa.list_(pa.float32(), 3))])


def test_read_and_write_variant_and_vector(spark: Any, warehouse: str) -> None:
    t = Catalog(warehouse).create_table("db.t", SCHEMA)
    rows = pa.table({"id": [1, 2], "v": [{"value": b"\x0c\x07", "metadata": b"\x01\x00\x00"}, None],
                     "vec": [[1.0, 2.0, 3.0], None]}, schema=SCHEMA)
    t.write(rows)
    df = spark.read.format("paimon").option("warehouse", warehouse).load("db.t")
    assert [f.dataType.typeName() for f in df.schema.fields] == ["long", "variant", "array"]
    got = sorted(df.collect(), key=lambda r: r["id"])
    assert got[0]["vec"] == [1.0, 2.0, 3.0] and got[1]["vec"] is None and got[1]["v"] is None
    assert str(got[0]["v"]) == "7"  # Spark decodes the variant: an int8 7
    df.write.format("paimon").option("warehouse", warehouse).mode("append").save("db.t")
    back = Catalog(warehouse).get_table("db.t").read().sort_by("id").to_pylist()
    assert back == sorted(rows.to_pylist() * 2, key=lambda r: r["id"])
