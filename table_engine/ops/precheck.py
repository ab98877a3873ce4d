"""The cheap checks of a command against its table, made before any job starts: the table exists (unless a write
creates it; then its table options are valid) and the command's partitions name the table's partition columns,
with the very error the job would raise (so the provider fails a task before spark-submit with the worker route's
one-line error)."""

from __future__ import annotations

from table_engine.catalog import Catalog
from table_engine.core_options import validate_options
from table_engine.ops.base import Command
from table_engine.ops.commands import CompactDatabase, Write
from table_engine.store.partition_spec import partition_specs

__all__ = ["precheck"]


def precheck(cmd: Command, catalog: Catalog) -> None:
    """Raise the engine's error (a :class:`~table_engine.errors.TableEngineError`) for a command that cannot run on
    its table: an unknown table (a write without ``create_if_missing``, or any other command), a bad table option of
    a write that creates its table, or a partition naming a column that is not a partition column or a value that
    does not parse. Reads the table's schema only."""
    if isinstance(cmd, Write) and cmd.create_if_missing:
        if cmd.options and not catalog.table_exists(cmd.table):
            validate_options({str(k): str(v) for k, v in cmd.options.items()})  # what creating the table checks
        return
    if isinstance(cmd, CompactDatabase):  # its "table" is a database: it exists, the patterns compile
        from table_engine.ops.compact_database import matching_tables

        matching_tables(catalog, cmd.table, cmd.including_tables, cmd.excluding_tables)
        return
    table = catalog.get_table(cmd.table)
    partitions = getattr(cmd, "partitions", None)
    if partitions:
        partition_specs(list(partitions), table.schema.partition_fields(), table.options.partition_default_name(),
                        table.path)
