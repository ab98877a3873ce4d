"""The cheap checks of a command against its table, made before any job starts: the table exists (unless a write
creates it; then its table options are valid), the command's partitions name the table's partition columns, and
the snapshot or tag it starts from exists (a rollback's target, the snapshot a new tag names, the tag a new branch
is made from), with the very error the job would raise (so the provider fails a task before spark-submit with the
worker route's one-line error)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from table_engine.catalog import Catalog
from table_engine.core_options import validate_options
from table_engine.errors import SnapshotNotExistError
from table_engine.ops.base import Command
from table_engine.ops.commands import (
    CompactDatabase,
    CreateBranch,
    CreateTag,
    Rollback,
    Write,
)
from table_engine.ops.table_commands import Clone, MigrateDatabase, MigrateTable
from table_engine.store.partition_spec import partition_specs

if TYPE_CHECKING:
    from table_engine.table import Table

__all__ = ["precheck"]


def precheck(cmd: Command, catalog: Catalog) -> None:
    """Raise the engine's error (a :class:`~table_engine.errors.TableEngineError`) for a command that cannot run on
    its table: an unknown table (a write without ``create_if_missing``, or any other command), a bad table option of
    a write that creates its table, or a partition naming a column that is not a partition column or a value that
    does not parse; a missing snapshot or tag to start from. Reads the table's schema (and that snapshot or tag
    file) only."""
    if isinstance(cmd, Write) and cmd.create_if_missing:
        if cmd.options and not catalog.table_exists(cmd.table):
            validate_options({str(k): str(v) for k, v in cmd.options.items()})  # what creating the table checks
        return
    if isinstance(cmd, CompactDatabase):  # its "table" is a database: it exists, the patterns compile
        from table_engine.ops.compact_database import matching_tables

        matching_tables(catalog, cmd.table, cmd.including_tables, cmd.excluding_tables)
        return
    if isinstance(cmd, (MigrateTable, MigrateDatabase)):  # create their tables: the job judges the sources
        return
    if isinstance(cmd, Clone):  # every source table exists (its "table" may be a database)
        from table_engine.ops.clone import clone_pairs

        for source, _ in clone_pairs(cmd, catalog):
            catalog.get_table(source)
        return
    table = catalog.get_table(cmd.table)
    partitions = getattr(cmd, "partitions", None)
    if partitions:
        partition_specs(list(partitions), table.schema.partition_fields(), table.options.partition_default_name(),
                        table.path)
    _check_start(cmd, table)


def _check_start(cmd: Command, table: Table) -> None:
    """The snapshot or tag ``cmd`` starts from exists (what the job reads first, with the job's error). A retry
    whose earlier try succeeded is not refused: a new tag or branch that exists already is the job's to judge."""
    if isinstance(cmd, Rollback):
        if cmd.tag is not None:
            table.tag_snapshot(cmd.tag)
        elif cmd.snapshot is not None and not _tag_holds(table, cmd.snapshot):
            table.snapshot(cmd.snapshot)
    elif isinstance(cmd, CreateTag) and cmd.snapshot is not None:
        if cmd.tag not in {t.name for t in table.tags()} and not _tag_holds(table, cmd.snapshot):
            table.snapshot(cmd.snapshot)
    elif isinstance(cmd, CreateBranch) and cmd.tag is not None and cmd.branch not in table.list_branches():
        table.tag_snapshot(cmd.tag)


def _tag_holds(table: Table, snapshot_id: int) -> bool:
    """Whether ``snapshot_id`` exists, or only a tag holds it now (an expired snapshot a rollback may go back to)."""
    try:
        table.snapshot(snapshot_id)
        return True
    except SnapshotNotExistError:
        return any(t.snapshot.id == snapshot_id for t in table.tags())
