"""The ``clone`` command against catalogs: which tables, where they go, and the refusals a target catalog needs
before :func:`table_engine.table.clone.clone_table` copies each one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from table_engine.catalog import Catalog, create_catalog
from table_engine.catalog.metastore_catalog import MetastoreCatalog
from table_engine.errors import TableNotExistError, UnsupportedError
from table_engine.format.schema_file import latest_schema
from table_engine.ops.compact_database import matching_tables
from table_engine.ops.table_commands import Clone
from table_engine.table import Table
from table_engine.table.clone import CloneResult, clone_table

log = logging.getLogger(__name__)

__all__ = ["clone", "clone_pairs"]


def clone_pairs(cmd: Clone, source: Catalog) -> list[tuple[str, str]]:
    """(source, target) full names: the one table, or the matching tables of the database (sorted)."""
    if "." in cmd.table:
        return [(cmd.table, cmd.target_table or cmd.table)]
    names = matching_tables(source, cmd.table, cmd.including_tables, cmd.excluding_tables)
    if not names:
        raise TableNotExistError(f"{cmd.name}: database {cmd.table!r} has no table to clone in {source.describe()}")
    target_db = cmd.target_table or cmd.table
    return [(n, f"{target_db}.{n.split('.', 1)[1]}") for n in names]


def _check_target(cmd: Clone, target: Catalog) -> None:
    if not isinstance(target, MetastoreCatalog) and type(target) is not Catalog:
        raise UnsupportedError(f"{cmd.name}: the target catalog ({target.describe()}) owns its tables' schemas and "
                               "commits (a REST catalog); clone writes a filesystem, JDBC or Hive catalog's warehouse")


def _opener(target: Catalog, name: str, path: str) -> Callable[[bool], Table]:
    """Opens the target table; when the run copied schemas (``True``), a metastore catalog registers the table, or
    its newer schema, first (its ``register_table`` / ``alter_table``, as a create or a schema change does)."""
    def open_target(copied: bool) -> Table:
        if copied and isinstance(target, MetastoreCatalog):
            db, table = name.split(".", 1)
            schema = latest_schema(target.file_io, path)
            if schema is not None and not target.metastore.table_exists(db, table):
                target.metastore.register_table(db, table, path, schema)
            elif schema is not None:
                target.metastore.alter_table(db, table, path, schema)
        return target.get_table(name)
    return open_target


def clone(cmd: Clone, source: Catalog) -> dict[str, Any]:
    """Run ``cmd``: every source table checked to exist before the first is copied; tables cloned one after the
    other (each its own snapshot in the target)."""
    pairs = clone_pairs(cmd, source)
    tables = [source.get_table(s) for s, _ in pairs]  # TableNotExistError before anything is written
    with create_catalog(cmd.target_warehouse, dict(cmd.target_catalog_options)) as target:
        _check_target(cmd, target)
        results: list[CloneResult] = []
        for table, (_, name) in zip(tables, pairs, strict=True):
            db = name.split(".", 1)[0]
            path = target.table_path(name)
            if not target.database_exists(db):
                target.create_database(db, ignore_if_exists=True)
            results.append(clone_table(table, target.file_io, path, name, _opener(target, name, path),
                                       snapshot_id=cmd.snapshot, tag=cmd.tag))
    return {"tables": [asdict(r) for r in results],
            "files_copied": sum(r.files_copied for r in results),
            "bytes_copied": sum(r.bytes_copied for r in results),
            "snapshot_id": results[0].snapshot_id if len(results) == 1 else None}
