"""``rewrite_file_index``: (re)build the file indexes of existing data files per the table's current options.

Paimon's ``sys.rewrite_file_index`` procedure (``FileIndexProcessor``): for every live data file (optionally of some
partitions) the indexes declared now are built from the file's rows; the file's manifest entry is replaced in one
COMPACT commit (DELETE of the old metadata, ADD of the same file with the new ``_EMBEDDED_FILE_INDEX`` /
``_EXTRA_FILES``). A new sidecar never overwrites the old one: the first is ``<data-file>.index``, later ones
``<data-file>-<n>.index``-style names as Paimon's ``createNewFileIndexFilePath`` makes them; the old sidecar stays
for older snapshots and goes with them at expiry. Indexes are keyed by the column names of the file's own schema.
Files whose index would not change are left alone; with no index declared, existing indexes are removed.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.file_index.format import INDEX_PATH_SUFFIX, write_file_index
from table_engine.format.file_index.index_options import FileIndexOptions
from table_engine.format.file_index.writer import IndexedColumn, build_index_bytes
from table_engine.format.formats import read_file
from table_engine.format.manifest import ManifestEntry
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.indexes.file_index_filter import index_file_path
from table_engine.store.partition_spec import PartitionSpecs, partition_specs, select_partitions
from table_engine.store.paths import file_path_in
from table_engine.store.reading.scan import live_entries
from table_engine.types import DataType

__all__ = ["new_index_file_name", "rewrite_file_index"]

log = logging.getLogger(__name__)


def new_index_file_name(previous: str) -> str:
    """Paimon's ``createNewFileIndexFilePath``: ``x-<n>.index`` -> ``x-<n+1>.index``, else ``<stem>-1.index``."""
    dot = previous.rfind(".")
    dash = previous.rfind("-")
    if dash != -1 and dot > dash:
        digits = previous[dash + 1:dot]
        if digits.isdigit() or (digits[:1] in "+-" and digits[1:].isdigit() and digits[1:]):
            return f"{previous[:dash + 1]}{int(digits) + 1}{INDEX_PATH_SUFFIX}"
    return f"{previous[:dot]}-1{INDEX_PATH_SUFFIX}"


def rewrite_file_index(ctx: StoreContext, commit: FileStoreCommit,
                       partitions: PartitionSpecs | None = None) -> int | None:
    """Rebuild the indexes of the live files (of ``partitions``: a list of ``{partition key: value}`` specs) and
    commit them; returns the snapshot id, or None when no file changed."""
    schema = ctx.schema
    opts = FileIndexOptions.from_options(schema.options)
    declared = opts.built_columns()
    snapshot = ctx.latest_snapshot()
    part_fields = schema.partition_fields()
    part_types = [f.type for f in part_fields]
    specs = partition_specs(partitions, part_fields, ctx.options.partition_default_name(), ctx.table_path)
    entries = live_entries(ctx.file_io, ctx.table_path, snapshot)
    if specs is not None:
        selected = select_partitions((e.partition for e in entries), specs, part_fields, require_match=True,
                                     what="rewrite_file_index", table=ctx.table_path)
        entries = [e for e in entries if e.partition in selected]
    if snapshot is None:
        return None
    current_ids = {f.name: f.id for f in schema.fields}
    messages: dict[tuple[bytes, int], CommitMessage] = {}
    written: list[str] = []
    try:
        for e in entries:
            values = decode_row(e.partition, part_types) if part_types else []
            new = _rewrite_one(ctx, e, values, declared, current_ids, opts.in_manifest_threshold, written)
            if new is None:
                continue
            msg = messages.setdefault((e.partition, e.bucket),
                                      CommitMessage(e.partition, e.bucket, e.total_buckets))
            msg.compact_before.append(e.file)
            msg.compact_after.append(new)
        if not messages:
            return None
        sid = commit.commit(list(messages.values()))
        log.info("rewrote the file indexes of %d files of %s in snapshot %s",
                 sum(len(m.compact_after) for m in messages.values()), ctx.table_path, sid)
        return sid
    except BaseException:
        for p in written:  # never the data files: they stay live
            ctx.file_io.try_delete(p)
        raise


def _rewrite_one(ctx: StoreContext, e: ManifestEntry, part_values: Sequence[Any],
                 declared: dict[str, dict[str, dict[str, str]]], current_ids: dict[str, int], threshold: int,
                 written: list[str]) -> DataFileMeta | None:
    f = e.file
    wanted = _indexed_columns(ctx, f, declared, current_ids)
    data_path = file_path_in(ctx.table_path, ctx.schema, list(part_values), e.bucket, f,
                             ctx.options.partition_default_name())
    data: bytes | None = None
    if wanted:
        table = read_file(ctx.file_io, data_path, [name for name, _, _ in wanted])
        columns: list[IndexedColumn] = [(name, table.column(name), t, types) for name, t, types in wanted]
        data = build_index_bytes(columns)
    old_sidecar = index_file_path(data_path, f)
    others = [x for x in f.extra_files if not x.endswith(INDEX_PATH_SUFFIX)]
    if data is None:
        if f.embedded_file_index is None and old_sidecar is None:
            return None
        return _replace(f, embedded=None, extra=others)
    if len(data) <= threshold:
        if f.embedded_file_index == data and old_sidecar is None:
            return None
        return _replace(f, embedded=data, extra=others)
    path = _new_sidecar_path(ctx, f, data_path, old_sidecar, data)
    if path is None:
        return None
    written.append(path)
    write_file_index(ctx.file_io, path, data)
    return _replace(f, embedded=None, extra=[*others, path.rsplit("/", 1)[-1]])


def _indexed_columns(ctx: StoreContext, f: DataFileMeta, declared: dict[str, dict[str, dict[str, str]]],
                     current_ids: dict[str, int]) -> list[tuple[str, DataType, dict[str, dict[str, str]]]]:
    """The declared index columns the file holds: (name in the file's schema, type there, index types)."""
    file_schema = ctx.schema_by_id(f.schema_id)
    by_id = {fld.id: fld for fld in file_schema.fields}
    wanted: list[tuple[str, DataType, dict[str, dict[str, str]]]] = []
    for column, types in declared.items():
        old = by_id.get(current_ids.get(column, -1))
        if old is not None and f.write_cols is not None and old.name not in f.write_cols:
            continue  # a column file of data evolution holds only its _WRITE_COLS
        if old is not None:  # the index is keyed by the column's name in the file's schema
            wanted.append((old.name, old.type, types))
    return wanted


def _new_sidecar_path(ctx: StoreContext, f: DataFileMeta, data_path: str, old_sidecar: str | None, data: bytes
                      ) -> str | None:
    """A free path for the file's new index sidecar; None when its only sidecar already holds ``data``."""
    if old_sidecar is not None and f.embedded_file_index is None:
        try:
            if ctx.file_io.read_bytes(old_sidecar) == data:
                return None
        except FileNotFoundError:
            pass
        path = f"{old_sidecar.rsplit('/', 1)[0]}/{new_index_file_name(old_sidecar.rsplit('/', 1)[-1])}"
    else:
        path = data_path + INDEX_PATH_SUFFIX
    while ctx.file_io.exists(path):  # a sidecar of an older rewrite (or a failed one) keeps its name
        path = f"{path.rsplit('/', 1)[0]}/{new_index_file_name(path.rsplit('/', 1)[-1])}"
    return path


def _replace(f: DataFileMeta, embedded: bytes | None, extra: list[str]) -> DataFileMeta:
    return dataclasses.replace(f, embedded_file_index=embedded, extra_files=extra)
