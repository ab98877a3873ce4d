"""A pure-Python implementation of the Apache Paimon table format (pyarrow, fastavro, pyroaring).

Public API::

    from table_engine import Catalog
    catalog = Catalog("/path/to/warehouse")
    table = catalog.create_table("db.t", schema=pa_schema, primary_keys=["id"], options={"bucket": "4"})
    table.write(arrow_table)
    table.read()

Beside the catalog, the table and the error names, the face holds the types and rules a caller above the engine
(the Airflow provider) shows or applies: a snapshot and its commit kinds, a table's health, the partition specs'
one text form, a branch's identifier, Paimon's rollback target and a merge engine's column functions
(``tests/test_layers.py`` keeps the provider to the public modules).

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
    from table_engine.format.snapshot import CommitKind, Snapshot
    from table_engine.lsm.merge_engines.config import column_functions
    from table_engine.store.lifecycle.health import TableHealth
    from table_engine.store.lifecycle.tags import rollback_version
    from table_engine.store.partition_spec import parse_partition_text, parse_partition_texts, value_text
    from table_engine.table import Table
    from table_engine.table.branches import branch_identifier

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
    "CommitKind": "table_engine.format.snapshot",
    "Snapshot": "table_engine.format.snapshot",
    "TableHealth": "table_engine.store.lifecycle.health",
    "branch_identifier": "table_engine.table.branches",
    "column_functions": "table_engine.lsm.merge_engines.config",
    "parse_partition_text": "table_engine.store.partition_spec",
    "parse_partition_texts": "table_engine.store.partition_spec",
    "rollback_version": "table_engine.store.lifecycle.tags",
    "value_text": "table_engine.store.partition_spec",
}

__all__ = [
    "Catalog",
    "CommitConflictError",
    "CommitKind",
    "CoreOptions",
    "CorruptMetadataError",
    "DataError",
    "OptionError",
    "SchemaError",
    "SchemaMismatchError",
    "Snapshot",
    "Table",
    "TableEngineError",
    "TableHealth",
    "branch_identifier",
    "column_functions",
    "open_table",
    "parse_partition_text",
    "parse_partition_texts",
    "rollback_version",
    "value_text",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'table_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
