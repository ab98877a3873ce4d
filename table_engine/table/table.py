"""The table facade: one class, :class:`Table`, over a table's store handle (:attr:`Table.store`).

As Java's ``Table``, it holds data (read, write, commit), metadata (snapshots, consumers, the read-only metadata
queries), tags, branches, ``expire_snapshots`` and ``rollback_to``; Paimon's maintenance procedures are in one
namespace, :attr:`Table.maintenance`, and the row-level changes of a data-evolution table in another,
:attr:`Table.data_evolution` (docs/adr/0043-table-shape.md). The methods are entry points: how a table reads is
:mod:`table_engine.table.reading`, how it writes :mod:`table_engine.table.writing`, its tags
:mod:`table_engine.table.tags`, its guards :mod:`table_engine.table.guards`; the work is the store layer's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self

import pyarrow as pa

from table_engine.core_options import BRANCH, REGISTRY, CommitUser, CoreOptions, validate_options
from table_engine.errors import SchemaError, TableEngineError, TableNotExistError
from table_engine.features import Op
from table_engine.format.schema_file import TableSchema, latest_schema, try_commit_schema
from table_engine.format.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    list_snapshot_ids,
    read_snapshot,
)
from table_engine.iceberg import IcebergCommitCallback, writes_iceberg_metadata
from table_engine.io.file_io import FileIO
from table_engine.io.paths import branch_of, table_root
from table_engine.lsm.merge_engines import check_engine_options
from table_engine.schema_change import SchemaChange, apply_changes
from table_engine.store.branches import BranchManager
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.changes.starting import validate_scan_options
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.expire import ExpireConfig, ExpireResult, expire_snapshots
from table_engine.store.lifecycle.rollback import RollbackResult, rollback_to
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.reading.read import TableRead
from table_engine.store.reading.scan import Split
from table_engine.store.reading.table_metadata import TableMetadata
from table_engine.store.writing.write import TableWrite
from table_engine.table import reading, writing
from table_engine.table import tags as tagging
from table_engine.table.branches import base_identifier, branch_identifier
from table_engine.table.data_evolution import DataEvolution
from table_engine.table.guards import check_supported, mutating
from table_engine.table.hooks import NO_HOOKS, TableHooks
from table_engine.table.maintenance import TableMaintenance
from table_engine.table.row_level import RowLevel
from table_engine.table.writing import RowKinds

if TYPE_CHECKING:
    from table_engine.format.tag_file import Tag
    from table_engine.store.branches import BranchInfo
    from table_engine.store.changes.changelog_consumer import ChangelogConsumer
    from table_engine.store.changes.stream_scan import StreamScan
    from table_engine.store.committing.commit import FileStoreCommit
    from table_engine.store.committing.commit_message import CommitMessage
    from table_engine.store.lifecycle.tags import TagDeletion
    from table_engine.table_source import TableSource

log = logging.getLogger("table_engine.table")


class Table:
    """A Paimon table at ``path``. Cheap to create; reads metadata on demand.

    - identity and schema: ``identifier``, ``path``, ``file_io``, ``store`` (the store handle every job takes),
      ``hooks`` (the catalog's: its commit lock, the metastore's word of schema changes),
      ``source`` and ``view`` (system tables), ``schema``, ``options``, ``commit_maintenance``, ``primary_keys``,
      ``partition_keys``, ``arrow_schema``, ``read_only``, ``refresh``, ``copy``, ``alter``.
    - snapshots and metadata: ``snapshot``, ``snapshots``, ``latest_snapshot``, ``latest_snapshot_id``,
      ``earliest_snapshot_id``, ``metadata``, ``consumers``.
    - reads: ``read``, ``to_batches``, ``plan``, ``plan_with_fallback``, ``new_read``, ``resolve_snapshot``,
      ``new_stream_scan``, ``changelog_consumer``.
    - writes: ``write``, ``new_write``, ``new_commit``, ``commit``; ``row_level`` (:class:`RowLevel`: DELETE,
      UPDATE, MERGE INTO); ``data_evolution`` (:class:`DataEvolution`).
    - tags: ``create_tag``, ``replace_tag``, ``rename_tag``, ``delete_tag``, ``list_tags``, ``tags``,
      ``tag_snapshot``.
    - branches: ``branch``, ``branch_table``, ``create_branch``, ``delete_branch``, ``rename_branch``,
      ``fast_forward``, ``list_branches``, ``branches``.
    - maintenance: ``expire_snapshots``, ``rollback_to``, ``maintenance`` (:class:`TableMaintenance`: Paimon's
      procedures).

    Every method that changes the table is :func:`~table_engine.table.guards.mutating` with its operation: on a
    read-only table (a system table, ``$ro``) it raises :class:`~table_engine.errors.ReadOnlyTableError` before
    doing anything, and on a table with a feature the engine cannot write or maintain
    :class:`~table_engine.errors.UnsupportedTableFeatureError` (the capability gate; reads check it too:
    docs/compatibility.md). The managers of tags, branches and consumers are the store's
    (``TagManager.of(table.store)``...), unguarded, for the jobs of the engine's own layers.
    """

    read_only = False
    """True for system tables, ``$ro`` and ``$row_tracking``: every :func:`mutating` method raises
    :class:`~table_engine.errors.ReadOnlyTableError`."""

    def __init__(self, file_io: FileIO, path: str, identifier: str, schema: TableSchema, *,
                 source: TableSource | None = None, view: str | None = None, hooks: TableHooks = NO_HOOKS) -> None:
        self.file_io = file_io
        self.hooks = hooks
        """The catalog's hooks on this table (:class:`~table_engine.table.hooks.TableHooks`): its commit lock and
        the metastore's word of a schema change; none for a filesystem catalog's table."""
        self.path = path
        self.identifier = identifier
        self.source = source
        """Serves the rows of a system table (:mod:`table_engine.table_source`); such a table is read-only."""
        self.view = view
        """``ro`` or ``row_tracking`` for those read-only views of the table (:mod:`table_engine.table.reading`)."""
        if source is not None or view is not None:
            self.read_only = True
        self.commit_maintenance = False
        """Opt-in: :meth:`write` and :meth:`commit` (and the data-evolution changes) of this object run Paimon's
        commit-time maintenance after a successful commit (automatic tags, tag/partition/consumer/snapshot expiry)
        unless ``write-only``; per call: ``maintain=``."""
        self._set_schema(schema)

    def _guarded_table(self) -> Table:
        return self

    def _read_only_message(self, action: str) -> str:
        """Why ``action``, a change, is refused on this :attr:`read_only` table (the guards' one message)."""
        return f"table {self.identifier} is a read-only system table: {action} is not allowed"

    def _set_schema(self, schema: TableSchema) -> None:
        self.schema = schema
        self.options = CoreOptions(schema.options)
        iceberg = IcebergCommitCallback(self) if writes_iceberg_metadata(self) else None
        self.store = StoreContext(self.file_io, self.path, schema, self.options, commit_lock=self.hooks.commit_lock,
                                  partitions_added=self.hooks.partitions_added,
                                  partitions_dropped=self.hooks.partitions_dropped,
                                  snapshot_commit=self.hooks.snapshot_commit,
                                  snapshot_published=iceberg.published if iceberg is not None else None,
                                  history_rewriting=iceberg.rewriting if iceberg is not None else None)

    def __repr__(self) -> str:
        return f"Table({self.identifier!r}, path={self.path!r}, schema_id={self.schema.id})"

    def __getstate__(self) -> dict[str, object]:
        """A pickled table (shipped to a Spark task) leaves its catalog's client behind: its hooks become ones that
        refuse (:meth:`TableHooks.shipped`), so a copy never commits without the catalog's lock. Its post-commit
        callbacks (the Iceberg metadata) stay behind too: tasks write files, the driver commits and calls them."""
        state = dict(self.__dict__)
        store = replace(self.store, snapshot_published=None, history_rewriting=None)
        if self.hooks != NO_HOOKS:
            hooks = self.hooks.shipped()
            state["hooks"] = hooks
            store = replace(store, commit_lock=hooks.commit_lock, partitions_added=hooks.partitions_added,
                            partitions_dropped=hooks.partitions_dropped, snapshot_commit=hooks.snapshot_commit)
        state["store"] = store
        return state

    # ---- schema and options -------------------------------------------------------------------------------------
    @property
    def primary_keys(self) -> list[str]:
        return list(self.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.schema.partition_keys)

    @property
    def arrow_schema(self) -> pa.Schema:
        return self.schema.arrow_schema() if self.source is None else self.source.arrow_schema(self)

    def refresh(self) -> Self:
        """Reload the latest schema (after another process altered the table)."""
        s = latest_schema(self.file_io, self.path)
        if s is not None and s.id != self.schema.id:
            self._set_schema(s)
        return self

    def copy(self, options: Mapping[str, str]) -> Self:
        """This table with per-read (dynamic) options overlaid, e.g. ``{"scan.mode": "from-snapshot",
        "scan.snapshot-id": "3"}`` or ``{"incremental-between": "3,7"}``; nothing is stored."""
        check_supported(self, Op.READ)
        given = {str(k): str(v) for k, v in options.items()}
        branch = given.pop(BRANCH.key, None)
        if branch is not None and self.source is None and branch != self.branch:
            return self.branch_table(branch).copy(given)  # type: ignore[return-value]  # that branch's own schema
        merged = {**self.schema.options, **given}
        # the stored options passed the gate (or were accepted by their writer): validate what the engine knows
        validate_options({k: v for k, v in merged.items() if k in given or REGISTRY.is_known(k)})
        check_engine_options(merged)
        validate_scan_options(CoreOptions(merged))
        view = type(self).__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._set_schema(replace(self.schema, options=merged))
        return view

    @mutating(Op.WRITE)
    def alter(self, *changes: SchemaChange) -> TableSchema:
        """Apply schema changes atomically (a new ``schema-N``); retries if another process altered first."""
        for _ in range(20):
            current = latest_schema(self.file_io, self.path)
            if current is None:
                raise SchemaError(f"table {self.identifier} has no schema")
            has_snapshots = latest_snapshot_id(self.file_io, self.path) is not None
            new = apply_changes(current, changes, has_snapshots=has_snapshots)
            new = replace(new, time_millis=int(time.time() * 1000))
            if try_commit_schema(self.file_io, self.path, new):
                self._set_schema(new)
                log.info("table %s: schema %d committed", self.identifier, new.id)
                if self.hooks.schema_committed is not None:
                    self.hooks.schema_committed(new)
                return new
        raise SchemaError(f"could not commit a schema change to {self.identifier}: concurrent changes")

    # ---- snapshots and metadata ---------------------------------------------------------------------------------
    def snapshot(self, snapshot_id: int) -> Snapshot:
        return read_snapshot(self.file_io, self.path, snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """Every live snapshot, oldest first."""
        return [read_snapshot(self.file_io, self.path, i) for i in list_snapshot_ids(self.file_io, self.path)]

    def latest_snapshot(self) -> Snapshot | None:
        return self.store.latest_snapshot()

    def latest_snapshot_id(self) -> int | None:
        return latest_snapshot_id(self.file_io, self.path)

    def earliest_snapshot_id(self) -> int | None:
        return earliest_snapshot_id(self.file_io, self.path)

    def metadata(self) -> TableMetadata:
        """Read-only metadata queries (no data file read, nothing written): the snapshot that landed after an id or
        a time, of a commit kind, touching a partition; a partition's live files, rows and done mark."""
        return TableMetadata(self.store)

    def consumers(self) -> dict[str, int]:
        """Consumer id -> next snapshot id."""
        return ConsumerManager.of(self.store).consumers()

    # ---- reads --------------------------------------------------------------------------------------------------
    def resolve_snapshot(self, snapshot_id: int | None = None, tag: str | None = None,
                         timestamp_millis: int | None = None) -> Snapshot | None:
        """The snapshot a batch read of this table (view) reads: the one given (at most one of ``snapshot_id``,
        ``tag`` and ``timestamp_millis``: the latest at or before that time), else the one its time-travel options
        (``scan.snapshot-id``, ``scan.tag-name``, ``scan.timestamp-millis``, ``scan.mode``...) select, else the
        latest (None for an empty table)."""
        return reading.resolve_snapshot(self, snapshot_id, tag, timestamp_millis)

    def plan(self, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
             timestamp_millis: int | None = None) -> list[Split]:
        """Splits of a batch scan: one per (partition, bucket), pruned by ``filter``. A table whose latest-snapshot
        reads use ``scan.fallback-branch`` refuses (its splits come from two branches: :meth:`plan_with_fallback`
        says which from which)."""
        return reading.plan(self, filter, snapshot_id, tag, timestamp_millis)

    def plan_with_fallback(self, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
                           timestamp_millis: int | None = None) -> list[tuple[str | None, Split]]:
        """:meth:`plan`'s splits, each with the branch it is read from: None for this table's own, else the
        ``scan.fallback-branch`` whose splits cover the partitions this table's plan lacks (a batch read of the
        latest snapshot; Paimon's ``FallbackReadFileStoreTable``). Read a fallback split with
        ``branch_table(name).new_read(...)``: its files follow the fallback branch's schemas."""
        return reading.plan_with_fallback(self, filter, snapshot_id, tag, timestamp_millis)

    def new_read(self, columns: Sequence[str] | None = None, filter: Any = None) -> TableRead:
        """The reader of :meth:`plan`'s splits (``columns``: a projection; ``filter``: as :meth:`read`'s)."""
        return reading.new_read(self, columns, filter)

    def read(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
             tag: str | None = None, timestamp_millis: int | None = None, *,
             read_optimized: bool | None = None) -> pa.Table:
        """The merged rows of a snapshot (latest by default) as one Arrow table.

        ``filter`` is a list of ``(column, op, value)`` tuples (ANDed): ``=, !=, <, <=, >, >=, in, not in,
        is null, is not null``; partitions and files are pruned by it, rows are filtered exactly.
        ``read_optimized`` (default: whether this is the ``$ro`` table) reads only fully compacted files.
        """
        return reading.read(self, columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
                   tag: str | None = None, timestamp_millis: int | None = None,
                   batch_size: int = 65536, *, read_optimized: bool | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the merged rows as record batches; files are read in chunks and merged by streaming, so memory does
        not grow with the table (:meth:`TableRead.to_batches`)."""
        return reading.to_batches(self, columns, filter, snapshot_id, tag, timestamp_millis, batch_size,
                                  read_optimized)

    def new_stream_scan(self, filter: Any = None, options: Mapping[str, str] | None = None) -> StreamScan:
        """A streaming scan (``scan.mode``, ``consumer-id``... from the table and ``options``): ``plan()`` returns the
        next snapshot's splits or None, ``read(plan)`` their rows with a ``rowkind`` column."""
        return reading.new_stream_scan(self, filter, options)

    def changelog_consumer(self, consumer_id: str | None = None, options: Mapping[str, str] | None = None,
                           filter: Any = None, columns: Sequence[str] | None = None,
                           batch_size: int = 65536) -> ChangelogConsumer:
        """Consume the table's changes as Arrow batches with row kinds; ``consumer_id`` records progress at
        ``commit(position)`` and resumes there (see :mod:`table_engine.store.changes.changelog_consumer`)."""
        return reading.changelog_consumer(self, consumer_id, options, filter, columns, batch_size)

    # ---- writes -------------------------------------------------------------------------------------------------
    @mutating(Op.WRITE)
    def new_write(self) -> TableWrite:
        """A writer task (phase one). Its ``prepare_commit()`` messages go to :meth:`new_commit`."""
        return TableWrite(self.store)

    @mutating(Op.WRITE)
    def new_commit(self, commit_user: str | CommitUser | None = None) -> FileStoreCommit:
        """The committer (phase two) for ``commit_user``: a name, a :class:`~table_engine.core_options.CommitUser`
        (one generated for this job has committed nothing yet, so the exactly-once check reads no history), or by
        default a fresh one (:func:`~table_engine.core_options.default_commit_user`)."""
        return writing.committer(self, commit_user)

    @mutating(Op.WRITE)
    def write(self, data: pa.Table | pa.RecordBatch, row_kinds: RowKinds = None, *, overwrite: bool = False,
              partition: Mapping[str, Any] | None = None, maintain: bool | None = None,
              properties: Mapping[str, str] | None = None) -> int | None:
        """Write ``data`` in one commit and return the new snapshot id (None when nothing was written).

        Row kinds come from ``row_kinds``, else from the ``rowkind.field`` column, else +I. With ``overwrite``
        the commit replaces the partitions present in the data (``dynamic-partition-overwrite``, default true),
        all data (when false or the table is unpartitioned), or the static ``partition`` given.
        ``maintain``: run Paimon's commit-time maintenance afterwards (default :attr:`commit_maintenance`).
        ``properties``: a string map stored in the new snapshot's ``properties``
        (Paimon 1.2), e.g. who wrote it.
        """
        return writing.write(self, data, row_kinds, overwrite, partition, maintain, properties)

    @mutating(Op.WRITE)
    def commit(self, messages: Sequence[CommitMessage], commit_user: str | None = None,
               commit_identifier: int = BATCH_COMMIT_IDENTIFIER, overwrite: bool = False,
               partition: Mapping[str, Any] | None = None, maintain: bool | None = None,
               properties: Mapping[str, str] | None = None) -> int | None:
        """Commit messages from writer tasks (e.g. Spark executors) as one snapshot (``overwrite``, ``partition``,
        ``maintain`` and snapshot ``properties`` as in :meth:`write`)."""
        return writing.commit(self, messages, commit_user, commit_identifier, overwrite, partition, maintain,
                              properties)

    @property
    def row_level(self) -> RowLevel:
        """Row-level changes (:class:`RowLevel`): ``delete(filter)``, ``update(set, filter)``, ``merge(source,
        spec)``, SQL's DELETE / UPDATE / MERGE INTO with Paimon's semantics per table kind."""
        return RowLevel(self)

    @property
    def data_evolution(self) -> DataEvolution:
        """Row-level changes of a data-evolution table (:class:`DataEvolution`: update by row id, upsert by key,
        delete by row id or predicate)."""
        return DataEvolution(self)

    # ---- tags ---------------------------------------------------------------------------------------------------
    @mutating(Op.MAINTAIN)
    def create_tag(self, name: str, snapshot_id: int | None = None, time_retained_ms: int | None = None, *,
                   creator: str | None = None) -> Snapshot:
        """Tag a snapshot (latest by default; also an expired one a tag still holds): ``tag/tag-<name>``.

        ``time_retained_ms`` (default ``tag.default-time-retained``): the tag expires that long after creation.
        ``creator`` is recorded in the tag (:attr:`~table_engine.format.tag_file.Tag.creator`).
        """
        return tagging.create_tag(self, name, snapshot_id, time_retained_ms, creator)

    @mutating(Op.MAINTAIN)
    def replace_tag(self, name: str, snapshot_id: int | None = None, time_retained_ms: int | None = None, *,
                    creator: str | None = None) -> Snapshot:
        """Point existing tag ``name`` at another snapshot (latest by default)."""
        snap = tagging.find_snapshot(self, snapshot_id)
        return TagManager.of(self.store).replace(name, snap, time_retained_ms, creator=creator).snapshot

    @mutating(Op.MAINTAIN)
    def rename_tag(self, name: str, new_name: str) -> None:
        TagManager.of(self.store).rename(name, new_name)

    @mutating(Op.MAINTAIN)
    def delete_tag(self, name: str | Sequence[str], ignore_if_not_exists: bool = False) -> TagDeletion:
        """Delete tags (a name, a list, or comma-separated names) and the files only they kept alive."""
        return tagging.delete_tags(self, name, ignore_if_not_exists)

    def list_tags(self) -> list[str]:
        """Tag names, sorted."""
        return TagManager.of(self.store).names()

    def tags(self) -> list[Tag]:
        """Every tag (with its snapshot, create time and retention), by name."""
        return TagManager.of(self.store).all()

    def tag_snapshot(self, name: str) -> Snapshot:
        """The snapshot of tag ``name`` (TagNotExistError, a SnapshotNotExistError, if there is none)."""
        return TagManager.of(self.store).get_or_raise(name).snapshot

    # ---- branches -----------------------------------------------------------------------------------------------
    @property
    def branch(self) -> str:
        """The branch this table object reads and writes (``main``: the table directory)."""
        return branch_of(self.path)

    def branch_table(self, name: str) -> Table:
        """Branch ``name`` as a table (``main``: the table itself), ``db.t$branch_<name>``; TableNotExistError if
        there is no such branch."""
        path = BranchManager.of(self.store).branch_path(name)
        schema = latest_schema(self.file_io, path)
        if schema is None:
            raise TableNotExistError(f"branch {name!r} of table {base_identifier(self.identifier)} does not exist "
                                     f"({table_root(self.path)})")
        hooks = self.hooks if path == self.path else self.hooks.for_branch()
        return type(self)(self.file_io, path, branch_identifier(self.identifier, name), schema, hooks=hooks)

    @mutating(Op.MAINTAIN)
    def create_branch(self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False) -> Table:
        """Create branch ``name`` (Paimon's ``create_branch``): empty (this line's schemas, no snapshot) or from
        ``tag`` of this line (its tag, snapshot and schemas); returns the branch's table. Paimon 1.x creates
        branches from tags only: tag a snapshot first to branch from it."""
        BranchManager.of(self.store).create(name, tag, ignore_if_exists=ignore_if_exists)
        return self.branch_table(name)

    @mutating(Op.MAINTAIN)
    def delete_branch(self, name: str, *, ignore_if_missing: bool = False) -> bool:
        """Delete branch ``name`` (its directory; data files only it used are left for orphan cleaning)."""
        return BranchManager.of(self.store).delete(name, ignore_if_missing=ignore_if_missing)

    @mutating(Op.MAINTAIN)
    def rename_branch(self, name: str, new_name: str) -> None:
        """Rename branch ``name`` (Paimon 1.1+)."""
        BranchManager.of(self.store).rename(name, new_name)

    @mutating(Op.MAINTAIN)
    def fast_forward(self, name: str) -> int:
        """Make this line (main, usually) branch ``name``: this line's snapshots, tags and schemas from the branch's
        earliest snapshot on are replaced by the branch's (Paimon's ``fast_forward``; a writer committing to this
        line meanwhile may lose its commit). Returns the latest snapshot id afterwards."""
        latest = BranchManager.of(self.store).fast_forward(name)
        self.refresh()
        return latest

    def list_branches(self) -> list[str]:
        """Branch names (not ``main``), sorted."""
        return BranchManager.of(self.store).names()

    def branches(self) -> list[BranchInfo]:
        """Every branch with its creation time, by name (the rows of ``$branches``)."""
        return BranchManager.of(self.store).infos()

    # ---- maintenance --------------------------------------------------------------------------------------------
    @mutating(Op.MAINTAIN)
    def expire_snapshots(self, /, **overrides: Any) -> ExpireResult:
        """Expire snapshots (then decoupled changelogs) by the table options; ``overrides``: retain_min,
        retain_max, time_retained (ms or '1 h'), older_than_millis, max_deletes, changelog_retain_min/max,
        changelog_time_retained."""
        return expire_snapshots(self.store, ExpireConfig.from_options(self.options, overrides))

    @mutating(Op.MAINTAIN)
    def rollback_to(self, version: int | str) -> RollbackResult:
        """Roll back to a snapshot id (int) or a tag (str): newer snapshots and tags and their files are removed."""
        if isinstance(version, bool) or not isinstance(version, (int, str)):
            raise TableEngineError(f"rollback needs a snapshot id or a tag name, got {version!r}")
        return rollback_to(self.store, snapshot_id=version) if isinstance(version, int) \
            else rollback_to(self.store, tag=version)

    @property
    def maintenance(self) -> TableMaintenance:
        """Paimon's maintenance procedures on this table (:class:`TableMaintenance`)."""
        return TableMaintenance(self)
