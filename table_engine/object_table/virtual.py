"""Paimon 1.3+'s virtual object table (apache/paimon#5848), as a REST catalog holds it: :class:`VirtualObjectTable`.

In a REST catalog, ``type`` = ``object-table`` means this design to every client (Paimon Java 1.3+, pypaimon 2.1):
the server keeps the definition only, the table's ``path`` is the location of the objects, and every read lists it
into :data:`~table_engine.object_table.schema.VIRTUAL_FIELDS` (``path`` relative to the location, ``name``,
``length``, ``mtime``/``atime`` epoch milliseconds, ``owner``). There is no schema file, no snapshot and no
refresh. The Paimon 1.0-1.2 design (a stored index of ``object-location`` that ``refresh_object_table`` replaces)
stays what the filesystem, JDBC and Hive catalogs create (docs/object-tables.md, ADR 0048).

The table is a read-only :class:`~table_engine.table.Table` whose rows a
:class:`~table_engine.table_source.TableSource` serves, as a system table's: the listing is the engine's
(:func:`~table_engine.object_table.listing.list_objects`, through the table's FileIO, vended credentials included)
in the virtual shape (:func:`~table_engine.object_table.schema.virtual_rows`); ``columns`` and ``filter`` apply as
on system tables. Every change (writes, refresh, alter, tags, branches, maintenance) is refused by name, and so are
time travel and streaming reads: there are no snapshots.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from table_engine.errors import UnsupportedError
from table_engine.format.schema_file import TableSchema
from table_engine.io.file_io import FileIO
from table_engine.object_table.listing import list_objects, qualified_location
from table_engine.object_table.schema import VIRTUAL_ARROW_SCHEMA, VIRTUAL_FIELDS, virtual_rows
from table_engine.store.changes.stream_scan import StreamScan
from table_engine.store.context import StoreContext
from table_engine.system_tables.rows import BuiltRows
from table_engine.table import Table
from table_engine.table.hooks import NO_HOOKS, TableHooks
from table_engine.table_source import TableSource

__all__ = ["VIRTUAL_REFUSAL", "VirtualObjectTable", "virtual_object_schema"]

VIRTUAL_REFUSAL = ("a REST catalog's object table is a virtual listing of its location (Paimon 1.3+): it has no "
                   "snapshots to write or refresh")
"""The reason every change to a :class:`VirtualObjectTable` is refused with."""


def virtual_object_schema(schema: TableSchema) -> TableSchema:
    """``schema`` (the server's: its id, options and comment) with the virtual table's six fields, whatever fields
    the client that created it sent (pypaimon 2.1 sends none)."""
    return TableSchema(id=schema.id, fields=VIRTUAL_FIELDS, highest_field_id=max(f.id for f in VIRTUAL_FIELDS),
                       options=dict(schema.options), comment=schema.comment, time_millis=schema.time_millis)


class _NoStreamScan(StreamScan):
    """A virtual object table has no snapshots to follow (Paimon 1.3+ and pypaimon 2.1 refuse stream reads too)."""

    def __init__(self, ctx: StoreContext, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedError(f"streaming reads of the object table at {ctx.table_path}: {VIRTUAL_REFUSAL}")


class _Listing(BuiltRows):
    """The rows of a :class:`VirtualObjectTable`: its location listed at each read."""

    name = "object_table"
    stream_scan_class = _NoStreamScan

    def arrow_schema(self, table: Table) -> pa.Schema:
        return VIRTUAL_ARROW_SCHEMA

    def rows(self, table: Table, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> pa.Table:
        if snapshot_id is not None or tag is not None or timestamp_millis is not None:
            raise UnsupportedError(f"time travel on table {table.identifier}: {VIRTUAL_REFUSAL}")
        # a location with no object yet (the server does not create the directory) lists no rows, as pypaimon's
        rows = list_objects(table.file_io, table.path, missing_ok=True)
        return virtual_rows(rows, qualified_location(table.path))


class VirtualObjectTable(Table):
    """A REST catalog's object table (Paimon 1.3+): a read-only :class:`Table` at the table's ``path`` (its
    :attr:`location`) whose rows are the listing of that location at read time (see the module)."""

    def __init__(self, file_io: FileIO, path: str, identifier: str, schema: TableSchema, *,
                 source: TableSource | None = None, view: str | None = None, hooks: TableHooks = NO_HOOKS) -> None:
        super().__init__(file_io, path, identifier, virtual_object_schema(schema), source=source or _Listing(),
                         view=view, hooks=hooks)

    def __repr__(self) -> str:
        return f"VirtualObjectTable({self.identifier!r}, location={self.path!r})"

    @property
    def location(self) -> str:
        """The directory (or object-store prefix) whose objects are the table's rows: the table's ``path``."""
        return self.path

    def _read_only_message(self, action: str) -> str:
        return f"{action} on table {self.identifier}: {VIRTUAL_REFUSAL}"
