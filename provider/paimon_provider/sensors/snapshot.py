"""Wait for a new snapshot of a Paimon table."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.exceptions import AirflowException

from paimon_provider.hooks.table import PaimonTableHook
from paimon_provider.utils.arguments import as_optional_int, as_time_millis, parse_partition_spec
from paimon_provider.utils.connection import DEFAULT_CONN_ID
from paimon_provider.utils.metadata import find_snapshot, parse_commit_kinds

if TYPE_CHECKING:
    from airflow.sdk import Context


class PaimonSnapshotSensor(BaseSensorOperator):
    """Wait until a table has a snapshot newer than a snapshot id and/or a time, optionally of a commit kind and
    touching a partition. Returns the snapshot found (id, kind, time, record counts) as XCom.

    With neither ``after_snapshot_id`` nor ``newer_than``, any snapshot will do (the table has data).
    Reads metadata only (no Spark). ``deferrable=True`` frees the worker slot: a trigger polls from the triggerer.

    :param table: ``database.table`` (templated).
    :param paimon_conn_id: the ``paimon`` connection.
    :param warehouse: overrides the connection's warehouse (templated).
    :param after_snapshot_id: wait for a snapshot with a larger id (templated; e.g. a writer's XCom).
    :param newer_than: wait for a snapshot committed after this time: datetime, ISO-8601 text (naive = UTC) or
        epoch milliseconds (templated).
    :param commit_kind: ``APPEND``, ``COMPACT``, ``OVERWRITE`` (or several, a list or comma-separated) (templated).
    :param partition: only snapshots that add or remove files of this partition (``{"dt": "2024-01-01"}`` or
        ``"dt=2024-01-01"``) (templated).
    :param deferrable: defer to :class:`~paimon_provider.triggers.metadata.PaimonSnapshotTrigger`.
    """

    template_fields: Sequence[str] = ("table", "warehouse", "after_snapshot_id", "newer_than", "commit_kind",
                                      "partition")
    ui_color = "#e3f0fa"

    def __init__(
        self,
        *,
        table: str,
        paimon_conn_id: str = DEFAULT_CONN_ID,
        warehouse: str | None = None,
        after_snapshot_id: int | str | None = None,
        newer_than: datetime.datetime | str | int | None = None,
        commit_kind: Sequence[str] | str | None = None,
        partition: Mapping[str, Any] | str | None = None,
        deferrable: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.paimon_conn_id = paimon_conn_id
        self.warehouse = warehouse
        self.after_snapshot_id = after_snapshot_id
        self.newer_than = newer_than
        self.commit_kind = commit_kind
        self.partition = partition
        self.deferrable = deferrable

    def criteria(self) -> dict[str, Any]:
        """The rendered arguments as :func:`paimon_provider.utils.metadata.find_snapshot` keywords."""
        return {"after_snapshot_id": as_optional_int(self.after_snapshot_id, "after_snapshot_id"),
                "after_time_millis": as_time_millis(self.newer_than, "newer_than"),
                "commit_kinds": parse_commit_kinds(self.commit_kind),
                "partition": parse_partition_spec(self.partition)}

    def _hook(self) -> PaimonTableHook:
        return PaimonTableHook(paimon_conn_id=self.paimon_conn_id, warehouse=self.warehouse)

    def poke(self, context: Context) -> PokeReturnValue:
        found = find_snapshot(self._hook().find_table(self.table), **self.criteria())
        if found is None:
            self.log.info("no matching snapshot of %s yet", self.table)
            return PokeReturnValue(is_done=False)
        self.log.info("found snapshot %d (%s) of %s", found.snapshot_id, found.commit_kind, self.table)
        return PokeReturnValue(is_done=True, xcom_value=found.to_dict())

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        from paimon_provider.triggers.metadata import PaimonSnapshotTrigger

        hook = self._hook()
        criteria = self.criteria()
        found = find_snapshot(hook.find_table(self.table), **criteria)
        if found is not None:
            return found.to_dict()
        self.defer(
            trigger=PaimonSnapshotTrigger(warehouse=hook.warehouse, paimon_conn_id=self.paimon_conn_id,
                                          table=self.table, poll_interval=self.poke_interval, **criteria),
            method_name="execute_complete",
            timeout=datetime.timedelta(seconds=self.timeout) if self.timeout else None,
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> dict[str, Any]:
        if event.get("status") != "success":
            raise AirflowException(f"waiting for a snapshot of {self.table} failed: {event.get('message')}")
        snapshot: dict[str, Any] = event["snapshot"]
        self.log.info("found snapshot %s of %s", snapshot.get("snapshot_id"), self.table)
        return snapshot
