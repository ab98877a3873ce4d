"""Object tables (Paimon's ``type`` = ``object-table``, docs/object-tables.md): refresh the index of the objects under
the table's ``object-location``.

A metadata-sized command (a listing and one small write): it runs with the engine in the task's process, no Spark
(ADR 0042). Its lineage reads the location and writes the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_provider.operators.base import PaimonSparkOperator

if TYPE_CHECKING:
    from table_engine.ops import RefreshObjectTable


class PaimonRefreshObjectTableOperator(PaimonSparkOperator["RefreshObjectTable"]):
    """Paimon's ``refresh_object_table``: list the object table's ``object-location`` (with the connection's
    storage options) and replace its index rows in one OVERWRITE snapshot. The result has ``file_number``,
    ``total_bytes`` and ``snapshot_id``. A missing location fails the task and leaves the index as it was; a retry
    lists again and overwrites again (the index is replaced, never appended to).
    """

    def build_command(self, warehouse: str) -> RefreshObjectTable:
        from table_engine.ops import RefreshObjectTable

        return RefreshObjectTable(warehouse=warehouse, table=self.table)
