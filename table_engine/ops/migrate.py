"""The ``migrate-table`` command against a catalog: the target table's creation (and its drop on failure), a
format table as the source, Paimon's replacement of the source table by the migrated one, and a retry that finds
its own table; the files move in :func:`table_engine.table.migrate.migrate_directory`."""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

import pyarrow as pa

from table_engine.catalog import Catalog
from table_engine.errors import OptionError, TableAlreadyExistError, TableNotExistError, UnsupportedError
from table_engine.ops.facts import commit_facts
from table_engine.ops.table_commands import MigrateDatabase, MigrateTable
from table_engine.table import Table
from table_engine.table.migrate import MIGRATE_FORMATS, MigrateResult, migrate_directory

log = logging.getLogger(__name__)

__all__ = ["HIVE_DEFAULT_PARTITION", "PAIMON_SUFFIX", "migrate_database", "migrate_table"]

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The directory name of a null partition value in a Hive-style directory (Hive's
``hive.exec.default.partition.name``, which Paimon's ``HiveMigrator`` sets as the new table's
``partition.default-name``)."""

PAIMON_SUFFIX = "_paimon"
"""Paimon's ``Migrator.PAIMON_SUFFIX``: the name the new table has until it replaces its source."""


def _finished_by(catalog: Catalog, name: str, commit_user: str | None) -> Table | None:
    """The Paimon table ``name`` when an earlier try of this command made it (its snapshot 1 is ``commit_user``'s);
    None when there is no Paimon table of that name; a TableAlreadyExistError when someone else's is there."""
    try:
        table = catalog.get_table(name)
    except (UnsupportedError, TableNotExistError):  # none, or a format table (the source of a replacement)
        return None
    first = table.snapshot(1) if table.latest_snapshot_id() is not None else None
    if commit_user is not None and first is not None and first.commit_user == commit_user:
        return table
    raise TableAlreadyExistError(f"migrate-table: table {name} exists already in {catalog.describe()}; migrate "
                                 "creates a new table")


def migrate_table(cmd: MigrateTable, catalog: Catalog) -> dict[str, Any]:
    """Run ``cmd``. With ``--source-table`` equal to ``--table`` the format table is replaced, as Paimon's
    ``migrate_table`` without ``target_table`` does: the files go into ``<table>_paimon``, then the format table is
    dropped and the new table renamed to its name."""
    replace = cmd.source_table is not None and cmd.source_table == cmd.table
    done = _finished_by(catalog, cmd.table, cmd.commit_user)
    if done is not None:
        log.info("%s was migrated by commit user %s already (snapshot 1): nothing to do", cmd.table, cmd.commit_user)
        return {"table": cmd.table, "source": cmd.source or cmd.source_table, "snapshot_id": 1, "already_done": True,
                "commit": commit_facts(done, 1)}
    target = cmd.table + PAIMON_SUFFIX if replace else cmd.table
    if replace and catalog.table_exists(target):
        raise TableAlreadyExistError(f"{cmd.name}: table {target} (where {cmd.table} is migrated before it replaces "
                                     "the format table) exists already")
    catalog.create_database(target.split(".", 1)[0], ignore_if_exists=True)
    fmt, source, file_io = cmd.format, cmd.source, catalog.file_io
    schema, keys = None, None
    default_name = HIVE_DEFAULT_PARTITION
    if cmd.source_table is not None:
        from table_engine.format_table.options import PARTITION_DEFAULT_NAME

        ft = catalog.get_format_table(cmd.source_table)
        fmt = ft.file_format.value
        default_name = ft.options.get(PARTITION_DEFAULT_NAME)
        _check_format_table(cmd, ft.options, fmt)
        source, file_io, schema, keys = ft.location, ft.file_io, ft.schema, ft.partition_keys
    assert source is not None  # the "source" group is required

    def create(table_schema: pa.Schema, partition_keys: Any) -> Table:
        options = {"bucket": "-1", "file.format": fmt, **dict(cmd.options)}
        if partition_keys:  # the name of a null partition value's directory, as the files were laid out
            options.setdefault("partition.default-name", default_name)
        return catalog.create_table(target, table_schema, partition_keys=list(partition_keys), options=options)

    def drop() -> None:
        catalog.drop_table(target, ignore_if_not_exists=True)

    r: MigrateResult = migrate_directory(
        file_io, source, fmt, create, drop, delete_origin=cmd.delete_origin and cmd.source_table is None,
        commit_user=cmd.commit_user, schema=schema, partition_keys=keys)
    if cmd.source_table is not None and (cmd.delete_origin or replace):
        catalog.drop_table(cmd.source_table)  # the registration, and what is left of its directory
    if replace:
        catalog.rename_table(target, cmd.table)
        log.info("format table %s replaced by the Paimon table migrated from its files", cmd.table)
    table = catalog.get_table(cmd.table)
    return {**asdict(r), "table": cmd.table, "commit": commit_facts(table, r.snapshot_id)}


def _check_format_table(cmd: MigrateTable, options: Any, fmt: str) -> None:
    from table_engine.format_table.options import PARTITION_PATH_ONLY_VALUE

    if fmt not in MIGRATE_FORMATS:
        raise OptionError(f"{cmd.name}: format table {cmd.source_table} holds {fmt} files; a Paimon table's data "
                          f"files are {' or '.join(MIGRATE_FORMATS)} here")
    if options.get(PARTITION_PATH_ONLY_VALUE):
        raise OptionError(f"{cmd.name}: format table {cmd.source_table} has 'format-table.partition-path-only-value' "
                          "= true; its directories do not name their partition columns")


def migrate_database(cmd: MigrateDatabase, catalog: Catalog) -> dict[str, Any]:
    """Run ``cmd``: every format table of the database checked, then each replaced by its migration in turn."""
    sources = []
    for name in catalog.list_tables(cmd.table):
        full = f"{cmd.table}.{name}"
        try:
            ft = catalog.get_format_table(full)
        except (TableNotExistError, UnsupportedError):
            continue  # a Paimon table (or another kind): not a format table to migrate
        fmt = ft.file_format.value
        probe = MigrateTable(warehouse=cmd.warehouse, table=full, source_table=full)
        _check_format_table(probe, ft.options, fmt)
        sources.append(full)
    done: dict[str, Any] = {}
    for full in sources:
        one = MigrateTable(warehouse=cmd.warehouse, table=full, source_table=full, options=cmd.options,
                           commit_user=cmd.commit_user, catalog_options=cmd.catalog_options)
        r = migrate_table(one, catalog)
        done[full] = {k: r.get(k) for k in ("snapshot_id", "files", "rows", "bytes", "partitions")}
    if not sources:
        log.info("database %s has no format table to migrate", cmd.table)
    return {"database": cmd.table, "migrated": done}
