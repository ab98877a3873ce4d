"""Event-driven scheduling: an AssetWatcher's trigger that fires once per new snapshot of a Paimon table.

Used as ``Asset(..., watchers=[AssetWatcher(name=..., trigger=PaimonTableSnapshotTrigger(...))])``: a DAG scheduled
on that asset runs once per snapshot committed to the table, whoever committed it (an Airflow task, a Spark or
Flink job, pypaimon, Paimon Java, a ``python -c`` script). Each poll reads the ``LATEST`` hint and HEADs the next
snapshot file (two requests on an object store when nothing is new) through :mod:`paimon_provider.utils.metadata`, the
engine's read-only metadata API, in a worker thread. Semantics of the watermark (the last snapshot seen) are in
:class:`PaimonTableSnapshotTrigger` and docs/events.md.

Importing this module loads no engine store module and no pyarrow (a DAG file constructs the trigger at parse time).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from paimon_provider.triggers.metadata import MAX_CONSECUTIVE_ERRORS, open_catalog
from paimon_provider.utils.arguments import parse_partition_spec
from paimon_provider.utils.assets import split_table, table_asset_uri
from paimon_provider.utils.connection import DEFAULT_CONN_ID
from paimon_provider.utils.metadata import new_snapshots, open_table, parse_commit_kinds

if TYPE_CHECKING:
    from airflow.sdk import Asset

    from paimon_provider.utils.metadata import NewSnapshot, SnapshotPoll
    from table_engine.catalog import Catalog
    from table_engine.table import Table

WATERMARK_KEY = "last_snapshot_id"
"""Key of the watermark in the asset's state store (suffixed with the trigger's filters, see :meth:`watermark_key`)."""

MAX_KEY_LENGTH = 512
"""Airflow's asset state store keys are at most 512 characters."""

_MULTI_ASSET_ERROR = "concrete inlets and outlets"
"""What Airflow's AssetStateStoreAccessors raises (a ValueError) when one trigger serves several assets."""

SNAPSHOTS_PER_POLL = 100
"""At most this many snapshots are read per poll; a backlog is worked through in consecutive polls without sleep."""


def _spec_text(partition: Mapping[str, Any] | str) -> str:
    return partition if isinstance(partition, str) else ",".join(f"{k}={v}" for k, v in sorted(partition.items()))


@dataclass
class _Watch:
    """What a running trigger holds between polls."""

    watermark: int | None
    partition: dict[str, Any] | None
    catalog: Catalog | None = None
    table: Table | None = None
    missing_at_start: bool = False
    started: bool = False


