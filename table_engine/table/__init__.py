"""The table facade: write, commit, scan, read, time travel and schema evolution of one table."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeAlias, TypeVar

import pyarrow as pa

from table_engine.core_options import CoreOptions, default_commit_user
from table_engine.errors import (
    ReadOnlyTableError,
    SchemaError,
    SnapshotNotExistError,
    TableEngineError,
)
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
from table_engine.predicate import parse_filters, validate_columns
from table_engine.schema_change import SchemaChange, apply_changes
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.scan import Split, plan_splits
from table_engine.store.reading.table_metadata import TableMetadata
from table_engine.store.writing.write import TableWrite

if TYPE_CHECKING:
    from table_engine.format.tag_file import Tag
    from table_engine.store.changes.changelog_consumer import ChangelogConsumer
    from table_engine.store.changes.consumers import ConsumerManager
    from table_engine.store.changes.stream_scan import StreamScan
    from table_engine.store.lifecycle.expire import ExpireResult
    from table_engine.store.lifecycle.maintenance import MaintenanceReport
    from table_engine.store.lifecycle.orphans import OrphanResult
    from table_engine.store.lifecycle.partition_expire import PartitionExpireResult
    from table_engine.store.lifecycle.rollback import RollbackResult
    from table_engine.store.lifecycle.tags import TagDeletion, TagManager
    from table_engine.store.partition_spec import PartitionSpecs
    from table_engine.table_source import TableSource

log = logging.getLogger(__name__)

RowKinds: TypeAlias = Sequence[str] | pa.Array | None

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T", bound="Table")


def mutating(method: Callable[Concatenate[_T, _P], _R]) -> Callable[Concatenate[_T, _P], _R]:
    """Marks a :class:`Table` method that writes to the table (data, metadata, tags, consumers or files): on a
    read-only table (a system table, ``$ro``) it raises :class:`ReadOnlyTableError` before doing anything."""

    @functools.wraps(method)
    def guarded(self: _T, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        self._check_writable(method.__name__)
        return method(self, *args, **kwargs)

    guarded.__mutating__ = True  # type: ignore[attr-defined]
    return guarded


def is_mutating(method: object) -> bool:
    """Whether a :class:`Table` method was declared with :func:`mutating`."""
    return bool(getattr(method, "__mutating__", False))


class Table:
    """A Paimon table at ``path``. Cheap to create; reads metadata on demand."""

    def __init__(self, file_io: FileIO, path: str, identifier: str, schema: TableSchema, *,
                 source: TableSource | None = None) -> None:
        self.file_io = file_io
        self.path = path
        self.identifier = identifier
        self.source = source
        """Serves the rows of a system table (:mod:`table_engine.table_source`); such a table is read-only."""
        if source is not None:
            self.read_only = True
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
        return self.schema.arrow_schema() if self.source is None else self.source.arrow_schema(self)

    def refresh(self) -> Table:
        """Reload the latest schema (after another process altered the table)."""
        s = latest_schema(self.file_io, self.path)
        if s is not None and s.id != self.schema.id:
            self._set_schema(s)
        return self

    def __repr__(self) -> str:
        return f"Table({self.identifier!r}, path={self.path!r}, schema_id={self.schema.id})"

    # ---- writing -----------------------------------------------------------------------------------------------
    @mutating
    def new_write(self) -> TableWrite:
        """A writer task (phase one). Its ``prepare_commit()`` messages go to :meth:`new_commit`."""
        return TableWrite(self._ctx)

    @mutating
    def new_commit(self, commit_user: str | None = None) -> FileStoreCommit:
        """The committer (phase two) for ``commit_user`` (a fresh UUID by default, with ``commit.user-prefix``)."""
        user = commit_user or default_commit_user(self.options)
        return FileStoreCommit(self._ctx, user)

    @mutating
    def write(self, data: pa.Table | pa.RecordBatch, row_kinds: RowKinds = None, *, overwrite: bool = False,
              partition: Mapping[str, Any] | None = None, maintain: bool | None = None) -> int | None:
        """Write ``data`` in one commit and return the new snapshot id (None when nothing was written).

        Row kinds come from ``row_kinds``, else from the ``rowkind.field`` column, else +I. With ``overwrite``
        the commit replaces the partitions present in the data (``dynamic-partition-overwrite``, default true),
        all data (when false or the table is unpartitioned), or the static ``partition`` given.
        ``maintain``: run commit-time maintenance afterwards (default :attr:`commit_maintenance`).
        """
        unknown = sorted(str(k) for k in partition or {} if k not in self.partition_keys)
        if unknown:  # before anything is written
            raise SchemaError(f"overwrite partition {dict(partition or {})}: {unknown} are not partition columns of "
                              f"{self.identifier} (partition columns: {self.partition_keys})")
        writer = self.new_write()
        committer = self.new_commit()
        try:
            writer.write(data, row_kinds)
            messages = writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
            ow = None
            if overwrite or partition:
                ow = Overwrite(static_partition=partition, dynamic=self.options.dynamic_partition_overwrite())
            sid = committer.commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=ow)
        except BaseException:
            writer.abort()
            raise
        sid = self._compact_level0(sid, committer, ow is not None)
        self._after_commit(sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    @mutating
    def commit(self, messages: Sequence[CommitMessage], commit_user: str | None = None,
               commit_identifier: int = BATCH_COMMIT_IDENTIFIER, overwrite: bool = False,
               partition: Mapping[str, Any] | None = None, maintain: bool | None = None) -> int | None:
        """Commit messages from writer tasks (e.g. Spark executors) as one snapshot."""
        ow = Overwrite(static_partition=partition, dynamic=self.options.dynamic_partition_overwrite()) \
            if (overwrite or partition) else None
        committer = self.new_commit(commit_user)
        sid = committer.commit(messages, commit_identifier, overwrite=ow)
        sid = self._compact_level0(sid, committer, ow is not None)
        self._after_commit(sid, commit_identifier, maintain)
        return sid

    def _compact_level0(self, sid: int | None, committer: FileStoreCommit, overwritten: bool) -> int | None:
        """Tables whose batch reads skip level 0: compact what an overwrite or dropped writer compactions left on
        level 0, so the commit is visible (:func:`~table_engine.store.compaction.compact.compact_invisible_level0`)."""
        from table_engine.store.compaction.compact import compact_invisible_level0

        return compact_invisible_level0(self._ctx, self.new_commit, sid, overwritten, committer.dropped_compactions)

    # ---- snapshots and time travel -----------------------------------------------------------------------------
    def latest_snapshot(self) -> Snapshot | None:
        return self._ctx.latest_snapshot()

    def metadata(self) -> TableMetadata:
        """Read-only metadata queries (no data file read, nothing written): the snapshot that landed after an id or
        a time, of a commit kind, touching a partition; a partition's live files, rows and done mark."""
        return TableMetadata(self._ctx)

    def snapshot(self, snapshot_id: int) -> Snapshot:
        return read_snapshot(self.file_io, self.path, snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """Every live snapshot, oldest first."""
        return [read_snapshot(self.file_io, self.path, i) for i in list_snapshot_ids(self.file_io, self.path)]

    def latest_snapshot_id(self) -> int | None:
        return latest_snapshot_id(self.file_io, self.path)

    def earliest_snapshot_id(self) -> int | None:
        return earliest_snapshot_id(self.file_io, self.path)

    @mutating
    def create_tag(self, name: str, snapshot_id: int | None = None, time_retained_ms: int | None = None) -> Snapshot:
        """Tag a snapshot (latest by default; also an expired one a tag still holds): ``tag/tag-<name>``.

        ``time_retained_ms`` (default ``tag.default-time-retained``): the tag expires that long after creation.
        """
        return self._create_tag(name, snapshot_id, time_retained_ms)

    def tag_snapshot(self, name: str) -> Snapshot:
        """The snapshot of tag ``name`` (TagNotExistError, a SnapshotNotExistError, if there is none)."""
        return self._tag_manager().get_or_raise(name).snapshot

    def list_tags(self) -> list[str]:
        """Tag names, sorted."""
        return self._tag_manager().names()

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
        if snapshot_id is None and tag is None and timestamp_millis is None and self._scan_mode_set():
            from table_engine.store.changes.batch_changes import batch_start_snapshot

            snap = batch_start_snapshot(self._ctx, self._tag_snapshot_or_none)
        else:
            snap = self.resolve_snapshot(snapshot_id, tag, timestamp_millis)
        return plan_splits(self.file_io, self.path, snap, self.schema, preds, self._ctx.schema_by_id,
                           skip_level0=self._ctx.batch_scan_skip_level0(),
                           merge_capabilities=self._ctx.merge_capabilities)

    def new_read(self, columns: Sequence[str] | None = None, filter: Any = None) -> TableRead:
        preds = parse_filters(filter)
        validate_columns(preds, self.schema.field_names())
        return TableRead(read_context(self._ctx), columns, preds)

    def read(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
             tag: str | None = None, timestamp_millis: int | None = None, *,
             read_optimized: bool | None = None) -> pa.Table:
        """The merged rows of a snapshot (latest by default) as one Arrow table.

        ``filter`` is a list of ``(column, op, value)`` tuples (ANDed): ``=, !=, <, <=, >, >=, in, not in,
        is null, is not null``; partitions and files are pruned by it, rows are filtered exactly.
        ``read_optimized`` (default: whether this is the ``$ro`` table) reads only fully compacted files.
        """
        if self.source is not None:
            return self.source.read(self, columns, filter, snapshot_id, tag, timestamp_millis)
        if self._incremental_read(snapshot_id, tag, timestamp_millis):
            return pa.Table.from_batches(list(self._incremental_batches(columns, filter, 65536)),
                                         schema=self.new_read(columns).output_schema)
        reader, splits = self._reader(columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)
        return reader.to_arrow(splits)

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
                   tag: str | None = None, timestamp_millis: int | None = None,
                   batch_size: int = 65536, *, read_optimized: bool | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the merged rows as record batches; memory stays bounded by one merge section."""
        if self.source is not None:
            yield from self.source.to_batches(self, columns, filter, snapshot_id, tag, timestamp_millis, batch_size)
            return
        if self._incremental_read(snapshot_id, tag, timestamp_millis):
            yield from self._incremental_batches(columns, filter, batch_size)
            return
        reader, splits = self._reader(columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)
        yield from reader.to_batches(splits, batch_size)

    # ---- dynamic options, incremental and streaming reads (store/changes/starting, stream_scan, changelog_consumer) --
    def copy(self, options: Mapping[str, str]) -> Table:
        """This table with per-read (dynamic) options overlaid, e.g. ``{"scan.mode": "from-snapshot",
        "scan.snapshot-id": "3"}`` or ``{"incremental-between": "3,7"}``; nothing is stored."""
        from table_engine.core_options import CoreOptions, validate_options
        from table_engine.lsm.merge_engines import check_engine_options
        from table_engine.store.changes.starting import validate_scan_options

        merged = {**self.schema.options, **{str(k): str(v) for k, v in options.items()}}
        validate_options(merged)
        check_engine_options(merged)
        validate_scan_options(CoreOptions(merged))
        view = type(self).__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._set_schema(replace(self.schema, options=merged))
        return view

    def new_stream_scan(self, filter: Any = None, options: Mapping[str, str] | None = None) -> StreamScan:
        """A streaming scan (``scan.mode``, ``consumer-id``... from the table and ``options``): ``plan()`` returns the
        next snapshot's splits or None, ``read(plan)`` their rows with a ``rowkind`` column."""
        from table_engine.store.changes.stream_scan import StreamScan

        t = self.copy(options) if options else self
        t._check_no_consumer(None)
        preds = parse_filters(filter)
        validate_columns(preds, t.schema.field_names())
        return (StreamScan if t.source is None else t.source.stream_scan_class)(t._ctx, preds)

    def changelog_consumer(self, consumer_id: str | None = None, options: Mapping[str, str] | None = None,
                           filter: Any = None, columns: Sequence[str] | None = None,
                           batch_size: int = 65536) -> ChangelogConsumer:
        """Consume the table's changes as Arrow batches with row kinds; ``consumer_id`` records progress at
        ``commit(position)`` and resumes there (see :mod:`table_engine.store.changes.changelog_consumer`)."""
        from table_engine.store.changes.changelog_consumer import ChangelogConsumer
        from table_engine.store.changes.stream_scan import StreamScan

        t = self.copy(options) if options else self
        t._check_no_consumer(consumer_id)
        preds = parse_filters(filter)
        validate_columns(preds, t.schema.field_names())
        if columns is not None:
            t.new_read(columns)  # checks the names
        scan_class = StreamScan if t.source is None else t.source.stream_scan_class
        return ChangelogConsumer(t._ctx, consumer_id, preds, columns, batch_size, scan_class=scan_class)

    def _check_no_consumer(self, consumer_id: str | None) -> None:
        """A read-only table records no consumer progress (a consumer file holds snapshots of the data table)."""
        from table_engine.core_options import CONSUMER_ID

        cid = consumer_id if consumer_id is not None else self.options.get(CONSUMER_ID)
        if self.read_only and cid is not None:
            raise ReadOnlyTableError(f"table {self.identifier} is a read-only system table: consumer {cid!r} "
                                     f"({CONSUMER_ID.key}) cannot record progress")

    def _scan_mode_set(self) -> bool:
        from table_engine.store.changes.batch_changes import needs_start_resolution

        return needs_start_resolution(self.options)

    def _incremental_read(self, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> bool:
        from table_engine.store.changes.batch_changes import is_incremental

        return snapshot_id is None and tag is None and timestamp_millis is None and is_incremental(self.options)

    def _incremental_batches(self, columns: Sequence[str] | None, filter: Any, batch_size: int,
                             with_row_kind: bool = False) -> Iterator[pa.RecordBatch]:
        from table_engine.store.changes.batch_changes import plan_incremental, read_incremental

        preds = parse_filters(filter)
        validate_columns(preds, self.schema.field_names())
        if columns is not None:
            self.new_read(columns)  # checks the names
        splits = plan_incremental(self._ctx, self._tag_snapshot_or_none, preds)
        yield from read_incremental(self._ctx, splits, preds, columns, with_row_kind, batch_size)

    def _tag_snapshot_or_none(self, name: str) -> Snapshot | None:
        tag = self._tag_manager().get(name)
        return None if tag is None else tag.snapshot

    # ---- schema evolution --------------------------------------------------------------------------------------
    @mutating
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
    _read_optimized = False  # the ``$ro`` view of a table

    @mutating
    def compact(self, full: bool = False, partitions: PartitionSpecs | None = None,
                idle_partitions_older_than_ms: int | None = None, commit_user: str | None = None) -> int | None:
        """Dedicated compaction; the id of the COMPACT snapshot, None when nothing to do.

        Primary-key tables: ``full`` compacts every bucket into one sorted run at the max level (else Paimon's
        universal picker per bucket: a "minor" compaction). Append tables: small files of each bucket (of each
        partition with ``bucket`` = -1) are rewritten into files near ``target-file-size`` once
        ``compaction.min.file-num`` of them are there, deletion vectors applied (see
        :mod:`table_engine.store.compaction.append_pick`); ``full`` also takes the small files left over.
        ``partitions``: only partitions matching one of these ``{column: value}`` specs or ``k=v,..`` texts (typed
        against the partition columns; a spec that matches no partition is a PartitionSpecError).
        ``idle_partitions_older_than_ms``: only partitions without new files for that long. Buckets are compacted
        concurrently; a concurrent commit that removed an input file raises CommitConflictError and leaves the table
        as it was.
        """
        from table_engine.store.compaction.compact import compact_table

        return compact_table(self._ctx, self.new_commit(commit_user), full, partitions, idle_partitions_older_than_ms)

    def read_optimized_view(self) -> Table:
        """The ``$ro`` system table: reads see only the max-level files of a primary-key table (no merging), i.e.
        the result of the latest full compaction of each bucket. Read-only."""
        view = Table(self.file_io, self.path, f"{self.identifier.split('$', 1)[0]}$ro", self.schema)
        view._read_optimized = True
        view.read_only = True
        return view

    def _reader(self, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None, tag: str | None,
                timestamp_millis: int | None, read_optimized: bool | None) -> tuple[TableRead, list[Split]]:
        splits = self.plan(filter, snapshot_id, tag, timestamp_millis)
        reader = self.new_read(columns, filter)
        if (self._read_optimized if read_optimized is None else read_optimized) and self.schema.primary_keys:
            top = self.options.num_levels() - 1
            splits = [replace(s, files=[f for f in s.files if f.level == top]) for s in splits]
            splits = [s for s in splits if s.files]
            reader.read_optimized = True
        return reader, splits

    read_only = False
    """True for system tables and ``$ro``: every :func:`mutating` method raises :class:`ReadOnlyTableError`."""

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyTableError(f"table {self.identifier} is a read-only system table: {action} is not allowed")

    # ---- lifecycle (issue 3: lifecycle helper adds methods below this line) ------------------------------------

    commit_maintenance: bool = False
    """Opt-in: :meth:`write` and :meth:`commit` run Paimon's commit-time maintenance after a successful commit
    (automatic tags, tag/partition/consumer/snapshot expiry) unless ``write-only``; per call: ``maintain=``."""

    def _after_commit(self, snapshot_id: int | None, commit_identifier: int, maintain: bool | None) -> None:
        if snapshot_id is None or not (self.commit_maintenance if maintain is None else maintain):
            return
        from table_engine.store.lifecycle.maintenance import run_commit_maintenance

        try:
            run_commit_maintenance(self._ctx, commit_identifier)
        except (TableEngineError, OSError) as e:  # the commit stands; maintenance is retried at the next one
            log.warning("commit-time maintenance of %s after snapshot %s failed: %s", self.identifier, snapshot_id, e)

    @mutating
    def maintain(self, commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> MaintenanceReport:
        """Run commit-time maintenance now (what writers do after a commit); nothing with ``write-only``."""
        from table_engine.store.lifecycle.maintenance import run_commit_maintenance

        return run_commit_maintenance(self._ctx, commit_identifier)

    @mutating
    def expire_snapshots(self, /, **overrides: Any) -> ExpireResult:
        """Expire snapshots (then decoupled changelogs) by the table options; ``overrides``: retain_min,
        retain_max, time_retained (ms or '1 h'), older_than_millis, max_deletes, changelog_retain_min/max,
        changelog_time_retained."""
        from table_engine.store.lifecycle.expire import ExpireConfig, expire_snapshots

        return expire_snapshots(self._ctx, ExpireConfig.from_options(self.options, overrides))

    @mutating
    def tag_manager(self) -> TagManager:
        """The tag manager (creates, replaces, deletes and expires tags)."""
        return self._tag_manager()

    def _tag_manager(self) -> TagManager:
        from table_engine.store.lifecycle.tag_period import TagPeriodHandler
        from table_engine.store.lifecycle.tags import TagManager

        auto = self.options.tag_automatic_creation().value in ("process-time", "watermark")
        return TagManager(self._ctx, TagPeriodHandler.from_options(self.options) if auto else None)

    def tags(self) -> list[Tag]:
        """Every tag (with its snapshot, create time and retention), by name."""
        return self._tag_manager().all()

    def _create_tag(self, name: str, snapshot_id: int | None, time_retained_ms: int | None) -> Snapshot:
        snap = self._find_snapshot(snapshot_id)
        retained = time_retained_ms if time_retained_ms is not None else self.options.tag_default_time_retained()
        return self.tag_manager().create(name, snap, retained).snapshot

    def _find_snapshot(self, snapshot_id: int | None) -> Snapshot:
        if snapshot_id is None:
            latest = self.latest_snapshot()
            if latest is None:
                raise SnapshotNotExistError(f"table {self.identifier} has no snapshot")
            return latest
        try:
            return self.snapshot(snapshot_id)
        except SnapshotNotExistError:
            for snap, _ in self._tag_manager().tagged_snapshots():  # expired, but a tag still holds it
                if snap.id == snapshot_id:
                    return snap
            raise

    @mutating
    def create_tag_from_timestamp(self, name: str, timestamp_millis: int,
                                  time_retained_ms: int | None = None) -> Snapshot:
        """Tag the first snapshot (or tagged snapshot) committed at or after ``timestamp_millis``."""
        found: Snapshot | None = None
        for snap in self.snapshots():
            if snap.time_millis >= timestamp_millis:
                found = snap
                break
        for snap, _ in self._tag_manager().tagged_snapshots():
            if timestamp_millis <= snap.time_millis:
                if found is None or snap.time_millis < found.time_millis:
                    found = snap
                break
        if found is None:
            raise SnapshotNotExistError(
                f"table {self.identifier} has no snapshot committed at or after {timestamp_millis} ms")
        retained = time_retained_ms if time_retained_ms is not None else self.options.tag_default_time_retained()
        return self.tag_manager().create(name, found, retained).snapshot

    @mutating
    def replace_tag(self, name: str, snapshot_id: int | None = None, time_retained_ms: int | None = None) -> Snapshot:
        """Point existing tag ``name`` at another snapshot (latest by default)."""
        return self.tag_manager().replace(name, self._find_snapshot(snapshot_id), time_retained_ms).snapshot

    @mutating
    def rename_tag(self, name: str, new_name: str) -> None:
        self.tag_manager().rename(name, new_name)

    @mutating
    def delete_tag(self, name: str | Sequence[str], ignore_if_not_exists: bool = False) -> TagDeletion:
        """Delete tags (a name, a list, or comma-separated names) and the files only they kept alive."""
        from table_engine.store.lifecycle.tags import TagDeletion

        names = [n.strip() for n in name.split(",")] if isinstance(name, str) else list(name)
        tags = self.tag_manager()
        deleted: list[str] = []
        files = 0
        for n in names:
            result = tags.delete(n, ignore_if_not_exists)
            deleted += result.deleted_tags
            files += result.deleted_files
        return TagDeletion(deleted, files)

    @mutating
    def expire_tags(self, older_than_millis: int | None = None) -> list[str]:
        """Delete tags past their retention, or created before ``older_than_millis``, and automatic tags beyond
        ``tag.num-retained-max``; returns the deleted names."""
        import datetime

        older = None if older_than_millis is None else datetime.datetime.fromtimestamp(older_than_millis / 1000)
        return self.tag_manager().expire(older, num_retained_max=self.options.tag_num_retained_max()).deleted_tags

    @mutating
    def create_auto_tags(self) -> list[str]:
        """Create the automatic tags that are due (``tag.automatic-creation``; Paimon's
        ``trigger_tag_automatic_creation``)."""
        from table_engine.store.lifecycle.tag_creation import TagAutoCreation, create_batch_tag

        if self.options.tag_automatic_creation().value == "batch":
            name = create_batch_tag(self._ctx)
            return [name] if name else []
        return TagAutoCreation(self._ctx).run()

    @mutating
    def expire_partitions(self, /, **overrides: Any) -> PartitionExpireResult:
        """Drop expired partitions; ``overrides``: expiration_time, strategy, timestamp_formatter,
        timestamp_pattern, max_expires, dry_run."""
        from table_engine.store.lifecycle.partition_expire import expire_partitions

        return expire_partitions(self._ctx, **overrides)

    @mutating
    def drop_partitions(self, partitions: PartitionSpecs) -> int | None:
        """Drop partitions (specs may name some partition keys; values as text or typed) in one OVERWRITE commit;
        its snapshot id. A spec that matches no partition is a PartitionSpecError and nothing is dropped."""
        from table_engine.store.lifecycle.partition_expire import drop_partitions

        return drop_partitions(self._ctx, partitions)

    @mutating
    def consumer_manager(self) -> ConsumerManager:
        """The consumer manager (creates, updates, clears and expires consumers)."""
        return self._consumer_manager()

    def _consumer_manager(self) -> ConsumerManager:
        from table_engine.store.changes.consumers import ConsumerManager

        return ConsumerManager(self.file_io, self.path)

    def consumers(self) -> dict[str, int]:
        """consumer id -> next snapshot id."""
        return self._consumer_manager().consumers()

    @mutating
    def reset_consumer(self, consumer_id: str, next_snapshot_id: int | None = None) -> None:
        """Set a consumer's next snapshot, or delete the consumer when ``next_snapshot_id`` is None."""
        self.consumer_manager().reset(consumer_id, next_snapshot_id)

    @mutating
    def clear_consumers(self, including: str = ".*", excluding: str | None = None) -> list[str]:
        """Delete consumers whose id fully matches regex ``including`` and not ``excluding``."""
        return self.consumer_manager().clear(including, excluding)

    @mutating
    def remove_orphan_files(self, older_than_millis: int | None = None, dry_run: bool = False) -> OrphanResult:
        """Delete files nothing references that are older than ``older_than_millis`` (default: one day ago)."""
        from table_engine.store.lifecycle.orphans import remove_orphan_files

        return remove_orphan_files(self._ctx, older_than_millis, dry_run)

    @mutating
    def rollback_to(self, version: int | str) -> RollbackResult:
        """Roll back to a snapshot id (int) or a tag (str): newer snapshots and tags and their files are removed."""
        from table_engine.store.lifecycle.rollback import rollback_to

        if isinstance(version, bool) or not isinstance(version, (int, str)):
            raise TableEngineError(f"rollback needs a snapshot id or a tag name, got {version!r}")
        result = rollback_to(self._ctx, snapshot_id=version) if isinstance(version, int) \
            else rollback_to(self._ctx, tag=version)
        return result

    # ---- file indexes (issue 3: file-index helper adds methods below this line) --------------------------------

    @mutating
    def rewrite_file_index(self, partitions: PartitionSpecs | None = None,
                           commit_user: str | None = None) -> int | None:
        """(Re)build the file indexes of existing data files per the current ``file-index.*`` options (Paimon's
        ``sys.rewrite_file_index``), e.g. after ``SetOption('file-index.bloom-filter.columns', ...)``.

        ``partitions``: only files of these partitions (a list of ``{partition key: value}``; default all). Each
        changed file is replaced by itself with the new index in one COMPACT commit; returns its snapshot id, or
        None when no file changed.
        """
        from table_engine.store.lifecycle.file_index_rewrite import rewrite_file_index

        self.refresh()
        return rewrite_file_index(self._ctx, self.new_commit(commit_user), partitions)
