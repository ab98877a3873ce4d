"""The branch surface of a table: create (empty or from a tag), delete, rename, fast-forward and list branches, and
open a branch as a :class:`~table_engine.table.Table` (``db.t$branch_<name>``) that reads, writes, commits,
compacts, tags, expires and consumes on that branch (:mod:`table_engine.store.branches`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from table_engine.errors import TableNotExistError
from table_engine.features import Op
from table_engine.format.schema_file import latest_schema
from table_engine.io.paths import MAIN_BRANCH, branch_of, table_root
from table_engine.store.branches import BranchInfo, BranchManager
from table_engine.table.base import TableBase, mutating

if TYPE_CHECKING:
    from table_engine.table import Table

BRANCH_INFIX = "$branch_"
"""Paimon's ``Identifier`` spelling of a branch: ``db.t$branch_<name>`` (system tables of it: ``...$snapshots``)."""


def base_identifier(identifier: str) -> str:
    """``db.t`` of ``db.t$branch_b1``, ``db.t$ro``, ``db.t$branch_b1$snapshots``..."""
    return identifier.split("$", 1)[0]


def branch_identifier(identifier: str, branch: str) -> str:
    """``db.t$branch_<branch>`` (``db.t`` for the main branch)."""
    base = base_identifier(identifier)
    return base if branch == MAIN_BRANCH else f"{base}{BRANCH_INFIX}{branch}"


class BranchSurface(TableBase):
    """Branches of the table; this object's own line is :attr:`branch` (``main`` for the table itself)."""

    @property
    def branch(self) -> str:
        """The branch this table object reads and writes (``main``: the table directory)."""
        return branch_of(self.path)

    @mutating(Op.MAINTAIN)
    def branch_manager(self) -> BranchManager:
        """The branch manager, seen from this line (tags resolved here; :meth:`fast_forward` moves this line)."""
        return self._branch_manager()

    def _branch_manager(self) -> BranchManager:
        return BranchManager(self.file_io, self.path)

    def list_branches(self) -> list[str]:
        """Branch names (not ``main``), sorted."""
        return self._branch_manager().names()

    def branches(self) -> list[BranchInfo]:
        """Every branch with its creation time, by name (the rows of ``$branches``)."""
        return self._branch_manager().infos()

    @mutating(Op.MAINTAIN)
    def create_branch(self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False) -> Table:
        """Create branch ``name`` (Paimon's ``create_branch``): empty (this line's schemas, no snapshot) or from
        ``tag`` of this line (its tag, snapshot and schemas); returns the branch's table. Paimon 1.x creates
        branches from tags only: tag a snapshot first to branch from it."""
        self.branch_manager().create(name, tag, ignore_if_exists=ignore_if_exists)
        return self.branch_table(name)

    @mutating(Op.MAINTAIN)
    def delete_branch(self, name: str, *, ignore_if_missing: bool = False) -> bool:
        """Delete branch ``name`` (its directory; data files only it used are left for orphan cleaning)."""
        return self.branch_manager().delete(name, ignore_if_missing=ignore_if_missing)

    @mutating(Op.MAINTAIN)
    def rename_branch(self, name: str, new_name: str) -> None:
        """Rename branch ``name`` (Paimon 1.1+)."""
        self.branch_manager().rename(name, new_name)

    @mutating(Op.MAINTAIN)
    def fast_forward(self, name: str) -> int:
        """Make this line (main, usually) branch ``name``: this line's snapshots, tags and schemas from the branch's
        earliest snapshot on are replaced by the branch's (Paimon's ``fast_forward``; a writer committing to this
        line meanwhile may lose its commit). Returns the latest snapshot id afterwards."""
        latest = self.branch_manager().fast_forward(name)
        self.refresh()
        return latest

    def branch_table(self, name: str) -> Table:
        """Branch ``name`` as a table (``main``: the table itself), ``db.t$branch_<name>``; TableNotExistError if
        there is no such branch."""
        path = self._branch_manager().branch_path(name)
        schema = latest_schema(self.file_io, path)
        if schema is None:
            raise TableNotExistError(f"branch {name!r} of table {base_identifier(self.identifier)} does not exist "
                                     f"({table_root(self.path)})")
        return cast("Table", type(self)(self.file_io, path, branch_identifier(self.identifier, name), schema))
