"""Event-driven scheduling: an AssetWatcher's trigger that fires once per new snapshot of a Paimon table.

Used as ``Asset(..., watchers=[AssetWatcher(name=..., trigger=PaimonTableSnapshotTrigger(...))])``: a DAG scheduled
on that asset runs once per snapshot committed to the table, whoever committed it (an Airflow task, a Spark or
Flink job, pypaimon, Paimon Java, a ``python -c`` script). Each poll reads the ``LATEST`` hint and HEADs the next
snapshot file (two requests on an object store when nothing is new) through :mod:`paimon_provider.metadata`, the
engine's read-only metadata API, in a worker thread. Semantics of the watermark (the last snapshot seen) are in
:class:`PaimonTableSnapshotTrigger` and docs/events.md.

Importing this module loads no engine store module and no pyarrow (a DAG file constructs the trigger at parse time).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from paimon_provider.metadata import new_snapshots, open_table, parse_commit_kinds, parse_partition_spec
from paimon_provider.triggers.metadata import MAX_CONSECUTIVE_ERRORS, open_catalog

if TYPE_CHECKING:
    from paimon_provider.metadata import NewSnapshot
    from table_engine.catalog import Catalog
    from table_engine.table import Table

WATERMARK_KEY = "last_snapshot_id"
"""Key of the watermark in the asset's state store (suffixed with the trigger's filters, see :meth:`watermark_key`)."""

_MULTI_ASSET_ERROR = "concrete inlets and outlets"
"""What Airflow's AssetStateStoreAccessors raises (a ValueError) when one trigger serves several assets."""

SNAPSHOTS_PER_POLL = 100
"""At most this many snapshots are read per poll; a backlog is worked through in consecutive polls without sleep."""


