"""Paimon types as Iceberg types: the schema JSON (Java's ``IcebergDataField.toTypeObject``), the name mapping,
partition values as Avro, and Iceberg's single-value serialization of bounds (``IcebergConversions``).

What Paimon 1.0 maps, and so what this package maps: BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DATE, CHAR/VARCHAR
(string), BINARY/VARBINARY (binary), DECIMAL, TIMESTAMP(4..6) (timestamp), TIMESTAMP_LTZ(4..6) (timestamptz), ARRAY
(list), MAP (map), ROW (struct). Everything else is refused as Java refuses it (TINYINT, SMALLINT, TIME, timestamps
of precision 0..3 or 7..9, VARIANT, BLOB, VECTOR): :class:`~table_engine.errors.UnsupportedError`.

Nested ids are Java's (``SpecialFields``): a list element ``BASE + id * 1024 + depth``, a map key
``BASE - id * 1024 - depth`` and a map value ``BASE + id * 1024 + depth`` (the same as an element's, as in Java).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from table_engine.errors import UnsupportedError
from table_engine.format.schema_file import TableSchema
from table_engine.types import DataField, DataType

STRUCTURED_TYPE_FIELD_ID_BASE = 2147483647 // 4
STRUCTURED_TYPE_FIELD_DEPTH_LIMIT = 1 << 10
KEY_FIELD_ID_START = 2147483647 // 2
SEQUENCE_NUMBER_ID = 2147483647 - 1
VALUE_KIND_ID = 2147483647 - 2
PARTITION_FIELD_ID_START = 1000
"""Iceberg partition field ids start at 1000 (Java's ``IcebergPartitionField.FIRST_FIELD_ID``)."""

_SCALARS = {"BOOLEAN": "boolean", "INT": "int", "BIGINT": "long", "FLOAT": "float", "DOUBLE": "double",
            "DATE": "date", "CHAR": "string", "VARCHAR": "string", "BINARY": "binary", "VARBINARY": "binary"}
_EPOCH = datetime(1970, 1, 1)
_EPOCH_DAY = date(1970, 1, 1)


def _timestamp_precision(t: DataType) -> int:
    precision = 6 if t.precision is None else t.precision
    if not 3 < precision <= 6:
        raise UnsupportedError(f"Iceberg compatibility only supports timestamps of precision 4 to 6, not {t}")
    return precision


def iceberg_type(t: DataType, field_id: int, depth: int = 0) -> Any:
    """The Iceberg schema-JSON type of ``t`` (a string, or a list/map/struct object)."""
    if t.root in _SCALARS:
        return _SCALARS[t.root]
    if t.root == "DECIMAL":
        return f"decimal({t.precision}, {t.scale})"
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        _timestamp_precision(t)
        return "timestamp" if t.root == "TIMESTAMP" else "timestamptz"
    base = STRUCTURED_TYPE_FIELD_ID_BASE + field_id * STRUCTURED_TYPE_FIELD_DEPTH_LIMIT + depth + 1
    if t.root == "ARRAY" and t.element is not None:
        return {"type": "list", "element-id": base, "element-required": not t.element.nullable,
                "element": iceberg_type(t.element, field_id, depth + 1)}
    if t.root == "MAP" and t.key is not None and t.value is not None:
        key_id = STRUCTURED_TYPE_FIELD_ID_BASE - field_id * STRUCTURED_TYPE_FIELD_DEPTH_LIMIT - depth - 1
        return {"type": "map", "key-id": key_id, "key": iceberg_type(t.key, field_id, depth + 1),
                "value-id": base, "value-required": not t.value.nullable,
                "value": iceberg_type(t.value, field_id, depth + 1)}
    if t.root == "ROW":
        return {"type": "struct", "fields": [iceberg_field(f) for f in t.fields]}
    raise UnsupportedError(f"Iceberg compatibility does not support the data type {t}")


def iceberg_field(f: DataField) -> dict[str, Any]:
    """One schema field as Java writes it: id, name, required, type, doc (null when none)."""
    return {"id": f.id, "name": f.name, "required": not f.type.nullable, "type": iceberg_type(f.type, f.id),
            "doc": f.description}


def iceberg_schema(schema: TableSchema) -> dict[str, Any]:
    """A Paimon schema as an Iceberg schema (same id, Paimon's field ids)."""
    return {"type": "struct", "schema-id": schema.id, "fields": [iceberg_field(f) for f in schema.fields]}


def highest_field_id(schema: TableSchema) -> int:
    """Java's ``IcebergSchema.highestFieldId``: the largest top-level field id (0 for no field)."""
    return max((f.id for f in schema.fields), default=0)


def name_mapping(schemas: Sequence[TableSchema]) -> list[dict[str, Any]]:
    """Iceberg's ``schema.name-mapping.default``: field id -> every name it had, over ``schemas`` (oldest first).

    The engine's Parquet files carry no field ids, so an Iceberg reader maps their columns by these names."""
    def mapping(fields: Sequence[DataField]) -> list[dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        for f in fields:
            entry = out.setdefault(f.id, {"field-id": f.id, "names": []})
            if f.name not in entry["names"]:
                entry["names"].append(f.name)
            if f.type.root == "ROW":
                entry["fields"] = mapping(f.type.fields)
        return list(out.values())

    merged: list[DataField] = []
    for s in schemas:
        merged.extend(s.fields)
    out = mapping(merged)
    if schemas and schemas[-1].primary_keys:
        # a primary-key file's system columns, with the ids Paimon Java gives them in Parquet: a reader that maps
        # names must know every column of the file (pyiceberg refuses an unmapped one), and drops these ids
        keys = {f.id: f.name for s in schemas for f in s.fields if f.name in s.primary_keys}
        out += [{"field-id": KEY_FIELD_ID_START + i, "names": [f"_KEY_{n}"]} for i, n in keys.items()]
        out += [{"field-id": SEQUENCE_NUMBER_ID, "names": ["_SEQUENCE_NUMBER"]},
                {"field-id": VALUE_KIND_ID, "names": ["_VALUE_KIND"]}]
    return out


# ---- partition values in Avro and bounds as Iceberg single values ---------------------------------------------

_AVRO = {"BOOLEAN": "boolean", "INT": "int", "BIGINT": "long", "FLOAT": "float", "DOUBLE": "double",
         "DATE": {"type": "int", "logicalType": "date"}, "CHAR": "string", "VARCHAR": "string", "BINARY": "bytes",
         "VARBINARY": "bytes"}


def partition_avro_type(t: DataType) -> Any:
    """The Avro type of a partition value of type ``t`` (Iceberg's mapping); DECIMAL partitions are refused."""
    if t.root in _AVRO:
        return _AVRO[t.root]
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        _timestamp_precision(t)
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": t.root == "TIMESTAMP_LTZ"}
    raise UnsupportedError(f"Iceberg compatibility does not support partition fields of type {t}")


def _micros(value: datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def avro_value(value: Any, t: DataType) -> Any:
    """A decoded partition value as the plain Avro value (dates as days, timestamps as micros)."""
    if value is None:
        return None
    if t.root == "DATE":
        return (value - _EPOCH_DAY).days
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _micros(value)
    return value


def single_value(value: Any, t: DataType) -> bytes | None:
    """Iceberg's binary single-value serialization (Java's ``IcebergConversions.toByteBuffer``); None for a value
    this package cannot bound (Java would fail on such a type before)."""
    if value is None:
        return None
    root = t.root
    if root == "BOOLEAN":
        return b"\x01" if value else b"\x00"
    if root == "INT":
        return struct.pack("<i", value)
    if root == "DATE":
        return struct.pack("<i", (value - _EPOCH_DAY).days)
    if root == "BIGINT":
        return struct.pack("<q", value)
    if root == "FLOAT":
        return struct.pack("<f", value)
    if root == "DOUBLE":
        return struct.pack("<d", value)
    if root in ("CHAR", "VARCHAR"):
        return str(value).encode("utf-8")
    if root in ("BINARY", "VARBINARY"):
        return bytes(value)
    if root == "DECIMAL":
        unscaled = int(Decimal(value).scaleb(t.scale or 0))
        return unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return struct.pack("<q", _micros(value))
    return None


def partition_single_value(value: Any, t: DataType) -> bytes | None:
    """The single-value bytes of a partition value given as its Avro value (dates as days, timestamps as
    micros), for the manifest list's partition summaries."""
    if value is None:
        return None
    if t.root == "DATE":
        return struct.pack("<i", value)
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return struct.pack("<q", value)
    return single_value(value, t)
