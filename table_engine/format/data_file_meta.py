"""``DataFileMeta`` and ``SimpleStats``: the ``_FILE`` record of a manifest entry.

Binary-row fields (``min_key``, ``max_key``, stats min/max values) are kept as the raw serialized bytes
(4-byte big-endian arity + BinaryRow); decoding them is the job of the binary-row codec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

from table_engine.format.avro import datetime_to_millis

__all__ = [
    "DATA_FILE_META_SCHEMA",
    "EMPTY_ROW",
    "DataFileMeta",
    "FileSource",
    "SimpleStats",
    "simple_stats_schema",
]

EMPTY_ROW = b"\x00" * 12
"""A serialized BinaryRow of arity 0 (4-byte arity + 8-byte header), e.g. the partition of an unpartitioned table."""


class FileSource(IntEnum):
    """Why a data file was written (``_FILE_SOURCE``)."""

    APPEND = 0
    COMPACT = 1


def simple_stats_schema(record_name: str) -> dict[str, Any]:
    """Avro schema of a SimpleStats record (pypaimon names them ``record_KEY_STATS`` etc.)."""
    return {
        "type": "record",
        "name": record_name,
        "fields": [
            {"name": "_MIN_VALUES", "type": "bytes"},
            {"name": "_MAX_VALUES", "type": "bytes"},
            {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}], "default": None},
        ],
    }


@dataclass(frozen=True, slots=True)
class SimpleStats:
    """Min/max BinaryRows over some columns plus one null count per column."""

    min_values: bytes
    max_values: bytes
    null_counts: list[int | None] | None

    EMPTY: ClassVar[SimpleStats]

    def to_avro(self) -> dict[str, Any]:
        return {"_MIN_VALUES": self.min_values, "_MAX_VALUES": self.max_values, "_NULL_COUNTS": self.null_counts}

    @staticmethod
    def from_avro(record: dict[str, Any]) -> SimpleStats:
        mn = record["_MIN_VALUES"]
        mx = record["_MAX_VALUES"]
        nc = record.get("_NULL_COUNTS")
        if nc == [] and mn == EMPTY_ROW and mx == EMPTY_ROW:
            return SimpleStats.EMPTY  # the common case: share one instance
        return SimpleStats(mn, mx, nc)


SimpleStats.EMPTY = SimpleStats(EMPTY_ROW, EMPTY_ROW, [])


def _opt(avro_type: Any) -> list[Any]:
    return ["null", avro_type]


DATA_FILE_META_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "DataFileMeta",
    "fields": [
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"},
        {"name": "_KEY_STATS", "type": simple_stats_schema("record_KEY_STATS")},
        {"name": "_VALUE_STATS", "type": simple_stats_schema("record_VALUE_STATS")},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
        {"name": "_CREATION_TIME", "type": _opt({"type": "long", "logicalType": "timestamp-millis"}), "default": None},
        {"name": "_DELETE_ROW_COUNT", "type": _opt("long"), "default": None},
        {"name": "_EMBEDDED_FILE_INDEX", "type": _opt("bytes"), "default": None},
        {"name": "_FILE_SOURCE", "type": _opt("int"), "default": None},
        {"name": "_VALUE_STATS_COLS", "type": _opt({"type": "array", "items": "string"}), "default": None},
        {"name": "_EXTERNAL_PATH", "type": _opt("string"), "default": None},
        {"name": "_FIRST_ROW_ID", "type": _opt("long"), "default": None},
        {"name": "_WRITE_COLS", "type": _opt({"type": "array", "items": "string"}), "default": None},
        {"name": "_WRITE_COLS_SEQUENCES", "type": _opt({"type": "array", "items": "long"}), "default": None},
    ],
}


@dataclass(frozen=True, slots=True)
class DataFileMeta:
    """Metadata of one data (or changelog) file, as stored in a manifest entry.

    ``value_stats_cols``: ``None`` = stats over all columns, ``[]`` = no column has stats.
    ``file_source``: a :class:`FileSource` value or ``None`` (old writers).
    """

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: list[str] = field(default_factory=list)
    creation_time_millis: int | None = None
    delete_row_count: int | None = None
    embedded_file_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: list[str] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: list[str] | None = None
    write_cols_sequences: list[int] | None = None

    def to_avro(self) -> dict[str, Any]:
        """The ``DataFileMeta`` Avro record."""
        return {
            "_FILE_NAME": self.file_name,
            "_FILE_SIZE": self.file_size,
            "_ROW_COUNT": self.row_count,
            "_MIN_KEY": self.min_key,
            "_MAX_KEY": self.max_key,
            "_KEY_STATS": self.key_stats.to_avro(),
            "_VALUE_STATS": self.value_stats.to_avro(),
            "_MIN_SEQUENCE_NUMBER": self.min_sequence_number,
            "_MAX_SEQUENCE_NUMBER": self.max_sequence_number,
            "_SCHEMA_ID": self.schema_id,
            "_LEVEL": self.level,
            "_EXTRA_FILES": self.extra_files,
            "_CREATION_TIME": self.creation_time_millis,
            "_DELETE_ROW_COUNT": self.delete_row_count,
            "_EMBEDDED_FILE_INDEX": self.embedded_file_index,
            "_FILE_SOURCE": None if self.file_source is None else int(self.file_source),
            "_VALUE_STATS_COLS": self.value_stats_cols,
            "_EXTERNAL_PATH": self.external_path,
            "_FIRST_ROW_ID": self.first_row_id,
            "_WRITE_COLS": self.write_cols,
            "_WRITE_COLS_SEQUENCES": self.write_cols_sequences,
        }

    @staticmethod
    def from_avro(r: dict[str, Any]) -> DataFileMeta:
        """Build from a decoded ``DataFileMeta`` record; fields missing in older files read as ``None``."""
        g = r.get
        return DataFileMeta(
            r["_FILE_NAME"],
            r["_FILE_SIZE"],
            r["_ROW_COUNT"],
            r["_MIN_KEY"],
            r["_MAX_KEY"],
            SimpleStats.from_avro(r["_KEY_STATS"]),
            SimpleStats.from_avro(r["_VALUE_STATS"]),
            r["_MIN_SEQUENCE_NUMBER"],
            r["_MAX_SEQUENCE_NUMBER"],
            r["_SCHEMA_ID"],
            r["_LEVEL"],
            g("_EXTRA_FILES") or [],
            datetime_to_millis(g("_CREATION_TIME")),
            g("_DELETE_ROW_COUNT"),
            g("_EMBEDDED_FILE_INDEX"),
            g("_FILE_SOURCE"),
            g("_VALUE_STATS_COLS"),
            g("_EXTERNAL_PATH"),
            g("_FIRST_ROW_ID"),
            g("_WRITE_COLS"),
            g("_WRITE_COLS_SEQUENCES"),
        )
