"""Paimon types <-> Spark SQL types, and Arrow batches in exactly the layout Spark expects.

=======================  ==========================  =============================================
Paimon                   Spark                       Arrow batch handed to Spark
=======================  ==========================  =============================================
BOOLEAN .. BIGINT        Boolean/Byte/Short/Int/Long same widths
FLOAT, DOUBLE            Float, Double
DECIMAL(p, s)            Decimal(p, s)               decimal128(p, s)
CHAR/VARCHAR             String                      string
BINARY/VARBINARY         Binary                      binary
DATE                     Date                        date32
TIME(p)                  Time(p)                     Spark's time type
TIMESTAMP(p)             TimestampNTZ                timestamp[us] (p > 6 is truncated to micros)
TIMESTAMP_LTZ(p)         Timestamp                   timestamp[us, tz=UTC]
ARRAY / MAP / ROW        Array / Map / Struct        nested, recursively
VECTOR<t, n>             Array(t)                    list of t (n items)
VARIANT                  Variant                     struct<value: binary, metadata: binary>
BLOB                     Binary                      binary
=======================  ==========================  =============================================

Nullability is carried over exactly (primary-key columns are NOT NULL), because a Python data source must
return batches whose Arrow schema equals ``to_arrow_schema(schema, timezone="UTC")`` or Spark fails with
DATA_SOURCE_RETURN_SCHEMA_MISMATCH. Tables created from a DataFrame go the other way through Arrow: Spark
``Timestamp`` becomes TIMESTAMP_LTZ(6) and ``TimestampNTZ`` becomes TIMESTAMP(6).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from table_engine.errors import SchemaError
from table_engine.types import DataField, DataType

_TIMEZONE_PARAMETER = "timezone" in inspect.signature(to_arrow_schema).parameters

_ATOMIC: dict[str, T.DataType] = {
    "BOOLEAN": T.BooleanType(), "TINYINT": T.ByteType(), "SMALLINT": T.ShortType(), "INT": T.IntegerType(),
    "BIGINT": T.LongType(), "FLOAT": T.FloatType(), "DOUBLE": T.DoubleType(), "CHAR": T.StringType(),
    "VARCHAR": T.StringType(), "BINARY": T.BinaryType(), "VARBINARY": T.BinaryType(), "BLOB": T.BinaryType(),
    "DATE": T.DateType(), "TIMESTAMP": T.TimestampNTZType(), "TIMESTAMP_LTZ": T.TimestampType(),
}


def to_spark_type(t: DataType) -> T.DataType:
    """The Spark type of a Paimon type (see the module table)."""
    if t.root in _ATOMIC:
        return _ATOMIC[t.root]
    if t.root == "DECIMAL":
        assert t.precision is not None and t.scale is not None
        return T.DecimalType(t.precision, t.scale)
    if t.root == "TIME":
        return T.TimeType(min(t.precision if t.precision is not None else 0, 6))
    if t.root == "VARIANT":
        return T.VariantType()
    if t.root in ("ARRAY", "VECTOR"):
        assert t.element is not None
        return T.ArrayType(to_spark_type(t.element), t.element.nullable)
    if t.root == "MAP":
        assert t.key is not None and t.value is not None
        return T.MapType(to_spark_type(t.key), to_spark_type(t.value), t.value.nullable)
    if t.root == "ROW":
        return T.StructType([to_spark_field(f) for f in t.fields])
    raise SchemaError(f"type {t} has no Spark equivalent")


def to_spark_field(f: DataField) -> T.StructField:
    """The Spark StructField of a table field."""
    return T.StructField(f.name, to_spark_type(f.type), f.type.nullable)


def spark_schema(fields: Sequence[DataField], leading: Sequence[T.StructField] = ()) -> T.StructType:
    """The Spark schema of table ``fields`` (``leading`` columns first, e.g. a row-kind column)."""
    return T.StructType([*leading, *[to_spark_field(f) for f in fields]])


def arrow_schema_for(schema: T.StructType) -> pa.Schema:
    """The Arrow schema of Spark rows: exactly what a Python data source's ``read()`` must return, and what a
    table created from a DataFrame of this schema is made of (timestamps in UTC)."""
    if _TIMEZONE_PARAMETER:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)  # pyspark 3.5: no such parameter, timestamps are always in UTC


def conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with ``target``'s exact types and nullability (timestamps truncated to microseconds)."""
    if batch.schema.equals(target):
        return batch
    if batch.schema.names != target.names:
        batch = batch.select(target.names)
    return batch.cast(target, safe=False)