class PaimonTableSnapshotTrigger(BaseEventTrigger):
    """Fire one event per new snapshot of ``table``, in snapshot id order, whoever committed it.

    The event payload (the asset event's ``extra``): ``table``, ``warehouse``, ``snapshot_id``,
    ``previous_snapshot_id`` (the table's snapshot before it, ``snapshot_id - 1``; None for the first),
    ``commit_kind``, ``commit_user``, ``time_millis``, ``schema_id``, ``total_record_count``,
    ``delta_record_count``, ``changelog_record_count`` and ``properties`` (the snapshot's string map, when it has one).

    Watermark (the last snapshot seen): kept in the watched asset's state store (``self.asset_state_store``,
    Airflow 3.3+) right after each event is handed to the triggerer, so a restarted trigger resumes after it: no
    snapshot is skipped or repeated, except an event handed over within the triggerer's last sync period (~1 s) before
    a stop, which can be lost. Without a store (Airflow 3.2, or one trigger shared by several assets) the trigger
    starts after the table's latest snapshot when it starts: snapshots committed while no trigger runs get no event.
    A table that does not exist yet is waited for (all its snapshots are then new). Snapshots that expired before a
    poll saw them are skipped with one WARNING naming their ids. ``MAX_CONSECUTIVE_ERRORS`` failed polls in a row
    fail the trigger (the triggerer starts it again).

    :param warehouse: the warehouse URI (no credentials: kwargs are stored in the metadata database).
    :param table: ``database.table``.
    :param paimon_conn_id: the ``paimon`` connection giving catalog options and credentials (resolved in the
        triggerer); None opens the warehouse with no options.
    :param poll_interval: seconds between polls.
    :param commit_kinds: only snapshots of these kinds (``APPEND``, ``COMPACT``, ``OVERWRITE``, ``ANALYZE``; a list
        or comma-separated text) fire; any if empty.
    :param partition: only snapshots that add or remove files of this partition (``{"dt": "2024-01-01"}`` or
        ``"dt=2024-01-01"``) fire.
    """

    def __init__(self, *, warehouse: str, table: str, paimon_conn_id: str | None = None, poll_interval: float = 30.0,
                 commit_kinds: Sequence[str] | str | None = None, partition: Mapping[str, Any] | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.warehouse = warehouse
        self.table = table
        self.paimon_conn_id = paimon_conn_id
        self.poll_interval = float(poll_interval)
        self.commit_kinds = parse_commit_kinds(commit_kinds)  # a bad kind fails when the DAG is parsed
        self.partition: dict[str, Any] | str | None = (
            dict(partition) if isinstance(partition, Mapping) else partition or None)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"warehouse": self.warehouse, "table": self.table, "paimon_conn_id": self.paimon_conn_id,
                 "poll_interval": self.poll_interval, "commit_kinds": self.commit_kinds, "partition": self.partition})

    def watermark_key(self) -> str:
        """The state-store key of this trigger's watermark: the table and the filters, so two watchers of one asset
        with different filters keep their own."""
        key = f"{WATERMARK_KEY}:{self.warehouse.rstrip('/')}/{self.table}"
        if self.commit_kinds:
            key += f":kinds={','.join(self.commit_kinds)}"
        if self.partition:
            spec = self.partition if isinstance(self.partition, str) else ",".join(
                f"{k}={v}" for k, v in sorted(self.partition.items()))
            key += f":partition={spec}"
        return key

    async def _state_store(self) -> Any:
        """The watched asset's state-store accessor, or None (Airflow 3.2, or several assets on this trigger)."""
        store = getattr(self, "asset_state_store", None)
        if store is None:
            return None
        try:
            await store.aget(self.watermark_key())
        except ValueError as e:
            if _MULTI_ASSET_ERROR not in str(e):
                raise
            self.log.warning("%s is watched by several assets: no watermark is kept, a restart starts after the "
                             "latest snapshot", self.table)
            return None
        return store

    def _event(self, snap: NewSnapshot) -> dict[str, Any]:
        info = snap.info
        payload = {"table": self.table, "warehouse": self.warehouse, "snapshot_id": info.snapshot_id,
                   "previous_snapshot_id": info.snapshot_id - 1 if info.snapshot_id > 1 else None,
                   **{k: v for k, v in info.to_dict().items() if k != "snapshot_id"}}
        if snap.properties:
            payload["properties"] = snap.properties
        return payload

    async def run(self) -> AsyncIterator[TriggerEvent]:
        store = await self._state_store()
        key = self.watermark_key()
        stored = None if store is None else await store.aget(key)
        watermark = None if stored is None else int(stored)
        partition = parse_partition_spec(self.partition)
        catalog: Catalog | None = None
        table: Table | None = None
        table_missing_at_start = False
        errors = 0
        while True:
            try:
                if catalog is None:  # the connection is fetched by blocking calls: in a thread, as the polls
                    catalog = await asyncio.to_thread(open_catalog, self.warehouse, self.paimon_conn_id)
                if table is None:
                    table = await asyncio.to_thread(open_table, catalog, self.table)
                poll = None
                if table is None:
                    table_missing_at_start = table_missing_at_start or watermark is None
                elif watermark is None:  # first poll with no stored watermark: start after the latest snapshot
                    latest = 0 if table_missing_at_start else await asyncio.to_thread(table.latest_snapshot_id)
                    watermark = latest or 0
                    self.log.info("watching %s after snapshot %d", self.table, watermark)
                    if store is not None:
                        await store.aset(key, watermark)
                else:
                    poll = await asyncio.to_thread(new_snapshots, table, watermark, commit_kinds=self.commit_kinds,
                                                   partition=partition, limit=SNAPSHOTS_PER_POLL)
                errors = 0
            except Exception as e:  # noqa: BLE001 - retried, then raised
                errors += 1
                self.log.warning("polling %s failed (%d/%d): %s", self.table, errors, MAX_CONSECUTIVE_ERRORS, e)
                if errors >= MAX_CONSECUTIVE_ERRORS:
                    raise RuntimeError(f"watching {self.table} in {self.warehouse}: {errors} polls in a row failed: "
                                       f"{type(e).__name__}: {e}") from e
                poll = None
            if poll is not None:
                if poll.expired is not None:
                    first, last = poll.expired
                    self.log.warning("snapshots %d..%d of %s expired before they were seen: no event for them",
                                     first, last, self.table)
                for snap in poll.snapshots:
                    if snap.matches:
                        yield TriggerEvent(self._event(snap))  # type: ignore[no-untyped-call]
                    watermark = snap.info.snapshot_id
                    if store is not None:
                        await store.aset(key, watermark)
                if len(poll.snapshots) >= SNAPSHOTS_PER_POLL:
                    continue  # a backlog: read on at once
            await asyncio.sleep(self.poll_interval)
