"""The local runners of the row-level commands (``delete``, ``update``, ``merge-into``): the engine's
:class:`~table_engine.table.row_level.RowLevel` on the table, the result line with the counts and the commit's facts.
The Spark jobs (:mod:`table_engine.spark.jobs.change_job`) make the same calls on the driver."""

from __future__ import annotations

import logging
from typing import Any

import pyarrow as pa

from table_engine.catalog import Catalog
from table_engine.core_options import default_commit_user
from table_engine.errors import CommandError
from table_engine.ops.base import registers
from table_engine.ops.change_commands import Delete, MergeInto, Update
from table_engine.ops.commands import snapshot_properties_of
from table_engine.ops.facts import write_facts
from table_engine.ops.run import previous_commit, source_dataset
from table_engine.table import Table
from table_engine.table.row_level import ChangeResult

__all__ = ["already_done", "change_result", "merge_source", "run_delete", "run_merge_into", "run_update"]

log = logging.getLogger("table_engine.cli")


def change_result(table: Table, result: ChangeResult, skipped: bool = False) -> dict[str, Any]:
    """The result line of a row-level command: the snapshot, the counts, the commit's facts (of its data commit,
    when a primary-key write compacted after it)."""
    return {**result.as_dict(), "already_committed": skipped, "commit": write_facts(table, result.snapshot_id)}


def already_done(cmd: Delete | Update | MergeInto, table: Table) -> dict[str, Any] | None:
    """The result of an earlier run with the same ``--commit-user`` that committed (a retry does nothing)."""
    if not cmd.commit_user:
        return None
    sid = previous_commit(table, default_commit_user(table.options, cmd.commit_user))
    if sid is None:
        return None
    log.info("%s: commit user %s committed snapshot %d already; nothing to do", table.identifier, cmd.commit_user,
             sid)
    return change_result(table, ChangeResult(sid), skipped=True)


@registers("local", Delete)
def run_delete(cmd: Delete, catalog: Catalog) -> dict[str, Any]:
    """``delete``: the table's rows ``--where`` selects deleted."""
    table = catalog.get_table(cmd.table)
    done = already_done(cmd, table)
    if done is not None:
        return done
    result = table.row_level.delete(_where(cmd.where), properties=snapshot_properties_of(cmd) or None,
                                    commit_user=cmd.commit_user)
    log.info("%s: deleted %d rows (snapshot %s)", table.identifier, result.deleted, result.snapshot_id)
    return change_result(table, result)


@registers("local", Update)
def run_update(cmd: Update, catalog: Catalog) -> dict[str, Any]:
    """``update``: ``--set`` on the rows ``--where`` selects."""
    table = catalog.get_table(cmd.table)
    done = already_done(cmd, table)
    if done is not None:
        return done
    result = table.row_level.update(dict(cmd.set_values), _where(cmd.where or ()),
                                    properties=snapshot_properties_of(cmd) or None, commit_user=cmd.commit_user)
    log.info("%s: updated %d rows (snapshot %s)", table.identifier, result.updated, result.snapshot_id)
    return change_result(table, result)


@registers("local", MergeInto)
def run_merge_into(cmd: MergeInto, catalog: Catalog) -> dict[str, Any]:
    """``merge-into`` of ``--source`` files or ``--source-table``'s latest rows."""
    if cmd.sql:
        raise CommandError("merge-into --sql needs Spark: run spark-submit table_engine/spark/app.py merge-into ...")
    table = catalog.get_table(cmd.table)
    done = already_done(cmd, table)
    if done is not None:
        return done
    return merge_source(cmd, table, source_dataset(cmd).to_table() if cmd.source else
                        catalog.get_table(str(cmd.source_table)).read())


def merge_source(cmd: MergeInto, table: Table, source: pa.Table) -> dict[str, Any]:
    """``merge-into`` of ``source`` (read by the caller, once :func:`already_done` said None) into ``table``."""
    log.info("%s: merging %d source rows", table.identifier, source.num_rows)
    result = table.row_level.merge(source, cmd.spec(), properties=snapshot_properties_of(cmd) or None,
                                   commit_user=cmd.commit_user)
    log.info("%s: merge updated %d, deleted %d, inserted %d rows (snapshot %s)", table.identifier, result.updated,
             result.deleted, result.inserted, result.snapshot_id)
    return change_result(table, result)


def _where(where: Any) -> list[Any]:
    return [tuple(c) if isinstance(c, list) else c for c in where]
