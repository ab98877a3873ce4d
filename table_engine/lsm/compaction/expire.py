"""Record-level expiry (``record-level.expire-time`` + ``record-level.time-field``), applied only by compaction.

A record expires when ``now > time + expire-time`` (seconds); records whose time is null never expire. As in Paimon,
expired records are dropped from each input file before merging, and a file whose value statistics show a minimum
time older than ``now - expire-time`` is "expire file": compaction rewrites it rather than only moving it up.

The time field may be INT (epoch seconds), BIGINT (epoch seconds, or milliseconds: Paimon treats values from
10^12 on as milliseconds) or TIMESTAMP / TIMESTAMP_LTZ. ``record-level.time-field-type`` (dropped from newer Paimon,
which infers the unit) is honoured when set: ``seconds-int``, ``seconds-long``, ``millis-long`` or ``timestamp``,
and must match the column type.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc

from table_engine import clock
from table_engine.errors import OptionError
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.schema_file import TableSchema
from table_engine.types import DataField

_MILLIS_FROM = 1_000_000_000_000
_UNITS = {"seconds-int": "INT", "seconds-long": "BIGINT", "millis-long": "BIGINT", "timestamp": "TIMESTAMP"}


class RecordLevelExpire:
    """Drops expired records (vectorized) and tells which files hold some."""

    def __init__(self, field: DataField, expire_seconds: int, unit: str | None,
                 schema_loader: Callable[[int], TableSchema], schema: TableSchema) -> None:
        root = field.type.root
        if root not in ("INT", "BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ"):
            raise OptionError(f"record-level.time-field {field.name!r} is {field.type}; it must be INT, BIGINT or "
                              "TIMESTAMP")
        if unit is not None and _UNITS[unit] != root.replace("_LTZ", ""):
            raise OptionError(f"record-level.time-field-type {unit!r} does not match the type {field.type} of "
                              f"record-level.time-field {field.name!r}")
        self.field = field
        self.expire_seconds = expire_seconds
        self.unit = unit
        self.schema = schema
        self.schema_loader = schema_loader

    @staticmethod
    def create(expire_ms: int | None, time_field: str | None, unit: str | None, schema: TableSchema,
               schema_loader: Callable[[int], TableSchema]) -> RecordLevelExpire | None:
        """From the options' values (``unit`` only when ``record-level.time-field-type`` is set); None if off."""
        if expire_ms is None:
            return None
        if time_field is None:
            raise OptionError("record-level.expire-time needs record-level.time-field")
        if time_field not in schema.field_names():
            raise OptionError(f"record-level.time-field {time_field!r} is not a column of the table")
        return RecordLevelExpire(schema.field(time_field), expire_ms // 1000, unit, schema_loader, schema)

    # ---- records -----------------------------------------------------------------------------------------------
    def seconds(self, col: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
        """The time column in epoch seconds (int64)."""
        root = self.field.type.root
        if root == "INT":
            return col.cast(pa.int64())
        if root == "BIGINT":
            col = col.cast(pa.int64())
            if self.unit == "seconds-long":
                return col
            if self.unit == "millis-long":
                return pc.divide(col, 1000)
            return pc.if_else(pc.greater_equal(col, _MILLIS_FROM), pc.divide(col, 1000), col)
        per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[col.type.unit]
        return pc.divide(col.cast(pa.int64()), per_second)

    def filter(self, kv: pa.Table, now_s: int | None = None) -> pa.Table:
        """Rows of ``kv`` that have not expired (null times are kept)."""
        now = clock.now_millis() // 1000 if now_s is None else now_s
        if kv.num_rows == 0 or self.field.name not in kv.column_names:
            return kv
        secs = self.seconds(kv.column(self.field.name))
        keep = pc.fill_null(pc.less_equal(pa.scalar(now - self.expire_seconds, pa.int64()), secs), True)
        return kv if pc.all(keep).as_py() else kv.filter(keep)

    # ---- files -------------------------------------------------------------------------------------------------
    def min_seconds(self, f: DataFileMeta) -> int | None:
        """The minimum time of a file from its value statistics (None when not collected)."""
        file_schema = self.schema if f.schema_id == self.schema.id else self.schema_loader(f.schema_id)
        own = file_schema.fields_by_id().get(self.field.id)
        if own is None or own.type.root != self.field.type.root:
            return None
        cols = list(file_schema.fields) if f.value_stats_cols is None else [
            x for name in f.value_stats_cols for x in file_schema.fields if x.name == name]
        positions = [i for i, c in enumerate(cols) if c.id == self.field.id]
        if not positions or not f.value_stats.null_counts:
            return None
        try:
            value = decode_row(f.value_stats.min_values, [c.type for c in cols])[positions[0]]
        except Exception:  # stats we cannot decode prove nothing
            return None
        if value is None:
            return None
        if isinstance(value, datetime):
            aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
            return int(aware.timestamp() * 1000) // 1000
        v = int(value)
        if self.field.type.root == "BIGINT" and (self.unit == "millis-long" or
                                                  (self.unit is None and v >= _MILLIS_FROM)):
            return v // 1000
        return v

    def is_expire_file(self, f: DataFileMeta, now_s: int | None = None) -> bool:
        """Whether ``f`` holds records that have expired, judged by its statistics."""
        now = clock.now_millis() // 1000 if now_s is None else now_s
        low = self.min_seconds(f)
        return low is not None and now - self.expire_seconds > low
