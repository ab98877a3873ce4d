"""A pure-Python implementation of the Apache Paimon table format (pyarrow, fastavro, pyroaring).

Public API::

    from table_engine import Catalog
    catalog = Catalog("/path/to/warehouse")
    table = catalog.create_table("db.t", schema=pa_schema, primary_keys=["id"], options={"bucket": "4"})
    table.write(arrow_table)
    table.read()

Names are resolved lazily so that importing a submodule (``table_engine.format...``) stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from table_engine.catalog import Catalog, open_table
    from table_engine.core_options import CoreOptions
    from table_engine.errors import (
        CommitConflictError,
        CorruptMetadataError,
        DataError,
        OptionError,
        SchemaError,
        SchemaMismatchError,
        TableEngineError,
    )
    from table_engine.table import Table

_EXPORTS = {
    "Catalog": "table_engine.catalog",
    "open_table": "table_engine.catalog",
    "CoreOptions": "table_engine.core_options",
    "Table": "table_engine.table",
    "CommitConflictError": "table_engine.errors",
    "CorruptMetadataError": "table_engine.errors",
    "DataError": "table_engine.errors",
    "OptionError": "table_engine.errors",
    "SchemaError": "table_engine.errors",
    "SchemaMismatchError": "table_engine.errors",
    "TableEngineError": "table_engine.errors",
}

__all__ = [
    "Catalog",
    "CommitConflictError",
    "CoreOptions",
    "CorruptMetadataError",
    "DataError",
    "OptionError",
    "SchemaError",
    "SchemaMismatchError",
    "Table",
    "TableEngineError",
    "open_table",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'table_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
