"""The table facade: write, commit, scan, read, time travel and schema evolution of one table."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

import pyarrow as pa

from table_engine.core_options import CoreOptions
from table_engine.errors import SchemaError, SnapshotNotExistError, TableEngineError
from table_engine.format.schema_file import TableSchema, latest_schema, read_schema, try_commit_schema
from table_engine.format.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    list_snapshot_ids,
    read_snapshot,
    snapshot_at_or_before_time,
)
from table_engine.io.file_io import FileIO
from table_engine.io.paths import tag_dir, tag_path
from table_engine.lsm.merge import merge_function_for
from table_engine.schema_change import SchemaChange, apply_changes
from table_engine.store.commit import FileStoreCommit, Overwrite
from table_engine.store.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.predicate import parse_filters, validate_columns
from table_engine.store.read import ReadContext, TableRead
from table_engine.store.scan import Split, plan_splits
from table_engine.store.write import TableWrite

log = logging.getLogger(__name__)

RowKinds: TypeAlias = Sequence[str] | pa.Array | None


class Table:
    """A Paimon table at ``path``. Cheap to create; reads metadata on demand."""

    def __init__(self, file_io: FileIO, path: str, identifier: str, schema: TableSchema) -> None:
        self.file_io = file_io
        self.path = path
        self.identifier = identifier
        self._set_schema(schema)

    def _set_schema(self, schema: TableSchema) -> None:
        self.schema = schema
        self.options = CoreOptions(schema.options)
        self._ctx = StoreContext(self.file_io, self.path, schema, self.options)

    # ---- properties --------------------------------------------------------------------------------------------
    @property
    def primary_keys(self) -> list[str]:
        return list(self.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.schema.partition_keys)

    @property
    def arrow_schema(self) -> pa.Schema:
        return self.schema.arrow_schema()

    def refresh(self) -> Table:
        """Reload the latest schema (after another process altered the table)."""
        s = latest_schema(self.file_io, self.path)
        if s is not None and s.id != self.schema.id:
            self._set_schema(s)
        return self

    def __repr__(self) -> str:
        return f"Table({self.identifier!r}, path={self.path!r}, schema_id={self.schema.id})"

    # ---- writing -----------------------------------------------------------------------------------------------
    def new_write(self) -> TableWrite:
        """A writer task (phase one). Its ``prepare_commit()`` messages go to :meth:`new_commit`."""
        return TableWrite(self._ctx)

    def new_commit(self, commit_user: str | None = None) -> FileStoreCommit:
        """The committer (phase two) for ``commit_user`` (a fresh UUID by default, with ``commit.user-prefix``)."""
        user = commit_user or f"{self.options.commit_user_prefix() or ''}{uuid.uuid4()}"
        return FileStoreCommit(self._ctx, user)

    def write(self, data: pa.Table | pa.RecordBatch, row_kinds: RowKinds = None, *, overwrite: bool = False,
              partition: Mapping[str, Any] | None = None) -> int | None:
        """Write ``data`` in one commit and return the new snapshot id (None when nothing was written).

        Row kinds come from ``row_kinds``, else from the ``rowkind.field`` column, else +I. With ``overwrite``
        the commit replaces the partitions present in the data (``dynamic-partition-overwrite``, default true),
        all data (when false or the table is unpartitioned), or the static ``partition`` given.
        """
        writer = self.new_write()
        try:
            writer.write(data, row_kinds)
            messages = writer.prepare_commit()
            ow = None
            if overwrite or partition:
                ow = Overwrite(static_partition=partition, dynamic=self.options.dynamic_partition_overwrite())
            return self.new_commit().commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=ow)
        except BaseException:
            writer.abort()
            raise

    def commit(self, messages: Sequence[CommitMessage], commit_user: str | None = None,
               commit_identifier: int = BATCH_COMMIT_IDENTIFIER, overwrite: bool = False,
               partition: Mapping[str, Any] | None = None) -> int | None:
        """Commit messages from writer tasks (e.g. Spark executors) as one snapshot."""
        ow = Overwrite(static_partition=partition, dynamic=self.options.dynamic_partition_overwrite()) \
            if (overwrite or partition) else None
        return self.new_commit(commit_user).commit(messages, commit_identifier, overwrite=ow)

    # ---- snapshots and time travel -----------------------------------------------------------------------------
    def latest_snapshot(self) -> Snapshot | None:
        return self._ctx.latest_snapshot()

    def snapshot(self, snapshot_id: int) -> Snapshot:
        return read_snapshot(self.file_io, self.path, snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """Every live snapshot, oldest first."""
        return [read_snapshot(self.file_io, self.path, i) for i in list_snapshot_ids(self.file_io, self.path)]

    def latest_snapshot_id(self) -> int | None:
        return latest_snapshot_id(self.file_io, self.path)

    def earliest_snapshot_id(self) -> int | None:
        return earliest_snapshot_id(self.file_io, self.path)

    def create_tag(self, name: str, snapshot_id: int | None = None) -> Snapshot:
        """Tag a snapshot (latest by default): ``tag/tag-<name>`` holds a copy of the snapshot file."""
        sid = snapshot_id if snapshot_id is not None else self.latest_snapshot_id()
        if sid is None:
            raise SnapshotNotExistError(f"table {self.identifier} has no snapshot to tag")
        snap = self.snapshot(sid)
        if not self.file_io.write_if_absent(tag_path(self.path, name), snap.to_json().encode("utf-8")):
            raise TableEngineError(f"tag {name!r} of table {self.identifier} exists already")
        return snap

    def tag_snapshot(self, name: str) -> Snapshot:
        p = tag_path(self.path, name)
        try:
            text = self.file_io.read_text(p)
        except FileNotFoundError:
            raise SnapshotNotExistError(f"tag {name!r} of table {self.identifier} does not exist") from None
        return Snapshot.from_json(text, p)

    def list_tags(self) -> list[str]:
        names = [st.path.rsplit("/", 1)[-1] for st in self.file_io.list_status(tag_dir(self.path))]
        return sorted(n[4:] for n in names if n.startswith("tag-"))

    def resolve_snapshot(self, snapshot_id: int | None = None, tag: str | None = None,
                         timestamp_millis: int | None = None) -> Snapshot | None:
        """The snapshot a read should use (latest by default; None for an empty table)."""
        if sum(x is not None for x in (snapshot_id, tag, timestamp_millis)) > 1:
            raise TableEngineError("give at most one of snapshot_id, tag and timestamp_millis")
        if tag is not None:
            return self.tag_snapshot(tag)
        if snapshot_id is not None:
            return self.snapshot(snapshot_id)
        if timestamp_millis is not None:
            snap = snapshot_at_or_before_time(self.file_io, self.path, timestamp_millis)
            if snap is None:
                raise SnapshotNotExistError(
                    f"table {self.identifier} has no snapshot at or before {timestamp_millis} ms")
            return snap
        return self.latest_snapshot()

    # ---- reading -----------------------------------------------------------------------------------------------
    def plan(self, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
             timestamp_millis: int | None = None) -> list[Split]:
        """Splits of a batch scan: one per (partition, bucket), pruned by ``filter``."""
        preds = parse_filters(filter)
        validate_columns(preds, self.schema.field_names())
        snap = self.resolve_snapshot(snapshot_id, tag, timestamp_millis)
        return plan_splits(self.file_io, self.path, snap, self.schema, preds, self._ctx.schema_by_id)

    def new_read(self, columns: Sequence[str] | None = None, filter: Any = None) -> TableRead:
        preds = parse_filters(filter)
        validate_columns(preds, self.schema.field_names())
        merge_fn = merge_function_for(self.options.merge_engine()) if self.schema.primary_keys else None
        ctx = ReadContext(self.file_io, self.path, self.schema, self._ctx.schema_by_id, merge_fn,
                          tuple(self.options.sequence_fields()), self.options.sequence_descending(),
                          self.options.partition_default_name())
        return TableRead(ctx, columns, preds)

    def read(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
             tag: str | None = None, timestamp_millis: int | None = None) -> pa.Table:
        """The merged rows of a snapshot (latest by default) as one Arrow table.

        ``filter`` is a list of ``(column, op, value)`` tuples (ANDed): ``=, !=, <, <=, >, >=, in, not in,
        is null, is not null``; partitions and files are pruned by it, rows are filtered exactly.
        """
        splits = self.plan(filter, snapshot_id, tag, timestamp_millis)
        return self.new_read(columns, filter).to_arrow(splits)

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
                   tag: str | None = None, timestamp_millis: int | None = None,
                   batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
        """Stream the merged rows as record batches; memory stays bounded by one merge section."""
        splits = self.plan(filter, snapshot_id, tag, timestamp_millis)
        yield from self.new_read(columns, filter).to_batches(splits, batch_size)

    # ---- schema evolution --------------------------------------------------------------------------------------
    def alter(self, *changes: SchemaChange) -> TableSchema:
        """Apply schema changes atomically (a new ``schema-N``); retries if another process altered first."""
        for _ in range(20):
            current = latest_schema(self.file_io, self.path)
            if current is None:
                raise SchemaError(f"table {self.identifier} has no schema")
            new = apply_changes(current, changes, has_snapshots=self.latest_snapshot_id() is not None)
            new = replace(new, time_millis=int(time.time() * 1000))
            if try_commit_schema(self.file_io, self.path, new):
                self._set_schema(new)
                log.info("table %s: schema %d committed", self.identifier, new.id)
                return new
        raise SchemaError(f"could not commit a schema change to {self.identifier}: concurrent changes")

    def schema_by_id(self, schema_id: int) -> TableSchema:
        return read_schema(self.file_io, self.path, schema_id)

    # ---- compaction (issue 3: compaction helper adds methods below this line) ----------------------------------

    # ---- lifecycle (issue 3: lifecycle helper adds methods below this line) ------------------------------------

    # ---- file indexes (issue 3: file-index helper adds methods below this line) --------------------------------
