"""System tables ``<table>$<name>`` as Arrow tables, with Paimon's column names (``docs/concepts/system-tables``).

``catalog.get_table("db.t$snapshots").read()``. Supported: ``snapshots``, ``schemas``, ``options``, ``files``,
``tags``, ``consumers``, ``manifests``, ``partitions``, ``buckets`` (``ro``, the read-optimized view, is a data
table, see :func:`~table_engine.table.reading.read_optimized_view`; ``audit_log`` and ``binlog`` are the change tables
:class:`AuditLogTable` and :class:`BinlogTable`). ``files``, ``manifests``, ``partitions`` and ``buckets`` describe
the latest snapshot, or the one given by ``snapshot_id``/``tag``/``timestamp_millis`` (or, but for ``buckets``, by
the time-travel options of a ``copy``: ``get_table("db.t$files").copy({"scan.snapshot-id": "1"})``); ``read`` also takes
``columns`` and ``filter`` like a data table.

Value formats follow Paimon: times are local wall-clock ``timestamp[ms]`` (Java ``LocalDateTime``), partitions
``{v1, v2}`` (``$files``, ``$buckets``, ``$manifests``) or ``k1=v1/k2=v2`` (``$partitions``), keys ``[v1, v2]``,
per-column stats ``{col=value, ...}`` sorted by column, tag retention an ISO-8601 duration (``PT24H``).

The modules: ``schemas`` (the metadata tables' Arrow schemas), ``metadata_tables`` (:class:`SystemTable` and a row
builder per metadata table), ``change_tables`` (``$audit_log``, ``$binlog``), ``values`` (Paimon's value formats),
``rows`` (:class:`~table_engine.system_tables.rows.BuiltRows`: the filter and projection of tables built at each read).
"""

from __future__ import annotations

from table_engine.system_tables.change_tables import AuditLogTable, BinlogStreamScan, BinlogTable
from table_engine.system_tables.metadata_tables import SystemTable
from table_engine.system_tables.schemas import SCHEMAS, SYSTEM_TABLES, TIME_TRAVEL_TABLES
from table_engine.table import Table
from table_engine.table.branches import branch_identifier
from table_engine.table_source import TableSource

__all__ = ["SCHEMAS", "SYSTEM_TABLES", "TIME_TRAVEL_TABLES", "AuditLogTable", "BinlogStreamScan", "BinlogTable",
           "SystemTable", "system_table"]


def system_table(table: Table, name: str) -> Table:
    """``<table>$<name>``: a read-only view of ``table`` whose rows are a metadata table, or the ``audit_log`` /
    ``binlog`` change tables; every mutating method of the view raises ReadOnlyTableError."""
    source: TableSource
    if name == "audit_log":
        source = AuditLogTable()
    elif name == "binlog":
        source = BinlogTable()
    else:
        source = SystemTable(table, name)
    base = branch_identifier(table.identifier, table.branch)
    return Table(table.file_io, table.path, f"{base}${name}", table.schema, source=source)
