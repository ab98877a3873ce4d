"""How a branch of a table is named: Paimon's ``Identifier`` spelling ``db.t$branch_<name>``. A branch opened with
:meth:`Table.branch_table <table_engine.table.Table.branch_table>` reads, writes, commits, compacts, tags, expires and
consumes on that branch (:mod:`table_engine.store.branches`)."""

from __future__ import annotations

from table_engine.io.paths import MAIN_BRANCH

BRANCH_INFIX = "$branch_"
"""Paimon's ``Identifier`` spelling of a branch: ``db.t$branch_<name>`` (system tables of it: ``...$snapshots``)."""


def base_identifier(identifier: str) -> str:
    """``db.t`` of ``db.t$branch_b1``, ``db.t$ro``, ``db.t$branch_b1$snapshots``..."""
    return identifier.split("$", 1)[0]


def branch_identifier(identifier: str, branch: str) -> str:
    """``db.t$branch_<branch>`` (``db.t`` for the main branch)."""
    base = base_identifier(identifier)
    return base if branch == MAIN_BRANCH else f"{base}{BRANCH_INFIX}{branch}"
