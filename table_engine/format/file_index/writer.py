"""Building the file index of a data file (Paimon's ``DataFileIndexWriter``) and attaching it to its metadata.

The writer hook is one call, :func:`with_file_index`: it returns the ``DataFileMeta`` unchanged when the table
declares no index, else with the index container embedded (``_EMBEDDED_FILE_INDEX``, when it is at most
``file-index.in-manifest-threshold`` bytes) or written as ``<data-file-name>.index`` in the data file's directory and
listed in ``_EXTRA_FILES``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.file_index.bitmap import BITMAP, build_bitmap
from table_engine.format.file_index.bloom_filter import BLOOM_FILTER, build_bloom_filter
from table_engine.format.file_index.bsi import BSI, build_bsi
from table_engine.format.file_index.format import (
    INDEX_PATH_SUFFIX,
    java_map_order,
    write_file_index,
    write_file_index_bytes,
)
from table_engine.format.file_index.index_options import FileIndexOptions
from table_engine.format.file_index.values import ColumnValues
from table_engine.io.file_io import FileIO
from table_engine.types import DataField, DataType

__all__ = ["FileIndexResult", "build_file_index", "build_index_bytes", "sidecar_paths", "with_file_index"]

log = logging.getLogger(__name__)

IndexedColumn = tuple[str, pa.Array | pa.ChunkedArray, DataType, Mapping[str, Mapping[str, str]]]


@dataclass(frozen=True)
class FileIndexResult:
    """Where a data file's index went: embedded bytes, or the name of the sidecar file (one of them, or neither)."""

    embedded: bytes | None = None
    extra_file: str | None = None

    def apply(self, meta: DataFileMeta) -> DataFileMeta:
        if self.embedded is None and self.extra_file is None:
            return meta
        extra = [e for e in meta.extra_files if not e.endswith(INDEX_PATH_SUFFIX)]
        if self.extra_file is not None:
            extra.append(self.extra_file)
        return dataclasses.replace(meta, embedded_file_index=self.embedded, extra_files=extra)


def build_index_bytes(columns: Sequence[IndexedColumn]) -> bytes | None:
    """The index container over ``(name, values, type, {index type: options})`` columns (None: nothing indexed)."""
    indexes: dict[str, dict[str, bytes | None]] = {}
    for name, col, t, types in columns:
        values = ColumnValues.from_arrow(col, t)
        for index_type, props in types.items():
            data: bytes | None
            if index_type == BLOOM_FILTER:
                data = build_bloom_filter(values, props)
            elif index_type == BITMAP:
                data = build_bitmap(values, props)
            elif index_type == BSI:
                data = build_bsi(values)
                if data is None:
                    log.warning("column %r holds Long.MIN_VALUE, which a bsi index cannot store: not indexed", name)
                    continue
            else:
                continue
            indexes.setdefault(name, {})[index_type] = data
    if not indexes:
        return None
    return write_file_index_bytes(java_map_order(indexes))


def build_file_index(file_io: FileIO, data_file_path: str, table: pa.Table, fields: Sequence[DataField],
                     options: FileIndexOptions | Mapping[str, str], index_path: str | None = None,
                     track: Callable[[str], None] | None = None) -> FileIndexResult:
    """Build the declared indexes over ``table`` (columns by name; ``fields`` give their types) and store them:
    embedded when small enough, else written to ``index_path`` (default ``<data_file_path>.index``; ``track`` is
    called with that path before it is written)."""
    opts = options if isinstance(options, FileIndexOptions) else FileIndexOptions.from_options(options)
    declared = opts.built_columns()
    if not declared:
        return FileIndexResult()
    by_name = {f.name: f for f in fields}
    names = set(table.column_names)
    columns: list[IndexedColumn] = [(c, table.column(c), by_name[c].type, types) for c, types in declared.items()
                                    if c in by_name and c in names]
    data = build_index_bytes(columns)
    if data is None:
        return FileIndexResult()
    if len(data) > opts.in_manifest_threshold:
        path = index_path or data_file_path + INDEX_PATH_SUFFIX
        if track is not None:
            track(path)
        write_file_index(file_io, path, data)
        return FileIndexResult(extra_file=path.rsplit("/", 1)[-1])
    return FileIndexResult(embedded=data)


def with_file_index(meta: DataFileMeta, file_io: FileIO, data_file_path: str, table: pa.Table,
                    fields: Sequence[DataField], options: FileIndexOptions | Mapping[str, str],
                    track: Callable[[str], None] | None = None) -> DataFileMeta:
    """``meta`` with the file index of ``table`` (the rows of the data file at ``data_file_path``) attached.

    The writer hook: unchanged ``meta`` when the table declares no index; a sidecar ``<data file>.index`` is
    written next to the data file when the index is larger than ``file-index.in-manifest-threshold``.
    """
    opts = options if isinstance(options, FileIndexOptions) else FileIndexOptions.from_options(options)
    if opts.is_empty:
        return meta
    return build_file_index(file_io, data_file_path, table, fields, opts, track=track).apply(meta)


def sidecar_paths(data_file_path: str, meta: DataFileMeta) -> list[str]:
    """Paths of the index files of a data file (its ``*.index`` extra files, in the data file's directory)."""
    parent = data_file_path.rsplit("/", 1)[0]
    return [f"{parent}/{e}" for e in meta.extra_files if e.endswith(INDEX_PATH_SUFFIX)]
