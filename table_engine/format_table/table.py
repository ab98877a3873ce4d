"""A format table: a directory of csv, parquet, orc or json files in Hive-style partition directories, read and
written as a table the way Paimon's ``FormatTable`` does (no snapshots, no manifests: the files are the table).

Writing is Paimon's two-phase commit (``FormatTableFileWriter`` + ``FormatTableCommit``): every new file is first
staged (``<partition>/_temporary/.tmp.<uuid>``, hidden from readers), then the commit deletes what an overwrite
replaces and renames each staged file to its name ``data-<uuid>-<n>.<format>``. On an object store, which cannot
rename, a staged file is held in memory and put under its name at the commit (Paimon's S3 two-phase stream defers
a multipart upload's completion the same way). A commit that fails discards what it staged. Input is checked whole
before anything is staged: a refused write leaves the directory as it was.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import PartitionSpecError, SchemaError, SchemaMismatchError
from table_engine.format_table import codecs, text
from table_engine.format_table.layout import (
    STAGING_DIR,
    PartitionCodec,
    check_partition_type,
    data_file_name,
    is_hidden,
)
from table_engine.format_table.options import (
    DATA_FILE_PREFIX,
    DYNAMIC_PARTITION_OVERWRITE,
    PARTITION_DEFAULT_NAME,
    PARTITION_LEGACY_NAME,
    PARTITION_PATH_ONLY_VALUE,
    TARGET_FILE_ROW_NUM,
    TARGET_FILE_SIZE,
    FileFormat,
    FormatTableOptions,
)
from table_engine.io.base import FileIO
from table_engine.predicate import Predicate, check_value_types, conjunction, parse_filters, validate_columns


@dataclass(frozen=True)
class DataFile:
    """One data file of the table and the partition values of its directory (typed, by key)."""

    path: str
    partition: Mapping[str, Any]


@dataclass
class _Staged:
    target: str
    temp: str | None  # None: the bytes wait in memory (object store)
    data: bytes | None
    rows: int


@dataclass
class CommitResult:
    """What a write did: the files it added and the data files an overwrite deleted."""

    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


class FormatTable:
    """The format table at ``location``: ``arrow_schema`` is every column (partition keys included),
    ``partition_keys`` the leading-to-trailing partition columns, ``options`` Paimon's table options
    (:mod:`table_engine.format_table.options`)."""

    def __init__(self, file_io: FileIO, location: str, arrow_schema: pa.Schema,
                 partition_keys: Sequence[str] = (), options: Mapping[str, str] | None = None) -> None:
        self.file_io = file_io
        self.location = location.rstrip("/")
        self.schema = arrow_schema
        self.partition_keys = tuple(partition_keys)
        self.options = FormatTableOptions(options)
        self.file_format = self.options.file_format()
        if len(set(arrow_schema.names)) != len(arrow_schema.names):
            raise SchemaError(f"Duplicate column names in {arrow_schema.names}")
        for k in self.partition_keys:
            if k not in arrow_schema.names:
                raise SchemaError(f"Partition key {k!r} is not a column of {arrow_schema.names}")
            check_partition_type(k, arrow_schema.field(k).type)
        if len(set(self.partition_keys)) != len(self.partition_keys):
            raise SchemaError(f"Duplicate partition keys {list(self.partition_keys)}")
        self.file_schema = pa.schema([f for f in arrow_schema if f.name not in self.partition_keys])
        if self.file_format in (FileFormat.CSV, FileFormat.JSON):
            for f in self.file_schema:
                text.check_text_type(f.name, f.type, self.file_format.value)
        self.codec = PartitionCodec(
            keys=self.partition_keys, types=tuple(arrow_schema.field(k).type for k in self.partition_keys),
            default_name=self.options.get(PARTITION_DEFAULT_NAME),
            only_value=self.options.get(PARTITION_PATH_ONLY_VALUE),
            legacy_name=self.options.get(PARTITION_LEGACY_NAME))

    def __repr__(self) -> str:
        return (f"FormatTable({self.location!r}, format={self.file_format.value}, "
                f"partition_keys={list(self.partition_keys)})")

    # -- scan ----------------------------------------------------------------------------------------------------------

    def data_files(self, filter: Any = None) -> list[DataFile]:  # noqa: A002 - the engine's read() keyword
        """The table's data files, listing only the partition directories ``filter`` may match (no file is
        opened)."""
        preds = self._predicates(filter)
        by_key = {k: [p for p in preds if p.column == k] for k in self.partition_keys}
        out: list[DataFile] = []
        self._collect(self.location, 0, {}, by_key, out)
        return out

    def _collect(self, directory: str, level: int, spec: dict[str, Any], by_key: Mapping[str, list[Predicate]],
                 out: list[DataFile]) -> None:
        if level == len(self.partition_keys):
            out.extend(DataFile(p, dict(spec)) for p in self._files_below(directory))
            return
        key = self.partition_keys[level]
        for st in sorted(self.file_io.list_status(directory), key=lambda s: s.path):
            name = st.path.rstrip("/").rsplit("/", 1)[-1]
            if not st.is_dir:
                continue
            raw = self.codec.parse_component(level, name)
            if raw is None:
                continue
            value = self.codec.typed_value(level, raw)
            if not all(p.test_value(value) for p in by_key[key]):
                continue
            spec[key] = value
            self._collect(st.path, level + 1, spec, by_key, out)
            del spec[key]

    def _files_below(self, directory: str) -> list[str]:
        files: list[str] = []
        pending = [directory]
        while pending:
            current = pending.pop()
            for st in self.file_io.list_status(current):
                name = st.path.rstrip("/").rsplit("/", 1)[-1]
                if is_hidden(name):
                    continue  # _temporary/, _SUCCESS, .crc files: not data
                if st.is_dir:
                    pending.append(st.path)
                else:
                    files.append(st.path)
        return sorted(files)

    def _predicates(self, filter: Any) -> list[Predicate]:  # noqa: A002
        preds = parse_filters(filter)
        validate_columns(preds, self.schema.names)
        check_value_types(preds, self.schema)
        return preds

    # -- read ----------------------------------------------------------------------------------------------------------

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None) -> Iterator[pa.RecordBatch]:  # noqa: A002
        """The rows of ``columns`` (default: all) that satisfy ``filter`` (the engine's predicate language), one
        file at a time."""
        names = list(self.schema.names) if columns is None else list(columns)
        unknown = [c for c in names if c not in self.schema.names]
        if unknown:
            raise SchemaError(f"Unknown columns {unknown}; the table's columns are {self.schema.names}")
        preds = self._predicates(filter)
        out_schema = pa.schema([self.schema.field(c) for c in names])
        needed = set(names) | {p.column for p in preds}
        read = [n for n in self.file_schema.names if n in needed]
        if not read and self.file_schema.names:
            read = [self.file_schema.names[0]]  # a file's row count
        expression = conjunction(preds)
        for data_file in self.data_files(preds):
            rows = codecs.decode(self.file_io.read_bytes(data_file.path), data_file.path, self.file_schema, read,
                                 self.options)
            for k in self.partition_keys:
                if k in needed:
                    rows = rows.append_column(self.schema.field(k),
                                              pa.array([data_file.partition[k]] * rows.num_rows,
                                                       self.schema.field(k).type))
            if expression is not None:
                rows = rows.filter(expression)
            yield from rows.select(names).cast(out_schema).to_batches()

    def read(self, columns: Sequence[str] | None = None, filter: Any = None) -> pa.Table:  # noqa: A002
        """The rows of ``columns`` that satisfy ``filter``, as one table."""
        names = list(self.schema.names) if columns is None else list(columns)
        batches = list(self.to_batches(columns, filter))
        schema = pa.schema([self.schema.field(c) for c in names])
        return pa.Table.from_batches(batches, schema=schema)

    # -- write ---------------------------------------------------------------------------------------------------------

    def write(self, data: pa.Table) -> CommitResult:
        """Append ``data``: new files in the partitions its rows name, committed together."""
        return self._commit(self._stage(self._validated(data)), overwrite=False, static=None)

    def overwrite(self, data: pa.Table, partitions: Mapping[str, Any] | None = None) -> CommitResult:
        """Replace table content with ``data``: the partitions of ``partitions`` (a static spec of leading
        partition keys: every row must be in it, and everything below it is replaced), else the partitions
        ``data`` writes (``dynamic-partition-overwrite``, the default) or the whole table."""
        table = self._validated(data)
        static = None
        if partitions:
            if not self.partition_keys:
                raise PartitionSpecError("The table is not partitioned: an overwrite cannot name a partition")
            static = {k: self.codec.render_value(k, v) for k, v in partitions.items()}
            self.codec.relative_path(static)  # leading keys, values that can name directories
            for k, v in partitions.items():
                column = table.column(k)
                outside = pc.invert(pc.fill_null(pc.equal(column, pa.scalar(v, column.type)), False)) \
                    if v is not None else pc.is_valid(column)
                if pc.any(outside).as_py():
                    raise PartitionSpecError(f"Rows outside the static partition {dict(partitions)}: {k!r} differs")
        return self._commit(self._stage(table), overwrite=True, static=static)

    def _validated(self, data: pa.Table) -> pa.Table:
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        unknown = [c for c in data.column_names if c not in self.schema.names]
        missing = [c for c in self.schema.names if c not in data.column_names]
        if unknown or missing:
            raise SchemaMismatchError(f"Columns {data.column_names} do not match the table's {self.schema.names}"
                                      + (f": unknown {unknown}" if unknown else "")
                                      + (f": missing {missing}" if missing else ""))
        columns = []
        for f in self.schema:
            column = data.column(f.name)
            if column.type != f.type:
                if not pa.types.is_null(column.type):
                    raise SchemaMismatchError(f"Column {f.name!r} has type {column.type}; the table's is {f.type}")
                column = pa.nulls(len(column), f.type)
            if not f.nullable and column.null_count:
                raise SchemaMismatchError(f"Column {f.name!r} is NOT NULL but holds {column.null_count} nulls")
            columns.append(column)
        table = pa.Table.from_arrays(columns, schema=self.schema)
        if self.partition_keys:
            self._group(table)  # refuses values that cannot name a directory
        return table

    def _group(self, table: pa.Table) -> list[tuple[str, pa.Table]]:
        """The rows of ``table`` by partition directory (relative path), with Arrow: one pass to render the
        directory of every row, a sort by it, and one slice per partition."""
        if not self.partition_keys:
            return [("", table.select(self.file_schema.names))]
        rendered = [self.codec.render_column(table.column(k)) for k in self.partition_keys]
        encoded = [pc.dictionary_encode(r).combine_chunks() if isinstance(r, pa.ChunkedArray)
                   else pc.dictionary_encode(r) for r in rendered]
        parts = []
        for k, enc in zip(self.partition_keys, encoded, strict=True):
            names = [self.codec.component(k, v) for v in enc.dictionary.to_pylist()]
            parts.append(pc.take(pa.array(names, pa.string()), enc.indices))
        paths = pc.binary_join_element_wise(*parts, "/") if len(parts) > 1 else parts[0]
        codes = pc.dictionary_encode(paths)
        order = pc.sort_indices(codes.indices)
        sorted_codes = codes.indices.take(order).to_numpy(zero_copy_only=False)
        ordered = table.select(self.file_schema.names).take(order)
        starts = np.flatnonzero(np.diff(sorted_codes)) + 1
        bounds = [0, *starts.tolist(), len(sorted_codes)]
        dictionary = codes.dictionary.to_pylist()
        return [(dictionary[sorted_codes[a]], ordered.slice(a, b - a)) for a, b in zip(bounds, bounds[1:])
                if b > a]

    def _rows_per_file(self, table: pa.Table) -> int:
        limit = self.options.get(TARGET_FILE_ROW_NUM)
        if table.num_rows and table.nbytes:
            by_size = max(1, self.options.get(TARGET_FILE_SIZE) * table.num_rows // table.nbytes)
            limit = min(limit, by_size)
        return max(1, limit)

    def _stage(self, table: pa.Table) -> list[_Staged]:
        staged: list[_Staged] = []
        prefix = self.options.get(DATA_FILE_PREFIX)
        extension = self.options.text_compression_extension() \
            if self.file_format in (FileFormat.CSV, FileFormat.JSON) else ""
        try:
            for relative, rows in self._group(table):
                if rows.num_rows == 0:
                    continue
                directory = f"{self.location}/{relative}" if relative else self.location
                writer_uuid = str(uuid.uuid4())
                step = self._rows_per_file(rows)
                for count, offset in enumerate(range(0, rows.num_rows, step)):
                    chunk = rows.slice(offset, step)
                    data = codecs.encode(chunk, self.options)
                    name = data_file_name(prefix, writer_uuid, count, self.file_format.value, extension)
                    target = f"{directory}/{name}"
                    if self.file_io.has_directories:
                        temp = f"{directory}/{STAGING_DIR}/.tmp.{uuid.uuid4()}"
                        self.file_io.write_bytes(temp, data)
                        staged.append(_Staged(target, temp, None, chunk.num_rows))
                    else:
                        staged.append(_Staged(target, None, data, chunk.num_rows))
        except BaseException:
            self._discard(staged)
            raise
        return staged

    def _discard(self, staged: Sequence[_Staged]) -> None:
        for s in staged:
            if s.temp is not None:
                self.file_io.try_delete(s.temp)

    def _delete_data_files(self, directory: str, levels: int, result: CommitResult) -> None:
        """Delete the data files below ``directory``, whose first ``levels`` levels are partition directories
        (``FormatTableCommit.deletePreviousDataFile``)."""
        if levels == 0:
            for path in self._files_below(directory):
                if self.file_io.delete(path):
                    result.deleted.append(path)
            return
        for st in self.file_io.list_status(directory):
            name = st.path.rstrip("/").rsplit("/", 1)[-1]
            if st.is_dir and (not is_hidden(name) or (self.codec.only_value and name == self.codec.default_name)):
                self._delete_data_files(st.path, levels - 1, result)

    def _commit(self, staged: list[_Staged], overwrite: bool, static: Mapping[str, str] | None) -> CommitResult:
        result = CommitResult()
        dynamic: bool = self.options.get(DYNAMIC_PARTITION_OVERWRITE)
        try:
            if overwrite:
                if static:
                    prefix = f"{self.location}/{self.codec.relative_path(static)}"
                    self._delete_data_files(prefix, len(self.partition_keys) - len(static), result)
                elif self.partition_keys and dynamic:
                    for directory in sorted({s.target.rsplit("/", 1)[0] for s in staged}):
                        self._delete_data_files(directory, 0, result)
                else:
                    self._delete_data_files(self.location, len(self.partition_keys), result)
            for s in staged:
                if s.temp is not None:
                    self.file_io.rename(s.temp, s.target)
                else:
                    assert s.data is not None
                    self.file_io.write_bytes(s.target, s.data)
                result.added.append(s.target)
        except BaseException:
            self._discard(staged)
            for path in result.added:
                self.file_io.try_delete(path)
            raise
        return result
