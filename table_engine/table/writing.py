"""The write surface of a table: one-call :meth:`write`, the two phases :meth:`new_write` / :meth:`new_commit`
(:meth:`commit` for messages from writer tasks), and commit-time maintenance after a commit."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from table_engine.core_options import COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT, CommitUser, default_commit_user
from table_engine.errors import CommitConflictError, CommitOutcomeUnknownError, SchemaError, TableEngineError
from table_engine.features import Op
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, snapshot_properties
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.writing.write import TableWrite
from table_engine.table.base import TableBase, mutating

if TYPE_CHECKING:
    pass

log = logging.getLogger("table_engine.table")

RowKinds: TypeAlias = Sequence[str] | pa.Array | None

_WRITE_ATTEMPTS = 5
"""How often :meth:`WriteSurface.write` plans a write again when its compaction's input changed under it."""


class WriteSurface(TableBase):
    """Writes and commits; every method here is :func:`mutating`."""

    commit_maintenance: bool = False
    """Opt-in: :meth:`write` and :meth:`commit` run Paimon's commit-time maintenance after a successful commit
    (automatic tags, tag/partition/consumer/snapshot expiry) unless ``write-only``; per call: ``maintain=``."""

    def _after_commit(self, snapshot_id: int | None, commit_identifier: int, maintain: bool | None) -> None:
        if snapshot_id is None or not (self.commit_maintenance if maintain is None else maintain):
            return
        from table_engine.store.lifecycle.maintenance import run_commit_maintenance

        try:
            run_commit_maintenance(self.store, commit_identifier)
        except (TableEngineError, OSError) as e:  # the commit stands; maintenance is retried at the next one
            log.warning("commit-time maintenance of %s after snapshot %s failed: %s", self.identifier, snapshot_id, e)


    @mutating(Op.WRITE)
    def new_write(self) -> TableWrite:
        """A writer task (phase one). Its ``prepare_commit()`` messages go to :meth:`new_commit`."""
        return TableWrite(self.store)

    @mutating(Op.WRITE)
    def new_commit(self, commit_user: str | CommitUser | None = None) -> FileStoreCommit:
        """The committer (phase two) for ``commit_user``: a name, a :class:`~table_engine.core_options.CommitUser`
        (one generated for this job has committed nothing yet, so the exactly-once check reads no history), or by
        default a fresh one (:func:`~table_engine.core_options.default_commit_user`)."""
        return self._committer(commit_user)

    def _committer(self, commit_user: str | CommitUser | None = None) -> FileStoreCommit:
        """:meth:`new_commit` without the gate's check for writes: for maintenance jobs, which passed the gate for
        maintenance (their commits are COMPACT, which the committer checks against the snapshot it commits on)."""
        return FileStoreCommit(self.store, default_commit_user(self.options, commit_user))

    @mutating(Op.WRITE)
    def write(self, data: pa.Table | pa.RecordBatch, row_kinds: RowKinds = None, *, overwrite: bool = False,
              partition: Mapping[str, Any] | None = None, maintain: bool | None = None,
              properties: Mapping[str, str] | None = None) -> int | None:
        """Write ``data`` in one commit and return the new snapshot id (None when nothing was written).

        Row kinds come from ``row_kinds``, else from the ``rowkind.field`` column, else +I. With ``overwrite``
        the commit replaces the partitions present in the data (``dynamic-partition-overwrite``, default true),
        all data (when false or the table is unpartitioned), or the static ``partition`` given.
        ``maintain``: run commit-time maintenance afterwards (default :attr:`commit_maintenance`).
        ``properties``: a string map stored in the new snapshot's ``properties`` (Paimon 1.2), e.g. who wrote it.
        """
        snapshot_properties(properties)  # before anything is written
        if (data_evolution_enabled(self.schema.options) and row_kinds is None and not overwrite and not partition
                and set(data.schema.names) < set(self.schema.field_names())):
            return self._write_columns(data, maintain)
        unknown = sorted(str(k) for k in partition or {} if k not in self.partition_keys)
        if unknown:  # before anything is written
            raise SchemaError(f"overwrite partition {dict(partition or {})}: {unknown} are not partition columns of "
                              f"{self.identifier} (partition columns: {self.partition_keys})")
        ow = None
        if overwrite or partition:
            ow = Overwrite(static_partition=partition, dynamic=self.options.dynamic_partition_overwrite())
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            writer = self.new_write()
            committer = self.new_commit()
            try:
                writer.write(data, row_kinds)
                messages = writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
                sid = committer.commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=ow, properties=properties)
                break
            except CommitOutcomeUnknownError:
                raise  # the snapshot may be published: its data files must stay
            except (CommitConflictError, FileNotFoundError) as e:
                writer.abort(keep=committer.published_files)
                if committer.published_files or attempt == _WRITE_ATTEMPTS or not self._moved_on(writer):
                    raise
                # the writer's compaction read files that a concurrent compaction (and expiry) replaced: plan the
                # write again on the newer snapshot
                log.warning("write to %s planned again (attempt %d): its compaction's input changed under it (%s)",
                            self.identifier, attempt + 1, e)
            except BaseException:
                writer.abort(keep=committer.published_files)
                raise
        sid = self._compact_level0(sid, committer, ow is not None)
        self._after_commit(sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    @mutating(Op.WRITE)
    def update_by_row_id(self, data: pa.Table | pa.RecordBatch, maintain: bool | None = None, *,
                         commit_user: str | None = None, commit_identifier: int = BATCH_COMMIT_IDENTIFIER
                         ) -> int | None:
        """Data evolution (``data-evolution.enabled``): set the columns of ``data`` of the rows its ``_ROW_ID``
        column names, in one commit, as pypaimon's ``update_by_arrow_with_row_id``: each row range touched gets a
        file of only those columns (see :mod:`table_engine.store.writing.data_evolution_write`). The new snapshot id
        (None when ``data`` is empty). ``commit_user`` / ``commit_identifier``: the snapshot's (e.g. a Spark job's,
        see :meth:`commit`)."""
        from table_engine.store.writing.data_evolution_write import update_by_row_id

        base, strict = self._data_evolution_base("update by row id")
        sid = update_by_row_id(strict.store, strict._committer(commit_user), _as_table(data), base, commit_identifier)
        self._after_commit(sid, commit_identifier, maintain)
        return sid

    @mutating(Op.WRITE)
    def upsert_by_key(self, data: pa.Table | pa.RecordBatch, keys: Sequence[str],
                      columns: Sequence[str] | None = None, maintain: bool | None = None, *,
                      commit_user: str | None = None, commit_identifier: int = BATCH_COMMIT_IDENTIFIER
                      ) -> int | None:
        """Data evolution: pypaimon's ``upsert_by_arrow_with_key`` in one commit. Rows of ``data`` whose ``keys``
        (and partition columns) match existing rows set ``columns`` (default: every column of ``data`` but the
        partition columns) of all of those rows, as :meth:`update_by_row_id`; the other rows of ``data`` are
        appended (with the columns of ``data``, as a write of some columns). A key repeated in ``data`` keeps its
        last row; null keys match null keys. The new snapshot id (None when ``data`` is empty). ``commit_user`` /
        ``commit_identifier``: as :meth:`update_by_row_id`."""
        from table_engine.store.reading.row_tracking import ROW_ID
        from table_engine.store.writing.data_evolution_write import upsert_by_key

        base, strict = self._data_evolution_base("upsert by key")
        table = _as_table(data)
        match = list(dict.fromkeys([*keys, *self.partition_keys]))
        unknown = [k for k in match if k not in self.schema.field_names()]
        if unknown:  # before reading
            raise SchemaError(f"upsert by key of table {self.identifier}: unknown key column(s) {unknown}; columns "
                              f"are {self.schema.field_names()}")
        existing = self._read_at(base, [*match, ROW_ID]) if base is not None else \
            pa.table({**{k: pa.nulls(0) for k in match}, ROW_ID: pa.array([], pa.int64())})
        sid = upsert_by_key(strict.store, strict._committer(commit_user), table, list(keys), columns, existing, base,
                            commit_identifier)
        self._after_commit(sid, commit_identifier, maintain)
        return sid

    @mutating(Op.WRITE)
    def delete_by_row_id(self, row_ids: Sequence[int] | pa.Array | pa.ChunkedArray,
                         maintain: bool | None = None) -> int | None:
        """Data evolution with ``deletion-vectors.enabled``: delete the rows ``row_ids`` names in one commit, as
        pypaimon's ``delete_by_row_id`` (positions set in the deletion vector of each row range; no data file
        changes, row ids never reused; see :mod:`table_engine.store.writing.data_evolution_delete`). The new
        snapshot id (None when nothing changes)."""
        from table_engine.store.writing.data_evolution_delete import delete_by_row_id

        base, strict = self._data_evolution_base("delete by row id")
        sid = delete_by_row_id(strict.store, strict._committer(), row_ids, base)
        self._after_commit(sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    @mutating(Op.WRITE)
    def delete_by_predicate(self, filter: Any, maintain: bool | None = None) -> int | None:
        """Data evolution with ``deletion-vectors.enabled``: delete the rows ``filter`` (as :meth:`read`'s, on the
        merged rows) selects, as pypaimon's ``delete_by_predicate``: a :meth:`delete_by_row_id` of their row ids."""
        from table_engine.store.reading.row_tracking import ROW_ID
        from table_engine.store.writing.data_evolution_delete import delete_by_row_id

        base, strict = self._data_evolution_base("delete by predicate")
        if base is None:
            return None
        ids = self._read_at(base, [ROW_ID], filter).column(ROW_ID)
        sid = delete_by_row_id(strict.store, strict._committer(), ids, base)
        self._after_commit(sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    def _read_at(self, base: Snapshot, columns: list[str], filter: Any = None) -> pa.Table:
        from table_engine.table.reading import ReadSurface

        assert isinstance(self, ReadSurface)  # Table is both
        return self.read(columns=columns, filter=filter, snapshot_id=base.id)

    def _data_evolution_base(self, what: str) -> tuple[Snapshot | None, WriteSurface]:
        """The latest snapshot S and this table committing in strict mode from S: a data-evolution write reads S
        (the values of a row range, the rows of a key, the deletion vectors) and must not overwrite a commit of
        another user made after it (e.g. an update of the same rows): that commit fails it instead (retryable)."""
        if not data_evolution_enabled(self.schema.options):
            raise SchemaError(f"{what} needs data-evolution.enabled = true on table {self.identifier}")
        base = self.store.latest_snapshot()
        return base, self.copy({COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key: str(base.id if base is not None else 0)})

    def _write_columns(self, data: pa.Table | pa.RecordBatch, maintain: bool | None) -> int | None:
        """:meth:`write` of rows with only some columns on a data-evolution table (pypaimon's ``with_write_type``)."""
        from table_engine.store.writing.data_evolution_write import insert_columns

        sid = insert_columns(self.store, self._committer(), _as_table(data))
        self._after_commit(sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    @mutating(Op.WRITE)
    def commit(self, messages: Sequence[CommitMessage], commit_user: str | None = None,
               commit_identifier: int = BATCH_COMMIT_IDENTIFIER, overwrite: bool = False,
               partition: Mapping[str, Any] | None = None, maintain: bool | None = None,
               properties: Mapping[str, str] | None = None) -> int | None:
        """Commit messages from writer tasks (e.g. Spark executors) as one snapshot (with snapshot ``properties``,
        see :meth:`write`)."""
        ow = Overwrite(static_partition=partition, dynamic=self.options.dynamic_partition_overwrite()) \
            if (overwrite or partition) else None
        committer = self.new_commit(commit_user)
        sid = committer.commit(messages, commit_identifier, overwrite=ow, properties=properties)
        sid = self._compact_level0(sid, committer, ow is not None)
        self._after_commit(sid, commit_identifier, maintain)
        return sid

    def _moved_on(self, writer: TableWrite) -> bool:
        """Whether the table has a newer snapshot than the one ``writer`` restored from (so a retry may succeed)."""
        latest = self.store.latest_snapshot()
        return latest is not None and latest.id != writer.base_snapshot_id

    def _compact_level0(self, sid: int | None, committer: FileStoreCommit, overwritten: bool) -> int | None:
        """Tables whose batch reads skip level 0: compact what an overwrite or dropped writer compactions left on
        level 0, so the commit is visible (:func:`~table_engine.store.compaction.compact.compact_invisible_level0`)."""
        from table_engine.store.compaction.compact import compact_invisible_level0

        return compact_invisible_level0(self.store, self.new_commit, sid, overwritten, committer.dropped_compactions)


def _as_table(data: pa.Table | pa.RecordBatch) -> pa.Table:
    return pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
