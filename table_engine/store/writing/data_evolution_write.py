"""Writes of some columns on a data-evolution table (``data-evolution.enabled``), as pypaimon 2.1 writes them.

* :func:`update_by_row_id`: rows ``_ROW_ID`` + some columns. For every row range (files sharing a ``_FIRST_ROW_ID``,
  :mod:`table_engine.store.reading.data_evolution`) that holds one of the rows, one column file over the whole range:
  the range's ``_FIRST_ROW_ID`` and row count, only the updated columns (``_WRITE_COLS``), their current values with
  the updated rows replaced (one ``take`` per column). Its sequence number is the new snapshot's id (assigned at
  commit), higher than the range's other files', so its columns win at read.
* :func:`insert_columns`: new rows of some columns: a file per partition with ``_WRITE_COLS`` and no
  ``_FIRST_ROW_ID`` (the commit assigns the next row ids); the other columns read as nulls.

Both commit one APPEND snapshot. Bad input (unknown column, ``_ROW_ID`` missing, null or repeated, a row id that is
not a row of the table, a partition column updated, a BLOB column) raises before anything is written.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError, SchemaError
from table_engine.format.binary_row import decode_row, encode_row
from table_engine.format.data_file import StatsMode, make_file_meta
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.formats import write_file
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from table_engine.io.paths import new_data_file_name
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.indexes.global_index import stale_index_entries
from table_engine.store.kv_file_writer import DataFileWriter
from table_engine.store.paths import file_path_in
from table_engine.store.reading.data_evolution import RowIdGroup, row_id_groups
from table_engine.store.reading.read import read_context, read_row_id_group
from table_engine.store.reading.row_tracking import ROW_ID
from table_engine.store.reading.scan import live_entries
from table_engine.types import DataField, to_arrow_field

__all__ = ["RowRanges", "insert_columns", "insert_fields", "insert_messages", "row_ids_of", "row_ranges",
           "update_by_row_id", "update_fields", "update_messages", "upsert_by_key"]

INSERT = "write of some columns"
UPDATE = "update by row id"


def _fields(ctx: StoreContext, names: Sequence[str], what: str) -> list[DataField]:
    known = ctx.schema.field_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SchemaError(f"{what} of table {ctx.table_path}: unknown column(s) {unknown}; columns are {known}")
    if not names:
        raise SchemaError(f"{what} of table {ctx.table_path}: no column to write")
    if len(set(names)) != len(names):
        raise SchemaError(f"{what} of table {ctx.table_path}: repeated columns {list(names)}")
    blobs = [f.name for f in ctx.schema.fields if f.name in names and f.type.root == "BLOB"]
    if blobs:
        raise SchemaError(f"{what} of table {ctx.table_path}: BLOB column(s) {blobs} are written only with whole "
                          f"rows (Table.write), not as column files")
    return [f for f in ctx.schema.fields if f.name in names]  # schema order


def update_fields(ctx: StoreContext, names: Sequence[str], what: str = UPDATE) -> list[DataField]:
    """The fields an update by row id of columns ``names`` sets (checked: known, not repeated, no BLOB, no
    partition column)."""
    fields = _fields(ctx, names, what)
    parts = [f.name for f in fields if f.name in ctx.schema.partition_keys]
    if parts:
        raise SchemaError(f"{what} of table {ctx.table_path}: partition column(s) {parts} cannot change")
    return fields


def insert_fields(ctx: StoreContext, names: Sequence[str], what: str = INSERT) -> list[DataField]:
    """The fields of new rows of columns ``names`` (checked: known, not repeated, no BLOB, the partition columns
    among them)."""
    fields = _fields(ctx, names, what)
    missing = [k for k in ctx.schema.partition_keys if k not in names]
    if missing:
        raise SchemaError(f"{what} of table {ctx.table_path}: the partition column(s) {missing} are missing")
    return fields


def _column_table(data: pa.Table, fields: Sequence[DataField]) -> pa.Table:
    schema = pa.schema([to_arrow_field(f).with_nullable(True) for f in fields])
    return pa.Table.from_arrays([data.column(f.name).cast(schema.field(f.name).type) for f in fields],
                                schema=schema)


def _write_column_file(ctx: StoreContext, writer: DataFileWriter, bucket_path: str, table: pa.Table,
                       fields: Sequence[DataField], first_row_id: int | None) -> DataFileMeta:
    """One file of ``table`` (``fields`` only), never rolled; sequence numbers pending (the commit assigns them)."""
    fmt = writer.write_format(None, False)
    name = new_data_file_name(writer.data_file_prefix, 0, suffix=fmt.extension)
    path = writer._new_path(bucket_path, name)
    if writer.track is not None:
        writer.track(path)
    size = write_file(ctx.file_io, path, table, fmt)
    meta = make_file_meta(file_name=name, file_size=size, table=table, schema_id=ctx.schema.id, level=0,
                          key_fields=[], key_source_names=[], value_fields=list(fields),
                          stats_mode=StatsMode.parse(ctx.options.stats_mode()), min_seq=0, max_seq=0,
                          delete_rows=0, file_source=FileSource.APPEND)
    names = [f.name for f in fields]
    return dataclasses.replace(meta, value_stats_cols=names, write_cols=names, first_row_id=first_row_id,
                               external_path=path if writer.external is not None else None)


@dataclasses.dataclass(frozen=True)
class RowRanges:
    """The row ranges of a snapshot in row-id order: each (partition, bucket, total buckets, group)."""

    located: list[tuple[bytes, int, int, RowIdGroup]]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]

    def find(self, ids: npt.NDArray[np.int64], table_path: str, what: str) -> npt.NDArray[np.int64]:
        """The index of the range of each row id; :class:`DataError` for one that is in no range."""
        where = np.searchsorted(self.starts, ids, side="right") - 1
        bad = (where < 0) | (ids >= self.ends[np.maximum(where, 0)]) if len(self.starts) else np.ones(len(ids), bool)
        if bad.any():
            raise DataError(f"{what} of table {table_path}: row id {int(ids[bad][0])} is not a row of the table")
        return where


def row_ranges(ctx: StoreContext, base: Snapshot | None) -> RowRanges:
    """The row ranges (files grouped by ``_FIRST_ROW_ID``) of every bucket of snapshot ``base``."""
    located: list[tuple[bytes, int, int, RowIdGroup]] = []
    by_bucket: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    totals: dict[tuple[bytes, int], int] = {}
    for e in live_entries(ctx.file_io, ctx.table_path, base):
        by_bucket.setdefault((e.partition, e.bucket), []).append(e.file)
        totals[(e.partition, e.bucket)] = e.total_buckets
    for (part, bucket), files in by_bucket.items():
        located += [(part, bucket, totals[(part, bucket)], g) for g in row_id_groups(files)
                    if g.first_row_id is not None]
    located.sort(key=lambda x: x[3].first_row_id or 0)
    starts = np.array([g.first_row_id for *_, g in located], dtype=np.int64)
    ends = starts + np.array([g.row_count for *_, g in located], dtype=np.int64)
    return RowRanges(located, starts, ends)


def row_ids_of(ctx: StoreContext, ids_col: pa.ChunkedArray | pa.Array, what: str) -> npt.NDArray[np.int64]:
    """Row ids as int64, with :class:`DataError` for nulls and repeats."""
    if ids_col.null_count:
        raise DataError(f"{what} of table {ctx.table_path}: {ROW_ID} is null in {ids_col.null_count} row(s)")
    ids = np.asarray(ids_col.to_numpy(), dtype=np.int64)
    if len(np.unique(ids)) != len(ids):
        raise DataError(f"{what} of table {ctx.table_path}: repeated {ROW_ID} values")
    return ids


def update_by_row_id(ctx: StoreContext, commit: FileStoreCommit, data: pa.Table, base: Snapshot | None,
                     commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> int | None:
    """Set the columns of ``data`` (besides ``_ROW_ID``) of the rows it names, reading the other rows of their ranges
    in snapshot ``base``; the new snapshot id (None when ``data`` is empty)."""
    if ROW_ID not in data.column_names:
        raise SchemaError(f"{UPDATE} of table {ctx.table_path}: the data has no {ROW_ID} column")
    fields = update_fields(ctx, [c for c in data.column_names if c != ROW_ID])
    if data.num_rows == 0:
        return None
    written: list[str] = []
    try:
        messages = update_messages(ctx, data, fields, base, written, UPDATE)
        return commit.commit(messages, commit_identifier)
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise


def update_messages(ctx: StoreContext, data: pa.Table, fields: Sequence[DataField], base: Snapshot | None,
                    written: list[str], what: str) -> list[CommitMessage]:
    """The column files (uncommitted) setting ``fields`` of the rows ``data`` names by ``_ROW_ID``, one per row range
    touched; each path written is appended to ``written`` (for the caller to delete on failure). ``fields``: see
    :func:`update_fields`."""
    ids = row_ids_of(ctx, data.column(ROW_ID), what)
    updates = _column_table(data, fields)
    ranges = row_ranges(ctx, base)
    where = ranges.find(ids, ctx.table_path, what)
    touched = np.unique(where)
    stale = stale_index_entries(ctx, base, fields, {ranges.located[int(gi)][0] for gi in touched}, what)
    read_ctx = read_context(ctx)
    writer = DataFileWriter(ctx, None)
    messages: dict[tuple[bytes, int], CommitMessage] = {}
    totals = {(part, bucket): total for part, bucket, total, _ in ranges.located}
    for ie in stale:  # global indexes over the updated columns (global-index.column-update-action)
        messages.setdefault((ie.partition, ie.bucket), CommitMessage(ie.partition, ie.bucket, totals.get(
            (ie.partition, ie.bucket), -1))).deleted_index_files.append(ie.index_file)
    writer.track = written.append
    for gi in touched:
        part, bucket, total, group = ranges.located[int(gi)]
        assert group.first_row_id is not None
        sel = np.nonzero(where == gi)[0]
        values = decode_row(part, [f.type for f in ctx.schema.partition_fields()])
        current = read_row_id_group(read_ctx, group, fields, functools.partial(
            file_path_in, ctx.table_path, ctx.schema, values, bucket,
            default_partition_name=ctx.options.partition_default_name()))
        n = group.row_count
        take = np.arange(n, dtype=np.int64)
        take[ids[sel] - group.first_row_id] = n + np.arange(len(sel), dtype=np.int64)
        picked = updates.take(pa.array(sel))
        merged = pa.Table.from_arrays(
            [pc.take(pa.concat_arrays([current.column(f.name).combine_chunks(),
                                       picked.column(f.name).combine_chunks()]), pa.array(take))
             for f in fields], schema=updates.schema)
        meta = _write_column_file(ctx, writer, writer.bucket_path(values, bucket), merged, fields,
                                  group.first_row_id)
        messages.setdefault((part, bucket), CommitMessage(part, bucket, total)).new_files.append(meta)
    return list(messages.values())


def insert_columns(ctx: StoreContext, commit: FileStoreCommit, data: pa.Table) -> int | None:
    """New rows holding only the columns of ``data`` (the partition columns among them); the new snapshot id."""
    fields = insert_fields(ctx, data.column_names)
    if data.num_rows == 0:
        return None
    written: list[str] = []
    try:
        return commit.commit(insert_messages(ctx, data, fields, written, INSERT))
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise


def insert_messages(ctx: StoreContext, data: pa.Table, fields: Sequence[DataField], written: list[str], what: str
                    ) -> list[CommitMessage]:
    """Files (uncommitted, no row ids yet) of new rows of ``fields``, one per partition, in the order of ``data``;
    ``_WRITE_COLS`` unless ``fields`` are every column. Each path written is appended to ``written``. ``fields``:
    see :func:`insert_fields`."""
    rows = _column_table(data, fields)
    keys = list(ctx.schema.partition_keys)
    writer = DataFileWriter(ctx, None)
    writer.track = written.append
    whole = len(fields) == len(ctx.schema.fields)
    messages = []
    parts = rows.select(keys).group_by(keys, use_threads=False).aggregate([]) if keys else None
    for i in range(parts.num_rows if parts is not None else 1):
        chunk, values = rows, tuple[object, ...]()
        if parts is not None:
            values = tuple(parts.column(k)[i].as_py() for k in keys)
            mask = None
            for k, v in zip(keys, values, strict=True):
                m = pc.is_null(rows.column(k)) if v is None else pc.equal(rows.column(k), v)
                mask = m if mask is None else pc.and_(mask, m)
            chunk = rows.filter(mask)
        part = encode_row(values, [f.type for f in ctx.schema.partition_fields()])
        meta = _write_column_file(ctx, writer, writer.bucket_path(values, 0), chunk, fields, None)
        if whole:
            meta = dataclasses.replace(meta, write_cols=None, value_stats_cols=None)
        messages.append(CommitMessage(part, 0, ctx.options.bucket(),
                                      new_files=[meta]))
    return messages


def upsert_by_key(ctx: StoreContext, commit: FileStoreCommit, data: pa.Table, keys: Sequence[str],
                  columns: Sequence[str] | None, existing: pa.Table, base: Snapshot | None,
                  commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> int | None:
    """As pypaimon's ``upsert_by_arrow_with_key``, in one commit: rows of ``data`` whose ``keys`` (with the partition
    columns) match rows of ``existing`` (those key columns and ``_ROW_ID``, read at snapshot ``base``) set
    ``columns`` (default: those of ``data``; not the partition columns) of every matching row, as
    :func:`update_by_row_id`; the other rows are new rows of the columns of ``data``, in their order. A key repeated
    in ``data`` keeps its last row. Null keys match null keys."""
    what = "upsert by key"
    fields = _fields(ctx, data.column_names, what)
    match = list(dict.fromkeys([*keys, *ctx.schema.partition_keys]))
    absent = [k for k in match if k not in data.column_names]
    if not keys or absent:
        raise SchemaError(f"{what} of table {ctx.table_path}: the key column(s) {absent or '[]'} are missing from "
                          f"the data (keys {list(keys)}, partition columns {ctx.schema.partition_keys})")
    partition_keys = set(ctx.schema.partition_keys)
    names = [n for n in (columns if columns is not None else data.column_names) if n not in partition_keys]
    set_fields = _fields(ctx, names, what)
    absent = [n for n in names if n not in data.column_names]
    if absent:
        raise SchemaError(f"{what} of table {ctx.table_path}: column(s) {absent} to set are not in the data")
    if data.num_rows == 0:
        return None
    data = _last_per_key(_column_table(data, fields), match)
    existing = existing.select(match).cast(data.select(match).schema).append_column(ROW_ID, existing.column(ROW_ID))
    fillers = _fillers([data, existing], match)
    pairs = _key_frame(data, match, fillers).append_column(
        "__in", pa.array(np.arange(data.num_rows, dtype=np.int64))).join(
        _key_frame(existing, match, fillers).append_column(ROW_ID, existing.column(ROW_ID)),
        keys=[f"__k{i}" for i in range(2 * len(match))], join_type="inner", use_threads=False)
    matched = pairs.column("__in").to_numpy() if pairs.num_rows else np.zeros(0, np.int64)
    new_rows = np.setdiff1d(np.arange(data.num_rows, dtype=np.int64), matched)
    written: list[str] = []
    try:
        messages = []
        if len(matched) and set_fields:
            updates = data.take(pa.array(matched)).select(names).append_column(ROW_ID, pairs.column(ROW_ID))
            messages += update_messages(ctx, updates, set_fields, base, written, what)
        if len(new_rows):
            messages += insert_messages(ctx, data.take(pa.array(new_rows)), fields, written, what)
        return commit.commit(messages, commit_identifier) if messages else None
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise


def _last_per_key(data: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``data`` with only the last row of each key, rows in their order."""
    frame = _key_frame(data, keys, _fillers([data], keys))
    last = frame.append_column("__i", pa.array(np.arange(data.num_rows, dtype=np.int64))).group_by(
        frame.column_names, use_threads=False).aggregate([("__i", "max")]).column("__i_max").to_numpy()
    return data if len(last) == data.num_rows else data.take(pa.array(np.sort(last)))


def _fillers(tables: Sequence[pa.Table], keys: Sequence[str]) -> dict[str, pa.Scalar | None]:
    """Per key column, a value of it in one of ``tables`` (None when it is null everywhere)."""
    out: dict[str, pa.Scalar | None] = {}
    for k in keys:
        valid = [t.column(k).drop_null() for t in tables]
        out[k] = next((v[0] for v in valid if len(v)), None)
    return out


def _key_frame(data: pa.Table, keys: Sequence[str], fillers: dict[str, pa.Scalar | None]) -> pa.Table:
    """Join columns for ``keys`` where a null equals a null: per key, whether it is null and its value with nulls
    replaced by the key's filler (the null flag again when the key is null everywhere)."""
    arrays: list[pa.Array | pa.ChunkedArray] = []
    for k in keys:
        col, filler = data.column(k), fillers[k]
        nulls = pc.is_null(col)
        arrays += [nulls, nulls if filler is None else pc.fill_null(col, filler.cast(col.type))]
    return pa.Table.from_arrays(arrays, names=[f"__k{i}" for i in range(len(arrays))])
