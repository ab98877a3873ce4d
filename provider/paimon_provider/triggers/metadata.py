"""Deferrable waiting on Paimon tables: poll snapshot and manifest files from the triggerer.

The sensor passes the warehouse URI it resolved and the ``paimon`` connection id: a trigger's kwargs are stored in
the metadata database, so they never hold credentials. The triggerer resolves the connection (its catalog options
and object-store credentials) when the trigger starts, through :class:`~paimon_provider.hooks.table.PaimonTableHook`;
without a connection id (or when the connection cannot be fetched) the warehouse is opened with no options, e.g.
a local path or an object store reached through the triggerer's own AWS environment. Each poll opens the table and
reads its metadata through :mod:`paimon_provider.utils.metadata` (the engine's read-only metadata API) in a worker
thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from paimon_provider.utils.metadata import find_snapshot, open_table, partition_info

if TYPE_CHECKING:
    from table_engine.catalog import Catalog
    from table_engine.table import Table

MAX_CONSECUTIVE_ERRORS = 3
"""A poll that fails (e.g. an object store hiccup) is retried; this many failures in a row end the wait."""


def open_catalog(warehouse: str | None, paimon_conn_id: str | None) -> Catalog:
    """The warehouse's catalog with the connection's options and credentials, fetched here, in the triggerer (a
    blocking call: run it in a thread); without a connection id, the warehouse with no options; without a
    warehouse, the connection's."""
    if paimon_conn_id is None:
        from table_engine.catalog import create_catalog

        if warehouse is None:
            raise ValueError("a warehouse or a paimon connection id is needed")
        return create_catalog(warehouse)
    from paimon_provider.hooks.table import PaimonTableHook

    return PaimonTableHook(paimon_conn_id=paimon_conn_id, warehouse=warehouse).get_catalog()


class _PollingTrigger(BaseTrigger):
    """Polls :meth:`check` every ``poll_interval`` seconds until it returns an event payload."""

    def __init__(self, warehouse: str, table: str, poll_interval: float = 30.0,
                 paimon_conn_id: str | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.warehouse = warehouse
        self.table = table
        self.poll_interval = float(poll_interval)
        self.paimon_conn_id = paimon_conn_id

    def _kwargs(self) -> dict[str, Any]:
        return {"warehouse": self.warehouse, "table": self.table, "poll_interval": self.poll_interval,
                "paimon_conn_id": self.paimon_conn_id}

    def _catalog(self) -> Catalog:
        """The warehouse's catalog with the connection's options and credentials (fetched here, in the triggerer)."""
        return open_catalog(self.warehouse, self.paimon_conn_id)

    def check(self, table: Table | None) -> dict[str, Any] | None:
        """The event payload once the wait is over (``table``: None while the table does not exist)."""
        raise NotImplementedError

    def _poll(self, catalog: Catalog) -> dict[str, Any] | None:
        return self.check(open_table(catalog, self.table))

    async def run(self) -> AsyncIterator[TriggerEvent]:
        catalog: Catalog | None = None
        errors = 0
        try:
            while True:
                try:
                    if catalog is None:  # the connection is fetched by blocking calls: in a thread, as the polls
                        catalog = await asyncio.to_thread(self._catalog)
                    payload = await asyncio.to_thread(self._poll, catalog)
                    errors = 0
                except Exception as e:  # noqa: BLE001 - reported through the event after retries
                    errors += 1
                    self.log.warning("polling %s failed (%d/%d): %s", self.table, errors, MAX_CONSECUTIVE_ERRORS, e)
                    if errors >= MAX_CONSECUTIVE_ERRORS:
                        yield TriggerEvent({"status": "error", "table": self.table,  # type: ignore[no-untyped-call]
                                            "message": f"{type(e).__name__}: {e}"})
                        return
                    payload = None
                if payload is not None:
                    event = {"status": "success", "table": self.table, **payload}
                    yield TriggerEvent(event)  # type: ignore[no-untyped-call]
                    return
                await asyncio.sleep(self.poll_interval)
        finally:  # a metastore's connections are not kept once the wait is over
            if catalog is not None:
                catalog.close()


class PaimonSnapshotTrigger(_PollingTrigger):
    """Fires when a snapshot newer than ``after_snapshot_id`` / ``after_time_millis`` lands, optionally of one of
    ``commit_kinds`` and touching ``partition``. Event: ``{"status": "success", "snapshot": {...}}``."""

    def __init__(self, warehouse: str, table: str, after_snapshot_id: int | None = None,
                 after_time_millis: int | None = None, commit_kinds: Sequence[str] = (),
                 partition: Mapping[str, Any] | None = None, poll_interval: float = 30.0,
                 paimon_conn_id: str | None = None) -> None:
        super().__init__(warehouse, table, poll_interval, paimon_conn_id)
        self.after_snapshot_id = after_snapshot_id
        self.after_time_millis = after_time_millis
        self.commit_kinds = list(commit_kinds)
        self.partition = dict(partition) if partition else None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {**self._kwargs(), "after_snapshot_id": self.after_snapshot_id,
                 "after_time_millis": self.after_time_millis, "commit_kinds": self.commit_kinds,
                 "partition": self.partition})

    def check(self, table: Table | None) -> dict[str, Any] | None:
        found = find_snapshot(table, after_snapshot_id=self.after_snapshot_id, after_time_millis=self.after_time_millis,
                              commit_kinds=self.commit_kinds, partition=self.partition)
        return None if found is None else {"snapshot": found.to_dict()}


class PaimonPartitionTrigger(_PollingTrigger):
    """Fires when a partition has data (``require="data"``) or is marked done (``require="done"``: its
    ``_SUCCESS`` file exists). Event: ``{"status": "success", "partition": {...}}``."""

    def __init__(self, warehouse: str, table: str, partition: Mapping[str, Any], require: str = "data",
                 poll_interval: float = 30.0, paimon_conn_id: str | None = None) -> None:
        super().__init__(warehouse, table, poll_interval, paimon_conn_id)
        self.partition = dict(partition)
        self.require = require

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {**self._kwargs(), "partition": self.partition, "require": self.require})

    def check(self, table: Table | None) -> dict[str, Any] | None:
        info = partition_info(table, self.partition)
        if info is None:
            return None
        ready = info.done if self.require == "done" else info.file_count > 0
        return {"partition": info.to_dict()} if ready else None
