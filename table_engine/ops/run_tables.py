"""The local runners of the commands on a table as a whole (:mod:`table_engine.ops.table_commands`):
``alter-table`` here; ``clone`` and ``migrate-table`` / ``migrate-database`` are their modules' functions
(:mod:`table_engine.ops.clone`, :mod:`table_engine.ops.migrate`), registered here."""

from __future__ import annotations

import logging
from typing import Any

from table_engine.catalog import Catalog
from table_engine.ops.alter import applied_already, parse_changes
from table_engine.ops.base import registers
from table_engine.ops.clone import clone
from table_engine.ops.migrate import migrate_database, migrate_table
from table_engine.ops.table_commands import AlterTable, Clone, MigrateDatabase, MigrateTable

__all__ = ["run_alter_table"]

log = logging.getLogger("table_engine.cli")

registers("local", Clone)(clone)
registers("local", MigrateTable)(migrate_table)
registers("local", MigrateDatabase)(migrate_database)


@registers("local", AlterTable)
def run_alter_table(cmd: AlterTable, catalog: Catalog) -> dict[str, Any]:
    """``alter-table``: the changes as one new schema, or nothing when an earlier try applied them."""
    table = catalog.get_table(cmd.table)
    changes = parse_changes(cmd.changes)
    schema = applied_already(table, changes)
    already_done = schema is not None
    if schema is not None:
        log.info("%s: schema %d is these changes applied to schema %d already (an earlier try): nothing to do",
                 table.identifier, schema.id, schema.id - 1)
    else:
        schema = table.alter(*changes)
        log.info("%s: schema %d -> %d (%d changes)", table.identifier, schema.id - 1, schema.id, len(changes))
    return {"schema_id": schema.id, "previous_schema_id": schema.id - 1, "already_done": already_done,
            "comment": schema.comment,
            "fields": [{"id": f.id, "name": f.name, "type": f.type.sql(), "comment": f.description}
                       for f in schema.fields]}
