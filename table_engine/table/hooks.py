"""What a catalog adds to the tables it opens: the lock around each snapshot commit, word of each schema it
commits, and (``metastore.partitioned-table``) word of the partitions commits add and drops remove. A filesystem
catalog's tables have none (:data:`NO_HOOKS`); a metastore catalog's have them
(:class:`~table_engine.catalog.metastore_catalog.MetastoreCatalog`, ADR 0044)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from table_engine.errors import UnsupportedError
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import Snapshot
from table_engine.store.context import PartitionsCallback
from table_engine.store.pins import CommitLock, PartitionDelta, SnapshotCommit


@dataclass(frozen=True)
class TableHooks:
    """A catalog's hooks on one table.

    :param commit_lock: held around the conditional create of each snapshot (``lock.enabled``); None: no lock.
    :param schema_committed: called with each schema :meth:`Table.alter <table_engine.table.Table.alter>` commits
        to the table's main branch, after it is committed (the metastore's ``alter_table``).
    :param partitions_added: called with the partitions (``{key: value}``) each snapshot committed to the main
        branch adds files to, once it is published (the metastore's ``add_partitions``).
    :param partitions_dropped: called with the partitions a partition drop or partition expiry on the main branch
        removed, once its snapshot is published (the metastore's ``drop_partitions``).
    :param snapshot_commit: commits each snapshot of the main branch in place of the conditional create of
        ``snapshot-<id>`` (a REST catalog's commit endpoint, Paimon's ``CatalogSnapshotCommit``); None: the create.
    """

    commit_lock: CommitLock | None = None
    schema_committed: Callable[[TableSchema], None] | None = None
    partitions_added: PartitionsCallback | None = None
    partitions_dropped: PartitionsCallback | None = None
    snapshot_commit: SnapshotCommit | None = None
    shipped_copy: bool = False
    """True for the hooks of a copy sent to another process (:meth:`shipped`): whoever commits there must reopen
    the table through its catalog."""

    def for_branch(self) -> TableHooks:
        """The hooks of a branch of the table: the same lock (Paimon's lock is the table's), no schema or partition
        hooks (a metastore registers the main branch's schema and partitions only)."""
        return TableHooks(commit_lock=self.commit_lock)

    def shipped(self) -> TableHooks:
        """The hooks of a copy of the table sent to another process (a Spark task: the catalog's client does not
        pickle). Tasks write files and the driver commits them through its own table; should a copy commit, each
        hook the table had refuses (one error) rather than commit without the catalog's lock or registrations."""
        return TableHooks(
            commit_lock=_refuse_lock if self.commit_lock is not None else None,
            schema_committed=_refuse_schema if self.schema_committed is not None else None,
            partitions_added=_refuse_partitions if self.partitions_added is not None else None,
            partitions_dropped=_refuse_partitions if self.partitions_dropped is not None else None,
            snapshot_commit=_refuse_snapshot if self.snapshot_commit is not None else None,
            shipped_copy=True,
        )


NO_HOOKS = TableHooks()

_SHIPPED = ("a copy of a metastore catalog's table sent to another process has no catalog: commit through the table "
            "the catalog opened (on the Spark driver)")


def _refuse_lock() -> AbstractContextManager[None]:
    raise UnsupportedError(_SHIPPED)


def _refuse_schema(schema: TableSchema) -> None:
    raise UnsupportedError(_SHIPPED)


def _refuse_partitions(partitions: Sequence[Mapping[str, str]]) -> None:
    raise UnsupportedError(_SHIPPED)


def _refuse_snapshot(snapshot: Snapshot, base: Snapshot | None, statistics: Sequence[PartitionDelta]) -> bool:
    raise UnsupportedError(_SHIPPED)
