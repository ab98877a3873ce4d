"""How a :class:`~table_engine.table.Table` writes: the one-call write (planned again when its compaction's input
changed under it), the commit of writer tasks' messages, level-0 compaction where batch reads skip level 0, and
commit-time maintenance after a commit. The ``Table`` methods (``write``, ``new_write``, ``new_commit``,
``commit``) are the public entry points."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from table_engine.core_options import CommitUser, CoreOptions, default_commit_user
from table_engine.errors import (
    CommitConflictError,
    CommitOutcomeUnknownError,
    SchemaError,
    SchemaMismatchError,
    TableEngineError,
)
from table_engine.format.schema_file import latest_schema
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, snapshot_properties
from table_engine.schema_change import apply_changes, merge_schema_changes
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.compact import compact_invisible_level0
from table_engine.store.lifecycle.maintenance import run_commit_maintenance
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.writing.data_evolution_write import insert_columns
from table_engine.store.writing.write import TableWrite

if TYPE_CHECKING:
    from table_engine.table import Table

log = logging.getLogger("table_engine.table")

RowKinds: TypeAlias = Sequence[str] | pa.Array | None

_WRITE_ATTEMPTS = 5
"""How often :func:`write` plans a write again when its compaction's input changed under it."""


def merge_schema(table: Table, data: pa.Schema, write_options: Mapping[str, str] | None = None,
                 sample: pa.Table | pa.RecordBatch | None = None) -> bool:
    """``write.merge-schema`` (the table's option, or the write's own in ``write_options``): alter ``table`` so that
    it takes rows of ``data`` (:func:`~table_engine.schema_change.merge_schema_changes` decides the changes, for
    the engine's writes and Spark's file route alike), in one new schema, before anything is written. ``sample``:
    the rows about to be written, cast to the merged types first, so that a value that does not fit fails before
    the schema changes. Returns whether the schema changed."""
    options = CoreOptions({**table.schema.options, **dict(write_options or {})})
    if not options.write_merge_schema():
        return False
    current = latest_schema(table.file_io, table.path) or table.schema  # Table.alter applies them to the latest
    changes = merge_schema_changes(current, data, explicit_cast=options.write_merge_schema_explicit_cast())
    if not changes:
        return False
    if sample is not None:
        merged = apply_changes(current, changes, has_snapshots=table.latest_snapshot_id() is not None)
        target = merged.arrow_schema()
        for name in sample.column_names:
            if name in target.names and sample.column(name).type != target.field(name).type:
                try:
                    sample.column(name).cast(target.field(name).type, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                    raise SchemaMismatchError(f"write.merge-schema: column {name!r}: cannot write "
                                              f"{sample.column(name).type} into {target.field(name).type}: "
                                              f"{str(e).splitlines()[0]}") from None
    new = table.alter(*changes)
    log.info("%s: write.merge-schema: schema %d for the data's columns (%d changes)", table.identifier, new.id,
             len(changes))
    return True


def committer(table: Table, commit_user: str | CommitUser | None = None) -> FileStoreCommit:
    """The committer for ``commit_user`` (default: a fresh one), without the gate's check for writes: for
    maintenance jobs, which passed the gate for maintenance (their commits are COMPACT, which the committer checks
    against the snapshot it commits on)."""
    return FileStoreCommit(table.store, default_commit_user(table.options, commit_user))


def write(table: Table, data: pa.Table | pa.RecordBatch, row_kinds: RowKinds, overwrite: bool,
          partition: Mapping[str, Any] | None, maintain: bool | None,
          properties: Mapping[str, str] | None) -> int | None:
    """:meth:`Table.write <table_engine.table.Table.write>`: one commit, planned again when its input changed."""
    snapshot_properties(properties)  # before anything is written
    if isinstance(data, pa.Table | pa.RecordBatch):  # (anything else is refused by the writer, as before)
        merge_schema(table, data.schema, sample=data)
    if (data_evolution_enabled(table.schema.options) and row_kinds is None and not overwrite and not partition
            and set(data.schema.names) < set(table.schema.field_names())):
        return _write_columns(table, data, maintain)
    unknown = sorted(str(k) for k in partition or {} if k not in table.partition_keys)
    if unknown:  # before anything is written
        raise SchemaError(f"overwrite partition {dict(partition or {})}: {unknown} are not partition columns of "
                          f"{table.identifier} (partition columns: {table.partition_keys})")
    ow = None
    if overwrite or partition:
        ow = Overwrite(static_partition=partition, dynamic=table.options.dynamic_partition_overwrite())
    for attempt in range(1, _WRITE_ATTEMPTS + 1):
        writer = TableWrite(table.store)
        commit = committer(table)
        try:
            writer.write(data, row_kinds)
            messages = writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
            sid = commit.commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=ow, properties=properties)
            break
        except CommitOutcomeUnknownError:
            raise  # the snapshot may be published: its data files must stay
        except (CommitConflictError, FileNotFoundError) as e:
            writer.abort(keep=commit.published_files)
            if commit.published_files or attempt == _WRITE_ATTEMPTS or not _moved_on(table, writer):
                raise
            # the writer's compaction read files that a concurrent compaction (and expiry) replaced: plan the write
            # again on the newer snapshot
            log.warning("write to %s planned again (attempt %d): its compaction's input changed under it (%s)",
                        table.identifier, attempt + 1, e)
        except BaseException:
            writer.abort(keep=commit.published_files)
            raise
    sid = compact_level0(table, sid, commit, ow is not None)
    after_commit(table, sid, BATCH_COMMIT_IDENTIFIER, maintain)
    return sid