class PaimonTableSnapshotTrigger(BaseEventTrigger):
    """Fire one event per new snapshot of ``table``, in snapshot id order, whoever committed it.

    The event payload (the asset event's ``extra["payload"]``, see :func:`snapshot_of_event`): ``table``,
    ``warehouse``, ``snapshot_id``,
    ``previous_snapshot_id`` (the table's snapshot before it, ``snapshot_id - 1``; None for the first),
    ``commit_kind``, ``commit_user``, ``time_millis``, ``schema_id``, ``total_record_count``,
    ``delta_record_count``, ``changelog_record_count`` and ``properties`` (the snapshot's string map, when it has one).

    Watermark (the last snapshot seen): kept in the watched asset's state store (``self.asset_state_store``,
    Airflow 3.3+) right after each event is handed to the triggerer, so a restarted trigger resumes after it: no
    snapshot is skipped or repeated, except an event handed over within the triggerer's last sync period (~1 s) before
    a stop, which can be lost. Without a store (Airflow 3.2, or one trigger shared by several assets) the trigger
    starts after the table's latest snapshot when it starts: snapshots committed while no trigger runs get no event.
    A table that does not exist yet is waited for (all its snapshots are then new). Snapshots that expired before a
    poll saw them are skipped with one WARNING naming their ids; after a rollback below the watermark the trigger
    watches after the newest snapshot (a WARNING). ``MAX_CONSECUTIVE_ERRORS`` failed polls in a row fail the trigger
    (the triggerer starts it again).

    :param table: ``database.table``.
    :param paimon_conn_id: the ``paimon`` connection giving the warehouse, catalog options and credentials (resolved
        in the triggerer, never when the DAG file is parsed); None opens ``warehouse`` with no options.
    :param warehouse: overrides the connection's warehouse URI (no credentials: kwargs are stored in the metadata
        database).
    :param poll_interval: seconds between polls.
    :param commit_kinds: only snapshots of these kinds (``APPEND``, ``COMPACT``, ``OVERWRITE``, ``ANALYZE``; a list
        or comma-separated text) fire; any if empty.
    :param partition: only snapshots that add or remove files of this partition (``{"dt": "2024-01-01"}`` or
        ``"dt=2024-01-01"``) fire.
    """

    def __init__(self, *, table: str, paimon_conn_id: str | None = None, warehouse: str | None = None,
                 poll_interval: float = 30.0, commit_kinds: Sequence[str] | str | None = None,
                 partition: Mapping[str, Any] | str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        if warehouse is None and paimon_conn_id is None:
            raise ValueError(f"watching {table}: give a paimon_conn_id (or a warehouse)")
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
        """The state-store key of this trigger's watermark (state is kept per asset): the table and the filters, so
        two watchers of one asset with different filters keep their own; at most Airflow's 512 characters."""
        key = f"{WATERMARK_KEY}:{self.table}"
        if self.commit_kinds:
            key += f":kinds={','.join(self.commit_kinds)}"
        if self.partition:
            key += f":partition={_spec_text(self.partition)}"
        if len(key) > MAX_KEY_LENGTH:
            key = f"{key[:MAX_KEY_LENGTH - 17]}:{hashlib.sha256(key.encode()).hexdigest()[:16]}"
        return key

    async def _state_store(self) -> tuple[Any, int | None]:
        """The watched asset's state-store accessor and the stored watermark; no accessor (None) on Airflow 3.2 or
        when several assets share this trigger."""
        store = getattr(self, "asset_state_store", None)
        if store is None:
            return None, None
        try:
            stored = await store.aget(self.watermark_key())
        except ValueError as e:
            if _MULTI_ASSET_ERROR not in str(e):
                raise
            self.log.warning("%s is watched by several assets: no watermark is kept, a restart starts after the "
                             "latest snapshot", self.table)
            return None, None
        return store, None if stored is None else int(stored)

    def _event(self, snap: NewSnapshot, warehouse: str) -> dict[str, Any]:
        info = snap.info
        payload = {"table": self.table, "warehouse": warehouse, "snapshot_id": info.snapshot_id,
                   "previous_snapshot_id": info.snapshot_id - 1 if info.snapshot_id > 1 else None,
                   **{k: v for k, v in info.to_dict().items() if k != "snapshot_id"}}
        if snap.properties:
            payload["properties"] = snap.properties
        return payload

    def _poll(self, w: _Watch) -> SnapshotPoll | None:
        """One poll (blocking: run in a thread): the catalog and the table opened once, then the new snapshots;
        None while the table does not exist and on the first poll without a stored watermark (which starts it)."""
        if w.catalog is None:  # the connection is fetched here, in the triggerer
            w.catalog = open_catalog(self.warehouse, self.paimon_conn_id)
        if w.table is None:
            w.table = open_table(w.catalog, self.table)
        if w.table is None:
            w.missing_at_start = w.missing_at_start or w.watermark is None
            return None
        if w.watermark is None:  # start after the latest snapshot (all of them for a table created since)
            w.watermark = 0 if w.missing_at_start else (w.table.latest_snapshot_id() or 0)
            w.started = True
            self.log.info("watching %s after snapshot %d", self.table, w.watermark)
            return None
        return new_snapshots(w.table, w.watermark, commit_kinds=self.commit_kinds, partition=w.partition,
                             limit=SNAPSHOTS_PER_POLL)

    def _failed(self, errors: int, error: Exception) -> None:
        self.log.warning("polling %s failed (%d/%d): %s", self.table, errors, MAX_CONSECUTIVE_ERRORS, error)
        if errors >= MAX_CONSECUTIVE_ERRORS:
            where = self.warehouse or f"connection {self.paimon_conn_id}"
            raise RuntimeError(f"watching {self.table} in {where}: {errors} polls in a row failed: "
                               f"{type(error).__name__}: {error}") from error

    def _note_gaps(self, poll: SnapshotPoll, w: _Watch) -> bool:
        """Log what the poll could not deliver (snapshots that expired unseen, a table rolled back below the
        watermark); True when the watermark moved back to the table's newest snapshot."""
        if poll.expired is not None:
            self.log.warning("snapshots %d..%d of %s expired before they were seen: no event for them",
                             *poll.expired, self.table)
        if poll.rolled_back_to is None:
            return False
        self.log.warning("snapshot %d of %s is gone and its newest is %d (rolled back, or re-created): watching "
                         "after %d", w.watermark, self.table, poll.rolled_back_to, poll.rolled_back_to)
        w.watermark = poll.rolled_back_to
        return True

    async def run(self) -> AsyncIterator[TriggerEvent]:
        store, stored = await self._state_store()
        key = self.watermark_key()
        w = _Watch(watermark=stored, partition=parse_partition_spec(self.partition))
        if w.watermark is not None:
            self.log.info("watching %s after snapshot %d (the stored watermark)", self.table, w.watermark)
        errors = 0
        try:
            while True:
                try:
                    poll = await asyncio.to_thread(self._poll, w)
                    errors = 0
                except Exception as e:  # noqa: BLE001 - retried, then raised
                    errors += 1
                    self._failed(errors, e)
                    poll = None
                if w.started and store is not None:  # a restart before the first new snapshot resumes from here
                    await store.aset(key, w.watermark)
                w.started = False
                if poll is not None and w.catalog is not None:
                    if self._note_gaps(poll, w) and store is not None:
                        await store.aset(key, w.watermark)
                    for snap in poll.snapshots:
                        if snap.matches:
                            yield TriggerEvent(self._event(snap, w.catalog.warehouse))  # type: ignore[no-untyped-call]
                        w.watermark = snap.info.snapshot_id
                        if store is not None:
                            await store.aset(key, w.watermark)
                    if len(poll.snapshots) >= SNAPSHOTS_PER_POLL:
                        continue  # a backlog: read on at once
                await asyncio.sleep(self.poll_interval)
        finally:  # cancelled (the watcher removed, the triggerer stopping): a metastore's connections go with it
            if w.catalog is not None:
                w.catalog.close()


def snapshot_of_event(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot facts (the trigger's event payload) of an Asset event's ``extra``: Airflow stores a watcher's
    payload as ``{"from_trigger": true, "payload": {...}}``."""
    payload = extra.get("payload") if extra.get("from_trigger") else None
    return dict(payload) if isinstance(payload, Mapping) else dict(extra)


def commits_asset(table: str, paimon_conn_id: str = DEFAULT_CONN_ID, *, poll_interval: float = 30.0,
                  commit_kinds: Sequence[str] | str | None = None, partition: Mapping[str, Any] | str | None = None,
                  warehouse: str | None = None) -> Asset:
    """The Asset of the commits to ``table``, watched by a :class:`PaimonTableSnapshotTrigger`: a DAG scheduled on
    it runs once per new snapshot (of ``commit_kinds``, touching ``partition``), whoever committed it.

    It is not the table's Asset (:func:`~paimon_provider.utils.assets.table_asset`, whose events the provider's
    operators emit): a DAG scheduled on both would run twice for a commit made by an Airflow task. Name
    ``paimon.<conn>.<db>.<table>.commits`` and URI ``paimon://<conn>/<db>/<table>?events=commits``, with the
    filters appended to both, so watchers with different filters are different Assets.
    """
    from airflow.sdk import Asset, AssetWatcher

    trigger = PaimonTableSnapshotTrigger(table=table, paimon_conn_id=paimon_conn_id, warehouse=warehouse,
                                         poll_interval=poll_interval, commit_kinds=commit_kinds, partition=partition)
    db, name = split_table(table)
    filters = {"kinds": ",".join(trigger.commit_kinds)} if trigger.commit_kinds else {}
    if trigger.partition:
        filters["partition"] = _spec_text(trigger.partition)
    suffix = "".join(f"[{k}={v}]" for k, v in filters.items())
    query = "".join(f"&{k}={quote(v, safe=',=')}" for k, v in filters.items())
    asset_name = f"paimon.{paimon_conn_id}.{db}.{name}.commits{suffix}"
    return Asset(name=asset_name, uri=f"{table_asset_uri(table, paimon_conn_id)}?events=commits{query}",
                 group="paimon", watchers=[AssetWatcher(name=f"{asset_name}.watcher", trigger=trigger)])
