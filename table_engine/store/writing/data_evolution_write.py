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
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError, SchemaError
from table_engine.format.binary_row import decode_row, encode_row
from table_engine.format.data_file import StatsMode, make_file_meta
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.formats import write_file
from table_engine.format.snapshot import Snapshot
from table_engine.io.paths import new_data_file_name
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.kv_file_writer import DataFileWriter
from table_engine.store.paths import file_path_in
from table_engine.store.reading.data_evolution import RowIdGroup, row_id_groups
from table_engine.store.reading.read import read_context, read_row_id_group
from table_engine.store.reading.row_tracking import ROW_ID
from table_engine.store.reading.scan import live_entries
from table_engine.types import DataField, to_arrow_field

__all__ = ["insert_columns", "update_by_row_id"]


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


def update_by_row_id(ctx: StoreContext, commit: FileStoreCommit, data: pa.Table, base: Snapshot | None
                     ) -> int | None:
    """Set the columns of ``data`` (besides ``_ROW_ID``) of the rows it names, reading the other rows of their ranges
    in snapshot ``base``; the new snapshot id (None when ``data`` is empty)."""
    if ROW_ID not in data.column_names:
        raise SchemaError(f"update by row id of table {ctx.table_path}: the data has no {ROW_ID} column")
    fields = _fields(ctx, [c for c in data.column_names if c != ROW_ID], "update by row id")
    parts = [f.name for f in fields if f.name in ctx.schema.partition_keys]
    if parts:
        raise SchemaError(f"update by row id of table {ctx.table_path}: partition column(s) {parts} cannot change")
    if data.num_rows == 0:
        return None
    ids_col = data.column(ROW_ID)
    if ids_col.null_count:
        raise DataError(f"update by row id of table {ctx.table_path}: {ROW_ID} is null in {ids_col.null_count} "
                        f"row(s)")
    ids = ids_col.to_numpy().astype(np.int64)
    if len(np.unique(ids)) != len(ids):
        raise DataError(f"update by row id of table {ctx.table_path}: repeated {ROW_ID} values")
    updates = _column_table(data, fields)

    located: list[tuple[bytes, int, int, RowIdGroup]] = []  # (partition, bucket, total buckets, group)
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
    where = np.searchsorted(starts, ids, side="right") - 1
    bad = (where < 0) | (ids >= ends[np.maximum(where, 0)]) if len(starts) else np.ones(len(ids), bool)
    if bad.any():
        raise DataError(f"update by row id of table {ctx.table_path}: row id {int(ids[bad][0])} is not a row of the "
                        f"table")

    read_ctx = read_context(ctx)
    writer = DataFileWriter(ctx, None)
    messages: dict[tuple[bytes, int], CommitMessage] = {}
    written: list[str] = []
    writer.track = written.append
    try:
        for gi in np.unique(where):
            part, bucket, total, group = located[int(gi)]
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
        return commit.commit(list(messages.values()))
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise


def insert_columns(ctx: StoreContext, commit: FileStoreCommit, data: pa.Table) -> int | None:
    """New rows holding only the columns of ``data`` (the partition columns among them); the new snapshot id."""
    fields = _fields(ctx, data.column_names, "write of some columns")
    missing = [k for k in ctx.schema.partition_keys if k not in data.column_names]
    if missing:
        raise SchemaError(f"write of some columns of table {ctx.table_path}: the partition column(s) {missing} are "
                          f"missing")
    if data.num_rows == 0:
        return None
    rows = _column_table(data, fields)
    keys = list(ctx.schema.partition_keys)
    writer = DataFileWriter(ctx, None)
    written: list[str] = []
    writer.track = written.append
    messages = []
    try:
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
            messages.append(CommitMessage(part, 0, -1 if ctx.options.bucket() == -1 else ctx.options.bucket(),
                                          new_files=[meta]))
        return commit.commit(messages)
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise
