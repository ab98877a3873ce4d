"""Paimon partitions as Airflow partition keys (AIP-76, partitioned assets; docs/partitions.md, ADR 0030).

One fact is decided here: a partition's key is its ``k=v,...`` text, the form the engine's commit facts report
(``commit.partitions``) and every ``partitions`` argument parses (``dt=2026-11-27``, ``dt=2026-11-27,h=5``). So
a writer's Asset event for a changed partition carries that key, a DAG scheduled per partition
(:func:`partitioned_schedule`) gets it as its run's ``partition_key``, and a task of that run passes it on as its
``partitions`` (:func:`run_partition_key`) without any translation.

Airflow's rule (``AssetManager._queue_dagruns``): an event with a partition key queues only DAGs scheduled per
partition, an event without one only DAGs scheduled on the plain Asset. So a committing operator names the
partitions only when asked (``partition_events=True``): for a table whose readers run per partition.

Airflow versions: partitioned timetables and ``DagRun.partition_key`` exist from 3.2; a task names the keys of
its asset events (``outlet_events[asset].add_partitions``) from the Task SDK of 3.3. Where that is missing, a
writer emits one event as before (it carries its run's partition key, if any: Airflow's default).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow.sdk import Asset
    from airflow.sdk.bases.timetable import BaseTimetable

__all__ = ["PARTITION_KEY_MAX_LENGTH", "add_partition_keys", "partition_keys_supported", "partitioned_schedule",
           "run_partition_key"]

log = logging.getLogger(__name__)

PARTITION_KEY_MAX_LENGTH = 250
"""Airflow stores a partition key in a column of this width (``OutletEventAccessor._PARTITION_KEY_MAX_LENGTH``)."""


def partition_keys_supported(accessor: Any) -> bool:
    """Can a task name the partition keys of this outlet's event (Task SDK 3.3+: ``add_partitions``)?"""
    return callable(getattr(accessor, "add_partitions", None))


def add_partition_keys(accessor: Any, partitions: Iterable[str]) -> list[str]:
    """Name ``partitions`` (``k=v,...`` texts) as the keys of the event of ``accessor`` (a concrete Asset's outlet
    event): Airflow then records one event per key. The keys added; none (one event without a key of its own, as
    before) where Airflow cannot take them (older Task SDK) or one is too long for its metadata database."""
    keys = [p for p in dict.fromkeys(partitions) if p]
    if not keys:
        return []
    if not partition_keys_supported(accessor):
        log.info("this Airflow cannot give asset events partition keys (outlet_events[...].add_partitions, 3.3+): "
                 "one event for partitions %s", keys[:5])
        return []
    too_long = [k for k in keys if len(k) > PARTITION_KEY_MAX_LENGTH]
    if too_long:
        log.warning("partition %r is longer than Airflow's partition keys (%d characters): one event without "
                    "partition keys", too_long[0][:80], PARTITION_KEY_MAX_LENGTH)
        return []
    accessor.add_partitions(keys)
    return keys


def run_partition_key(context: Mapping[str, Any]) -> str | None:
    """The partition key of the task's DAG run (Airflow 3.2+; None for a run without one, or an older Airflow)."""
    dag_run = context.get("dag_run")
    key = getattr(dag_run, "partition_key", None) if dag_run is not None else None
    return key if isinstance(key, str) and key else None


def partitioned_schedule(asset: Asset) -> BaseTimetable:
    """A schedule that starts one DAG run per partition key of ``asset``'s events (Airflow's
    ``PartitionedAssetTimetable``, identity mapping: the run's ``partition_key`` is the upstream partition's
    ``k=v,...`` text). A clear error on an Airflow without partitioned assets."""
    try:
        from airflow.sdk import PartitionedAssetTimetable
    except ImportError:  # pragma: no cover - Airflow < 3.2 is not supported; kept as a clear message
        raise RuntimeError("per-partition DAGs need Airflow 3.2+ (PartitionedAssetTimetable)") from None
    return PartitionedAssetTimetable(assets=asset)
