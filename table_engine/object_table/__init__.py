"""Paimon's object tables (``type`` = ``object-table``): a metadata index of the objects under ``object-location``,
kept in an append table of Paimon's fixed schema and replaced by ``refresh_object_table`` (docs/object-tables.md).

The catalogs create them (``type`` = ``object-table``), the capability gate refuses writes to them but the
refresh's, and the ``refresh-object-table`` command refreshes them (docs/object-tables.md, ADR 0048).
"""

from table_engine.object_table.listing import list_objects, qualified_location
from table_engine.object_table.options import (
    OBJECT_LOCATION,
    TYPE,
    ObjectTableOptions,
    TableType,
    validate_object_table,
)
from table_engine.object_table.refresh import RefreshResult, refresh_object_table
from table_engine.object_table.schema import ARROW_SCHEMA, FIELDS, VIRTUAL_ARROW_SCHEMA, check_columns, virtual_rows

__all__ = [
    "ARROW_SCHEMA",
    "FIELDS",
    "OBJECT_LOCATION",
    "TYPE",
    "VIRTUAL_ARROW_SCHEMA",
    "ObjectTableOptions",
    "RefreshResult",
    "TableType",
    "check_columns",
    "list_objects",
    "qualified_location",
    "refresh_object_table",
    "validate_object_table",
    "virtual_rows",
]
