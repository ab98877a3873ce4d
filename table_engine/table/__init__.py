"""The table facade: :class:`Table`, one class over a table's store handle, with Paimon's maintenance procedures in
its :attr:`~Table.maintenance` namespace (:class:`TableMaintenance`) and a data-evolution table's row-level changes
in :attr:`~Table.data_evolution` (:class:`DataEvolution`); docs/adr/0043-table-shape.md.

The modules beside it: ``table`` (the class), ``reading`` and ``writing`` (how it reads and writes), ``tags``,
``branches`` (identifiers), ``fallback`` (``scan.fallback-branch``), ``guards`` (:func:`mutating`, the capability
gate and the refusals every runner applies), ``maintenance`` and ``data_evolution`` (the namespaces).
"""

from __future__ import annotations

from table_engine.table.data_evolution import DataEvolution
from table_engine.table.guards import is_mutating, mutating
from table_engine.table.maintenance import TableMaintenance
from table_engine.table.table import Table
from table_engine.table.writing import RowKinds

__all__ = ["DataEvolution", "RowKinds", "Table", "TableMaintenance", "is_mutating", "mutating"]
