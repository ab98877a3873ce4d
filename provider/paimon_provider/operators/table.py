"""Create a Paimon table (a metadata write: ``schema/schema-0``), without Spark."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from paimon_provider.utils.connection import DEFAULT_CONN_ID

if TYPE_CHECKING:
    from airflow.sdk import Context

    from paimon_provider.hooks.table import PaimonTableHook
    from table_engine.catalog import Catalog


def create_table(catalog: Catalog, table: str, columns: Mapping[str, str], *, primary_keys: Sequence[str] = (),
                 partition_keys: Sequence[str] = (), options: Mapping[str, Any] | None = None,
                 comment: str | None = None, ignore_if_exists: bool = True) -> bool:
    """Create ``table`` in ``catalog`` as :class:`PaimonCreateTableOperator` does (``columns``: name -> Paimon
    type, in order; option values as text); whether it was created. An existing table is left as it is (its
    definition is not compared), or with ``ignore_if_exists=False`` is an error."""
    import pyarrow as pa

    from table_engine.types import DataField, parse_type, to_arrow_field

    if ignore_if_exists and catalog.table_exists(table):
        return False
    schema = pa.schema([to_arrow_field(DataField(i, name, parse_type(t)))
                        for i, (name, t) in enumerate(columns.items())])
    catalog.create_table(table, schema, primary_keys=list(primary_keys), partition_keys=list(partition_keys),
                         options={k: str(v) for k, v in (options or {}).items()}, comment=comment,
                         ignore_if_exists=ignore_if_exists)
    return True


class PaimonCreateTableOperator(BaseOperator):
    """Create a table with explicit columns, keys and options if it does not exist (for tables that a job fills
    but does not create, such as the target of ``consume-changelog``). Runs in the worker through the engine.
    Returns the table's keys, options and whether it was created.

    :param table: ``database.table`` (templated).
    :param columns: column name -> Paimon type (``"BIGINT"``, ``"DECIMAL(10, 2)"``, ``"STRING NOT NULL"``), in order.
    :param primary_keys: primary key columns.
    :param partition_keys: partition columns.
    :param table_options: table options (validated by the engine) (templated).
    :param comment: the table comment.
    :param if_not_exists: an existing table is fine (its definition is not compared); else fail.
    :param paimon_conn_id: the ``paimon`` connection.
    :param warehouse: overrides the connection's warehouse (templated).
    """

    template_fields: Sequence[str] = ("table", "table_options", "warehouse")
    template_fields_renderers = {"table_options": "json"}
    ui_color = "#d9ead3"

    def __init__(self, *, table: str, columns: Mapping[str, str], primary_keys: Sequence[str] = (),
                 partition_keys: Sequence[str] = (), table_options: Mapping[str, Any] | None = None,
                 comment: str | None = None, if_not_exists: bool = True, paimon_conn_id: str = DEFAULT_CONN_ID,
                 warehouse: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not columns:
            raise ValueError("PaimonCreateTableOperator needs columns")
        self.table = table
        self.columns = dict(columns)
        self.primary_keys = list(primary_keys)
        self.partition_keys = list(partition_keys)
        self.table_options = dict(table_options or {})
        self.comment = comment
        self.if_not_exists = if_not_exists
        self.paimon_conn_id = paimon_conn_id
        self.warehouse = warehouse
        self._lineage: tuple[PaimonTableHook, bool] | None = None

    def _unread_lineage(self) -> Any:
        """The table as an output, named from the connection's warehouse without reading it."""
        from paimon_provider.hooks.table import PaimonTableHook
        from paimon_provider.utils.lineage import LineageIO, TableRef, operator_lineage

        warehouse = PaimonTableHook(paimon_conn_id=self.paimon_conn_id, warehouse=self.warehouse).get_conn().warehouse
        return operator_lineage(warehouse, LineageIO(outputs=(TableRef(self.table),)))

    def get_openlineage_facets_on_start(self) -> Any:
        """OpenLineage (START): the table it will create, as COMPLETE names it (without its schema)."""
        return self._unread_lineage()

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """OpenLineage (FAIL): the table it was to create."""
        return self._unread_lineage()

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """OpenLineage: the table as an output with its schema, ``lifecycleStateChange`` CREATE when this task
        created it (docs/lineage.md)."""
        from paimon_provider.utils.lineage import LineageIO, TableRef, operator_lineage

        if self._lineage is None:
            return None
        hook, created = self._lineage
        ref = TableRef(self.table, lifecycle="CREATE" if created else None)
        with contextlib.closing(hook.get_catalog()) as catalog:
            return operator_lineage(catalog.warehouse, LineageIO(outputs=(ref,)), catalog)

    def execute(self, context: Context) -> dict[str, Any]:
        from paimon_provider.hooks.table import PaimonTableHook

        hook = PaimonTableHook(paimon_conn_id=self.paimon_conn_id, warehouse=self.warehouse)
        with contextlib.closing(hook.get_catalog()) as catalog:
            return self._create(catalog, hook)

    def _create(self, catalog: Catalog, hook: PaimonTableHook) -> dict[str, Any]:
        existed = catalog.table_exists(self.table)
        if existed and not self.if_not_exists:
            raise ValueError(f"table {self.table} already exists in {catalog.warehouse}")
        if not existed:
            create_table(catalog, self.table, self.columns, primary_keys=self.primary_keys,
                         partition_keys=self.partition_keys, options=self.table_options, comment=self.comment,
                         ignore_if_exists=self.if_not_exists)
            self.log.info("created table %s", self.table)
        else:
            self.log.info("table %s exists", self.table)
        table = catalog.get_table(self.table)
        self._lineage = (hook, not existed)
        return {"table": self.table, "created": not existed, "primary_keys": list(table.primary_keys),
                "partition_keys": list(table.partition_keys), "options": dict(table.schema.options)}
