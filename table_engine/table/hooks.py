"""What a catalog adds to the tables it opens: the lock around each snapshot commit, and word of each schema it
commits. A filesystem catalog's tables have neither (:data:`NO_HOOKS`); a metastore catalog's have both
(:class:`~table_engine.catalog.metastore_catalog.MetastoreCatalog`, ADR 0044)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from table_engine.format.schema_file import TableSchema
from table_engine.store.pins import CommitLock


@dataclass(frozen=True)
class TableHooks:
    """A catalog's hooks on one table.

    :param commit_lock: held around the conditional create of each snapshot (``lock.enabled``); None: no lock.
    :param schema_committed: called with each schema :meth:`Table.alter <table_engine.table.Table.alter>` commits
        to the table's main branch, after it is committed (the metastore's ``alter_table``).
    """

    commit_lock: CommitLock | None = None
    schema_committed: Callable[[TableSchema], None] | None = None

    def for_branch(self) -> TableHooks:
        """The hooks of a branch of the table: the same lock (Paimon's lock is the table's), no schema hook (a
        metastore registers the main branch's schema only)."""
        return TableHooks(commit_lock=self.commit_lock)


NO_HOOKS = TableHooks()
