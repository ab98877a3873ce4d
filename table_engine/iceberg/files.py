"""Paimon's data files as Iceberg data files: which files Iceberg sees, their paths, partitions and stats.

Which: every file of an append table; of a primary-key table only the files of the highest level
(``num-levels - 1``, i.e. what a full compaction writes), as Java's ``PrimaryKeyIcebergCommitCallback`` adds: Iceberg
readers do not merge, so they see a primary-key table as of its last full compaction.
Stats: Java's ``IcebergDataFileMeta.create``: per top-level field of the file's own schema that has value stats,
its null count and (when both are known) its lower and upper bound as Iceberg single values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from table_engine.errors import DataError
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.manifest import ManifestEntry
from table_engine.format.schema_file import TableSchema, read_schema
from table_engine.iceberg.manifest import IcebergDataFile
from table_engine.iceberg.types import avro_value, iceberg_schema, single_value
from table_engine.io.file_io import FileIO
from table_engine.store.paths import PathFactory


@dataclass
class SchemaCache:
    """The table's schemas by id, read once each (Java's ``SchemaCache``)."""

    file_io: FileIO
    table_path: str
    schemas: dict[int, TableSchema] = field(default_factory=dict)

    def get(self, schema_id: int) -> TableSchema:
        hit = self.schemas.get(schema_id)
        if hit is None:
            hit = self.schemas[schema_id] = read_schema(self.file_io, self.table_path, schema_id)
            iceberg_schema(hit)  # refuses a type Iceberg compatibility does not map
        return hit


@dataclass
class FileConverter:
    """Converts one table's manifest entries (``schema``: the table's, for partitions and levels)."""

    file_io: FileIO
    table_path: str
    schema: TableSchema
    max_level: int
    schemas: SchemaCache = field(init=False)
    paths: PathFactory = field(init=False)

    def __post_init__(self) -> None:
        self.schemas = SchemaCache(self.file_io, self.table_path)
        self.paths = PathFactory(self.table_path, self.schema)
        self._partition_types = [f.type for f in self.schema.partition_fields()]

    def visible(self, f: DataFileMeta) -> bool:
        """Whether Iceberg sees this file (Java's ``shouldAddFileToIceberg``)."""
        return not self.schema.primary_keys or f.level == self.max_level

    def path(self, e: ManifestEntry) -> str:
        return self.paths.data_file(e.partition, e.bucket, e.file)

    def partition(self, partition: bytes) -> tuple[object, ...]:
        if not self._partition_types:
            return ()
        values = decode_row(partition, self._partition_types)
        return tuple(avro_value(v, t) for v, t in zip(values, self._partition_types, strict=True))

    def data_file(self, e: ManifestEntry) -> IcebergDataFile:
        f = e.file
        file_schema = self.schemas.get(f.schema_id)
        cols = list(file_schema.fields) if f.value_stats_cols is None else [
            file_schema.field(n) for n in f.value_stats_cols if n in file_schema.field_names()]
        nulls: dict[int, int] = {}
        lows: dict[int, bytes] = {}
        highs: dict[int, bytes] = {}
        counts = f.value_stats.null_counts or []
        try:
            mins = decode_row(f.value_stats.min_values, [c.type for c in cols]) if counts else []
            maxs = decode_row(f.value_stats.max_values, [c.type for c in cols]) if counts else []
        except (DataError, ValueError, IndexError):
            mins = maxs = []
        for i, c in enumerate(cols):
            if i < len(counts) and counts[i] is not None:
                nulls[c.id] = int(counts[i] or 0)
            if i < len(mins):
                low, high = single_value(mins[i], c.type), single_value(maxs[i], c.type)
                if low is not None and high is not None:
                    lows[c.id], highs[c.id] = low, high
        return IcebergDataFile(self.path(e), file_format(f.file_name), self.partition(e.partition), f.row_count,
                               f.file_size, nulls, lows, highs)


def file_format(file_name: str) -> str:
    """``parquet``, ``orc`` or ``avro``: the data file's extension (Paimon's ``DataFileMeta.fileFormat``)."""
    return file_name.rsplit(".", 1)[-1].lower()


def visible_entries(converter: FileConverter, entries: Iterable[ManifestEntry]) -> list[ManifestEntry]:
    """The entries whose files Iceberg sees."""
    return [e for e in entries if converter.visible(e.file)]
