"""Paimon's object tables (``type`` = ``object-table``), in both of Paimon's designs (docs/object-tables.md):

* Paimon 1.0-1.2 (the filesystem, JDBC and Hive catalogs): a metadata index of the objects under
  ``object-location``, kept in an append table of Paimon's fixed schema and replaced by ``refresh_object_table``;
  the capability gate refuses writes to them but the refresh's, and the ``refresh-object-table`` command refreshes
  them (ADR 0048);
* Paimon 1.3+ (the REST catalog): :class:`VirtualObjectTable`, a read-only listing of the table's own location at
  every read (:mod:`table_engine.object_table.virtual`).
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
from table_engine.object_table.schema import (
    ARROW_SCHEMA,
    FIELDS,
    VIRTUAL_ARROW_SCHEMA,
    VIRTUAL_FIELDS,
    check_columns,
    check_virtual_columns,
    virtual_rows,
)
from table_engine.object_table.virtual import VirtualObjectTable

__all__ = [
    "ARROW_SCHEMA",
    "FIELDS",
    "OBJECT_LOCATION",
    "TYPE",
    "VIRTUAL_ARROW_SCHEMA",
    "VIRTUAL_FIELDS",
    "ObjectTableOptions",
    "RefreshResult",
    "TableType",
    "VirtualObjectTable",
    "check_columns",
    "check_virtual_columns",
    "list_objects",
    "qualified_location",
    "refresh_object_table",
    "validate_object_table",
    "virtual_rows",
]
