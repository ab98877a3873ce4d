"""Where a data file of a table lives: the path rules that need the table schema and file metadata.

The name-only rules (partition directories, bucket directories, file names) live in :mod:`table_engine.io.paths`;
this module composes them with a :class:`TableSchema` (partition columns and types) and a :class:`DataFileMeta`
(external paths).
"""

from __future__ import annotations

from collections.abc import Sequence

from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.schema_file import TableSchema
from table_engine.io.paths import DEFAULT_PARTITION_NAME, bucket_dir, partition_dir
from table_engine.store.context import StoreContext


def file_path_in(table_path: str, schema: TableSchema, partition_values: Sequence[object], bucket: int,
                 f: DataFileMeta, default_partition_name: str = DEFAULT_PARTITION_NAME) -> str:
    """Where a data file of (partition, bucket) lives."""
    if f.external_path:
        return f.external_path
    part = partition_dir(list(schema.partition_keys), partition_values,
                         [x.type for x in schema.partition_fields()], default_partition_name)
    return f"{bucket_dir(table_path, part, bucket)}/{f.file_name}"


def data_file_path(ctx: StoreContext, partition: bytes, bucket: int, f: DataFileMeta) -> str:
    """Where a data file of a (serialized partition, bucket) of the table in ``ctx`` lives."""
    types = [x.type for x in ctx.schema.partition_fields()]
    return file_path_in(ctx.table_path, ctx.schema, decode_row(partition, types), bucket, f,
                        ctx.options.partition_default_name())
