"""Wait for a partition of a Paimon table to have data, or to be marked done."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.exceptions import AirflowException

from paimon_provider.hooks.table import PaimonTableHook
from paimon_provider.utils.arguments import parse_partition_spec
from paimon_provider.utils.connection import DEFAULT_CONN_ID
from paimon_provider.utils.metadata import partition_info

if TYPE_CHECKING:
    from airflow.sdk import Context

REQUIREMENTS = ("data", "done")


class PaimonPartitionSensor(BaseSensorOperator):
    """Wait until a partition has live data files in the latest snapshot (``require="data"``), or is marked done
    by Paimon's ``success-file`` action (``require="done"``: a ``_SUCCESS`` file in the partition directory, as
    :class:`~paimon_provider.operators.lifecycle.PaimonMarkPartitionDoneOperator` or Paimon writes it, read by the
    engine's one parser of it; docs/partitions.md). Returns the partition's file and row counts as XCom. Reads
    metadata only (no Spark).

    :param table: ``database.table`` (templated).
    :param partition: ``{"dt": "2024-01-01"}`` or ``"dt=2024-01-01"``; for ``done``, every partition key
        (templated).
    :param require: ``data`` or ``done`` (templated).
    :param paimon_conn_id: the ``paimon`` connection.
    :param warehouse: overrides the connection's warehouse (templated).
    :param deferrable: defer to :class:`~paimon_provider.triggers.metadata.PaimonPartitionTrigger`.
    """

    template_fields: Sequence[str] = ("table", "warehouse", "partition", "require")
    ui_color = "#e3f0fa"

    def __init__(
        self,
        *,
        table: str,
        partition: Mapping[str, Any] | str,
        require: str = "data",
        paimon_conn_id: str = DEFAULT_CONN_ID,
        warehouse: str | None = None,
        deferrable: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.partition = partition
        self.require = require
        self.paimon_conn_id = paimon_conn_id
        self.warehouse = warehouse
        self.deferrable = deferrable

    def _spec(self) -> dict[str, Any]:
        spec = parse_partition_spec(self.partition)
        if not spec:
            raise ValueError("PaimonPartitionSensor needs a partition")
        if self.require not in REQUIREMENTS:
            raise ValueError(f"require must be one of {REQUIREMENTS}, got {self.require!r}")
        return spec

    def _hook(self) -> PaimonTableHook:
        return PaimonTableHook(paimon_conn_id=self.paimon_conn_id, warehouse=self.warehouse)

    def _check(self, hook: PaimonTableHook) -> dict[str, Any] | None:
        info = partition_info(hook.find_table(self.table), self._spec())
        if info is None:
            return None
        ready = info.done if self.require == "done" else info.file_count > 0
        return info.to_dict() if ready else None

    def poke(self, context: Context) -> PokeReturnValue:
        found = self._check(self._hook())
        if found is None:
            self.log.info("partition %s of %s is not %s yet", self.partition, self.table,
                          "marked done" if self.require == "done" else "written")
        return PokeReturnValue(is_done=found is not None, xcom_value=found)

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        from paimon_provider.triggers.metadata import PaimonPartitionTrigger

        hook = self._hook()
        found = self._check(hook)
        if found is not None:
            return found
        self.defer(
            trigger=PaimonPartitionTrigger(warehouse=hook.warehouse, paimon_conn_id=self.paimon_conn_id,
                                           table=self.table, partition=self._spec(), require=self.require,
                                           poll_interval=self.poke_interval),
            method_name="execute_complete",
            timeout=datetime.timedelta(seconds=self.timeout) if self.timeout else None,
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> dict[str, Any]:
        if event.get("status") != "success":
            raise AirflowException(f"waiting for partition {self.partition} of {self.table} failed: "
                                   f"{event.get('message')}")
        partition: dict[str, Any] = event["partition"]
        return partition
