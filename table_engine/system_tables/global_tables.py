"""The global system tables of the ``sys`` database (Paimon's ``SystemTableLoader.loadGlobal``): tables about the
catalog rather than one table. Only ``sys.catalog_options`` here: the catalog's options as ``key`` / ``value`` rows
(Paimon's ``CatalogOptionsTable``), a secret's value shown as ``******``. The catalog builds it
(:meth:`table_engine.catalog.Catalog.get_table`); it is read-only like every system table."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from table_engine.format.schema_file import new_schema
from table_engine.io.file_io import FileIO
from table_engine.system_tables.rows import BuiltRows
from table_engine.table import Table
from table_engine.types import fields_from_arrow_schema

SYSTEM_DATABASE = "sys"
"""Paimon's ``Catalog.SYSTEM_DATABASE_NAME``: the database of the global system tables; no catalog may create it."""

CATALOG_OPTIONS_SCHEMA = pa.schema([pa.field("key", pa.string(), nullable=False),
                                    pa.field("value", pa.string(), nullable=False)])
GLOBAL_SYSTEM_TABLES = ("catalog_options",)


class CatalogOptionsTable(BuiltRows):
    """``sys.catalog_options``: one row per catalog option, sorted by key (a :class:`TableSource`)."""

    name = "catalog_options"

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)

    def arrow_schema(self, table: Table) -> pa.Schema:
        return CATALOG_OPTIONS_SCHEMA

    def rows(self, table: Table, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> pa.Table:
        keys = sorted(self.options)
        return pa.table({"key": keys, "value": [self.options[k] for k in keys]}, schema=CATALOG_OPTIONS_SCHEMA)


def catalog_options_table(file_io: FileIO, warehouse: str, options: Mapping[str, str]) -> Table:
    """``sys.catalog_options`` of the catalog of ``warehouse`` whose options (secrets already hidden) are
    ``options``; ``warehouse`` is one of its rows, as in Paimon."""
    fields, highest = fields_from_arrow_schema(CATALOG_OPTIONS_SCHEMA)
    schema = new_schema(0, fields, [], [], {}, None, highest)
    path = f"{warehouse}/{SYSTEM_DATABASE}.db/catalog_options"  # nothing is stored there: the rows are the options
    return Table(file_io, path, f"{SYSTEM_DATABASE}.catalog_options", schema,
                 source=CatalogOptionsTable({**options, "warehouse": warehouse}))
