"""The commands that make, change, copy or adopt a table as a whole: ``alter-table`` (Paimon's ALTER TABLE),
``clone`` (Paimon's clone procedure) and ``migrate-table`` / ``migrate-database`` (Paimon's migrate procedures).

Their runners are registered in :mod:`table_engine.ops.run_tables`. No pyarrow at import (see
:mod:`table_engine.ops.base`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from table_engine.errors import CommandError
from table_engine.ops.base import Command, arg, command
from table_engine.ops.commands import CommittingCommand

__all__ = ["AlterTable", "Clone", "MigrateDatabase", "MigrateTable"]


@command("alter-table", help="change a table's schema: add, rename, drop and move columns, widen types, comments, "
         "nullability and options, all in one new schema (Paimon's ALTER TABLE)")
@dataclass(frozen=True, kw_only=True)
class AlterTable(Command):
    """Paimon's ``ALTER TABLE``: ``changes`` applied in order to the latest schema and committed as one new schema
    (all or none). Each change is an object with an ``action``: ``add-column`` (``name``, ``type`` a Paimon SQL
    type such as ``BIGINT`` or ``DECIMAL(10, 2)``, ``comment``, a position), ``rename-column`` (``name``,
    ``new_name``), ``drop-column`` (``name``), ``update-column-type`` (``name``, ``type``: widening only),
    ``move-column`` (``name`` and a position), ``update-column-comment`` (``name``, ``comment``; null clears it),
    ``update-column-nullability`` (``name``, ``nullable``: true only, not a primary key), ``update-comment``
    (``comment``: the table's), ``set-option`` (``key``, ``value``) and ``remove-option`` (``key``). A position is
    ``"first": true``, ``"last": true``, ``"after": "<column>"`` or ``"before": "<column>"``. A change that does not
    apply (an unknown column, a narrowing type, a key column dropped) fails the command and leaves the schema as it
    was. The result line holds the new ``schema_id`` and its ``fields``."""

    changes: tuple[dict[str, Any], ...] = arg(
        "the changes: a JSON array of change objects, e.g. '[{\"action\": \"add-column\", \"name\": \"c\", "
        "\"type\": \"BIGINT\", \"after\": \"b\"}]' (docs/schema-evolution.md)", kind="json", required=True,
        metavar="JSON")

    def __post_init__(self) -> None:
        super().__post_init__()
        from table_engine.errors import SchemaError
        from table_engine.ops.alter import parse_changes

        try:
            parse_changes(self.changes)
        except (CommandError, SchemaError) as e:
            raise type(e)(f"{self.name}: --changes {e}") from None


@command("clone", groups={"version": False},
         help="copy a table (or every table of a database) and the files of one snapshot to another warehouse "
              "(Paimon's clone procedure); a re-run copies only the files the copy lacks")
@dataclass(frozen=True, kw_only=True)
class Clone(CommittingCommand):
    """Paimon's ``clone`` (``target_warehouse``, ``target_database`` / ``target_table``, ``target_catalog_conf``):
    the source's schemas and the data files of its latest snapshot (or ``snapshot`` / ``tag``) are copied to the
    target, then one snapshot commits them there, so a reader of the copy never sees it half-copied. A re-run copies
    only the data files the copy lacks (same name and size) and commits the source's newer snapshot; a target table
    holding data a clone did not write is refused, as are external data paths and row tracking (ADR 0051)."""

    table: str = arg("database.table to clone, or a database name: every table of it", required=True)
    target_warehouse: str = arg("warehouse path or URI of the copy", required=True)
    target_table: str | None = arg("database.table of the copy; a database name when --table is a database "
                                   "(default: the source's names)")
    target_catalog_options: Mapping[str, str] = arg("catalog option of the target warehouse, e.g. s3.endpoint=... "
                                                    "(repeatable)", flag="--target-catalog-option", kind="key_value",
                                                    metavar="K=V")
    snapshot: int | None = arg("clone this snapshot (default: the latest)", kind="count", group="version")
    tag: str | None = arg("clone the snapshot of this tag", group="version")
    including_tables: str | None = arg("database clone: regular expression of the full names (db.t) to clone "
                                       "(default: all)")
    excluding_tables: str | None = arg("database clone: regular expression of the full names (db.t) not to clone")

    def __post_init__(self) -> None:
        super().__post_init__()
        from table_engine.ops.compact_database import table_pattern

        for flag, name in (("--table", self.table), ("--target-table", self.target_table)):
            if name is not None and "$" in name:
                raise CommandError(f"{self.name}: {flag} {name!r} names a branch or system table; clone copies a "
                                   "table's main branch")
        database = "." not in self.table
        target_is_db = self.target_table is not None and "." not in self.target_table
        if database and (self.snapshot is not None or self.tag is not None):
            raise CommandError(f"{self.name}: --snapshot and --tag select a version of one table, not of database "
                               f"{self.table!r}")
        if not database and (self.including_tables or self.excluding_tables):
            raise CommandError(f"{self.name}: --including-tables and --excluding-tables select tables of a "
                               f"database, not of table {self.table!r}")
        if self.target_table is not None and database != target_is_db:
            raise CommandError(f"{self.name}: --target-table {self.target_table!r} must be a "
                               f"{'database name' if database else 'database.table'} when --table "
                               f"{self.table!r} is a {'database' if database else 'table'}")
        table_pattern(self.including_tables, "--including-tables", self.name)
        table_pattern(self.excluding_tables, "--excluding-tables", self.name)


@command("migrate-table", groups={"source": True},
         help="turn a directory of Parquet or ORC files (Hive-style k=v partitions allowed), or such a format table, "
              "into a Paimon append table in place, without copying data (Paimon's migrate_table)")
@dataclass(frozen=True, kw_only=True)
class MigrateTable(CommittingCommand):
    """Paimon's ``migrate_table`` (``source_table``, ``target_table``, ``options``, ``delete_origin``) for a
    directory or a Parquet / ORC format table: every file under ``source`` (the format table's location) is renamed
    into the new append table ``table`` (``bucket`` = -1) and recorded in its first snapshot with stats; ``k=v``
    directories become partition columns (strings; a format table's types). Every file is
    read before anything moves; a failure after the first move renames every file back and drops the new table, so
    the source is left as it was (ADR 0051)."""

    table: str = arg("database.table of the new Paimon table (it must not exist); --source-table's name: the format "
                     "table is replaced (Paimon's default target)", required=True)
    source: str | None = arg("the directory of the files (on this warehouse's file system)", group="source")
    source_table: str | None = arg("a format table (database.table) of this catalog whose files to migrate (Paimon's "
                                   "source_table)", group="source")
    format: str = arg("format of the --source files (a format table has its own)", kind="choice",
                      choices=("parquet", "orc"), default="parquet")
    options: Mapping[str, str] = arg("table option of the new table (repeatable; Paimon's options)", flag="--option",
                                     kind="key_value", metavar="K=V")
    delete_origin: bool = arg("delete the source directory (drop the format table) once the table is committed "
                              "(Paimon's delete_origin)", kind="flag")
    commit_user: str | None = arg("commit user of the first snapshot")

    def __post_init__(self) -> None:
        super().__post_init__()
        bucket = self.options.get("bucket", "-1")
        if bucket.strip() != "-1":
            raise CommandError(f"{self.name}: --option bucket={bucket} - a migrated table is an append table with "
                               "bucket -1 (Paimon's migrator refuses other buckets)")


@command("migrate-database", help="replace every Parquet or ORC format table of a database by a Paimon append "
         "table made in place from its files (Paimon's migrate_database)")
@dataclass(frozen=True, kw_only=True)
class MigrateDatabase(CommittingCommand):
    """Paimon's ``migrate_database`` (``source_database``, ``options``): each Parquet or ORC format table of the
    database is migrated as ``migrate-table --source-table t --table t`` does (its files renamed into
    ``t_paimon``, the format table dropped, the new table renamed ``t``), one table after the other. Every format
    table is checked first (csv and json format tables refuse the run before anything moves); Paimon tables of the
    database are left as they are. A second run converges."""

    table: str = arg("the database whose format tables are migrated", required=True, flag="--database",
                     metavar="DATABASE")
    options: Mapping[str, str] = arg("table option of each new table (repeatable; Paimon's options)", flag="--option",
                                     kind="key_value", metavar="K=V")
    commit_user: str | None = arg("commit user of the tables' first snapshots")

    def __post_init__(self) -> None:
        super().__post_init__()
        if "." in self.table:
            raise CommandError(f"{self.name}: --database {self.table!r} must be a database name, not db.table")
        bucket = self.options.get("bucket", "-1")
        if bucket.strip() != "-1":
            raise CommandError(f"{self.name}: --option bucket={bucket} - a migrated table is an append table with "
                               "bucket -1 (Paimon's migrator refuses other buckets)")
