"""Where a table's files live: :class:`PathFactory`, the path rules that need the table's schema and options.

The name-only rules (partition, bucket, manifest, index, statistics, snapshot and tag paths; file names) live in
:mod:`table_engine.io.paths`, each written once; a :class:`PathFactory` composes them with a table's partition
columns, its ``partition.default-name`` and files' external paths (Paimon's ``FileStorePathFactory``). Every reader,
writer and maintenance job of a table takes its factory from the store handle
(:attr:`StoreContext.path_factory <table_engine.store.context.StoreContext.path_factory>`).
"""

from __future__ import annotations

from collections.abc import Sequence

from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.index_manifest import IndexFileMeta
from table_engine.format.schema_file import TableSchema
from table_engine.io.paths import (
    DEFAULT_PARTITION_NAME,
    bucket_dir,
    index_file_path,
    manifest_path,
    partition_dir,
    statistics_dir,
)


class PathFactory:
    """Every path of one table's files (of whichever branch ``table_path`` is the root of: branches share data
    files, manifests, indexes and statistics). Bucket directories are computed once per (partition, bucket)."""

    def __init__(self, table_path: str, schema: TableSchema, default_partition_name: str = DEFAULT_PARTITION_NAME
                 ) -> None:
        self.table_path = table_path
        self.partition_keys = list(schema.partition_keys)
        self.partition_types = [f.type for f in schema.partition_fields()]
        self.default_partition_name = default_partition_name
        self._bucket_dirs: dict[tuple[bytes, int], str] = {}

    def manifest(self, name: str) -> str:
        """A manifest, manifest list or index manifest: ``<table>/manifest/<name>``."""
        return manifest_path(self.table_path, name)

    def statistics(self, name: str) -> str:
        """A statistics file: ``<table>/statistics/<name>``."""
        return f"{statistics_dir(self.table_path)}/{name}"

    def index_file(self, meta: IndexFileMeta) -> str:
        """A HASH, deletion-vector or global index file: its external path, else ``<table>/index/<name>``."""
        return index_file_path(self.table_path, meta)

    def bucket_dir_of(self, partition_values: Sequence[object], bucket: int) -> str:
        """The directory of a bucket of a partition given by its values."""
        part = partition_dir(self.partition_keys, partition_values, self.partition_types, self.default_partition_name)
        return bucket_dir(self.table_path, part, bucket)

    def bucket_dir(self, partition: bytes, bucket: int) -> str:
        """The directory of a bucket of a serialized partition (cached)."""
        key = (partition, bucket)
        hit = self._bucket_dirs.get(key)
        if hit is None:
            values = decode_row(partition, self.partition_types) if self.partition_types else []
            hit = self._bucket_dirs[key] = self.bucket_dir_of(values, bucket)
        return hit

    def data_file(self, partition: bytes, bucket: int, f: DataFileMeta) -> str:
        """A data or changelog file of a (serialized partition, bucket): its external path, else in the bucket."""
        return f.external_path or f"{self.bucket_dir(partition, bucket)}/{f.file_name}"

    def data_file_of(self, partition_values: Sequence[object], bucket: int, f: DataFileMeta) -> str:
        """A data or changelog file of a (partition given by its values, bucket)."""
        return f.external_path or f"{self.bucket_dir_of(partition_values, bucket)}/{f.file_name}"

    def data_file_with_extras(self, partition: bytes, bucket: int, f: DataFileMeta) -> list[str]:
        """A data (or changelog) file and its extra files, which live next to it."""
        main = self.data_file(partition, bucket, f)
        if not f.extra_files:
            return [main]
        parent = main.rsplit("/", 1)[0]
        return [main, *(f"{parent}/{x}" for x in f.extra_files)]


def file_path_in(table_path: str, schema: TableSchema, partition_values: Sequence[object], bucket: int,
                 f: DataFileMeta, default_partition_name: str = DEFAULT_PARTITION_NAME) -> str:
    """Where a data file of (partition, bucket) lives (a one-off :class:`PathFactory`)."""
    return PathFactory(table_path, schema, default_partition_name).data_file_of(partition_values, bucket, f)