def commit(table: Table, messages: Sequence[CommitMessage], commit_user: str | None, commit_identifier: int,
           overwrite: bool, partition: Mapping[str, Any] | None, maintain: bool | None,
           properties: Mapping[str, str] | None) -> int | None:
    """:meth:`Table.commit <table_engine.table.Table.commit>`: writer tasks' messages in one snapshot."""
    ow = Overwrite(static_partition=partition, dynamic=table.options.dynamic_partition_overwrite()) \
        if (overwrite or partition) else None
    commit = committer(table, commit_user)
    sid = commit.commit(messages, commit_identifier, overwrite=ow, properties=properties)
    sid = compact_level0(table, sid, commit, ow is not None)
    after_commit(table, sid, commit_identifier, maintain)
    return sid


def after_commit(table: Table, snapshot_id: int | None, commit_identifier: int, maintain: bool | None) -> None:
    """Commit-time maintenance after a commit that published ``snapshot_id``, when ``maintain`` (None: the table's
    :attr:`~table_engine.table.Table.commit_maintenance`); a failure is logged (the commit stands; maintenance is
    retried at the next one)."""
    if snapshot_id is None or not (table.commit_maintenance if maintain is None else maintain):
        return
    try:
        run_commit_maintenance(table.store, commit_identifier)
    except (TableEngineError, OSError) as e:
        log.warning("commit-time maintenance of %s after snapshot %s failed: %s", table.identifier, snapshot_id, e)


def compact_level0(table: Table, sid: int | None, commit: FileStoreCommit, overwritten: bool) -> int | None:
    """Tables whose batch reads skip level 0: compact what an overwrite or dropped writer compactions left on level
    0, so the commit is visible (:func:`~table_engine.store.compaction.compact.compact_invisible_level0`)."""
    return compact_invisible_level0(table.store, table.new_commit, sid, overwritten, commit.dropped_compactions)


def _moved_on(table: Table, writer: TableWrite) -> bool:
    """Whether the table has a newer snapshot than the one ``writer`` restored from (so a retry may succeed)."""
    latest = table.store.latest_snapshot()
    return latest is not None and latest.id != writer.base_snapshot_id


def _write_columns(table: Table, data: pa.Table | pa.RecordBatch, maintain: bool | None) -> int | None:
    """:func:`write` of rows with only some columns on a data-evolution table (pypaimon's ``with_write_type``)."""
    sid = insert_columns(table.store, committer(table), as_table(data))
    after_commit(table, sid, BATCH_COMMIT_IDENTIFIER, maintain)
    return sid


def as_table(data: pa.Table | pa.RecordBatch) -> pa.Table:
    """``data`` as an Arrow table."""
    return pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
