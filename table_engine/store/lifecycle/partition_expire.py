"""Partition expiry and explicit partition drops (Paimon's ``PartitionExpire``, ``PartitionTimeExtractor``).

Expiring or dropping partitions is a *logical* drop: one OVERWRITE commit deleting every file (and index file)
of the partitions. The files stay on disk while older snapshots or tags use them and go away with snapshot
expiry, like any deleted file.

Strategies (``partition.expiration-strategy``):

* ``values-time``: the partition's time comes from its values -- ``partition.timestamp-pattern`` (``$dt``,
  ``$dt $hour:00:00``, ``$year-$month-$day``; default: the first partition value) gives a string, parsed with
  ``partition.timestamp-formatter`` (a Java ``DateTimeFormatter`` pattern such as ``yyyyMMdd``, ``yyyy-MM-dd HH``;
  default: ``yyyy-MM-dd[ HH:mm:ss[.S]]`` with 1-2 digit fields). A partition expires when that time is before
  ``now - partition.expiration-time`` (local wall-clock time, like Java's ``LocalDateTime.now()``). The time of a
  daily partition is the start of its day, so with ``'1 d'`` the partition of day D is dropped from D+1 00:00 on,
  i.e. yesterday's partition goes early this morning -- Paimon's intended semantics (apache/paimon#5812).
  Values that do not parse (or are null) are never expired.
* ``update-time``: a partition expires when its newest file was created before ``now - expiration-time``.

At most ``partition.expiration-max-num`` partitions (in value order) expire per run, committed in batches of
``partition.expiration-batch-size``. Writers check at commit time every ``partition.expiration-check-interval``
(tracked per process and table; the first commit of a process checks).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from table_engine import clock
from table_engine.core_enums import PartitionExpireStrategy
from table_engine.core_options import default_commit_user
from table_engine.errors import OptionError, PartitionSpecError, SchemaError
from table_engine.format.binary_row import decode_row
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from table_engine.io.paths import partition_value_string
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs, partition_specs, select_partitions
from table_engine.store.partition_time import PartitionTimeExtractor, java_formatter_regex
from table_engine.store.reading.on_latest import on_latest
from table_engine.store.reading.scan import live_entries

__all__ = ["PartitionExpireResult", "PartitionTimeExtractor", "drop_partitions", "expire_partitions",
           "java_formatter_regex"]

log = logging.getLogger(__name__)

_LAST_CHECK: dict[str, int] = {}  # table path -> epoch ms of the last commit-time check in this process

# ------------------------------------------------------------------------------------------------ expiry


@dataclass
class PartitionExpireResult:
    """Partitions dropped (as ``{key: value string}``) and the snapshots of the drop commits."""

    partitions: list[dict[str, str]] = field(default_factory=list)
    snapshot_ids: list[int] = field(default_factory=list)


def expire_partitions(ctx: StoreContext, *, expiration_time: int | str | None = None,
                      strategy: str | None = None, timestamp_formatter: str | None = None,
                      timestamp_pattern: str | None = None, max_expires: int | None = None,
                      now: datetime.datetime | None = None, dry_run: bool = False) -> PartitionExpireResult:
    """Drop expired partitions; arguments override the table options (Paimon's ``expire_partitions``)."""
    opts = ctx.options
    if isinstance(expiration_time, str):
        from table_engine.options import parse_duration

        expiration_time = parse_duration(expiration_time, key="expiration_time")
    expiration = expiration_time if expiration_time is not None else opts.partition_expiration_time()
    if expiration is None:
        raise OptionError("partition expiry needs partition.expiration-time (or an expiration_time argument)")
    if not ctx.schema.partition_keys:
        raise SchemaError(f"table {ctx.table_path} is not partitioned: no partitions to expire")
    kind = PartitionExpireStrategy(strategy) if strategy else opts.partition_expiration_strategy()
    max_num = max_expires if max_expires is not None else opts.partition_expiration_max_num()
    now = now or clock.now_local()
    cutoff = now - datetime.timedelta(milliseconds=expiration)
    parts = on_latest(ctx, lambda snap: _partitions(ctx, snap), "partition expiry")
    keys = list(ctx.schema.partition_keys)
    expired: list[tuple[list[str], tuple[Any, ...]]] = []
    if kind is PartitionExpireStrategy.VALUES_TIME:
        extractor = PartitionTimeExtractor(timestamp_pattern or opts.partition_timestamp_pattern(),
                                           timestamp_formatter or opts.partition_timestamp_formatter())
        extractor.check_pattern(keys)
        for values, strings, _ in parts:
            if any(v is None for v in values):
                log.warning("partition %s of %s has a null value: not expired by values-time", strings, ctx.table_path)
                continue
            try:
                part_time = extractor.extract(keys, strings)
            except (ValueError, OverflowError) as e:
                log.warning("cannot extract a time from partition %s of %s (%s): not expired; use the update-time "
                            "strategy or drop it explicitly", dict(zip(keys, strings)), ctx.table_path, e)
                continue
            if cutoff > part_time:
                expired.append((strings, values))
    else:
        cutoff_ms = int(cutoff.timestamp() * 1000)
        expired = [(strings, values) for values, strings, last in parts if cutoff_ms > last]
    expired.sort(key=lambda x: ",".join(x[0]))
    expired = expired[:max_num]
    result = PartitionExpireResult([dict(zip(keys, s)) for s, _ in expired])
    if not expired or dry_run:
        return result
    batch = opts.partition_expiration_batch_size() or len(expired)
    for start in range(0, len(expired), batch):
        chunk = expired[start:start + batch]
        sid = _commit_drop(ctx, [v for _, v in chunk])
        if sid is not None:
            result.snapshot_ids.append(sid)
    log.info("expired %d partitions of %s: %s", len(expired), ctx.table_path, result.partitions)
    return result


def drop_partitions(ctx: StoreContext, partitions: PartitionSpecs, ignore_if_missing: bool = False) -> int | None:
    """Drop the partitions matching any of the specs (typed against the partition columns, see
    :mod:`table_engine.store.partition_spec`); a spec may name a subset of the partition keys.

    One OVERWRITE commit; returns its snapshot id. A spec that matches no partition is a PartitionSpecError and
    nothing is dropped; with ``ignore_if_missing`` it is logged instead (no commit, None, when none matches).
    """
    fields = ctx.schema.partition_fields()
    specs = partition_specs(partitions, fields, ctx.options.partition_default_name(), ctx.table_path) or []
    if not specs:
        raise PartitionSpecError(f"drop_partitions of {ctx.table_path} needs at least one partition spec")
    live = on_latest(ctx, lambda snap: {e.partition for e in live_entries(ctx.file_io, ctx.table_path, snap)},
                     "drop_partitions")
    selected = select_partitions(live, specs, fields, require_match=not ignore_if_missing, what="drop_partitions",
                                 table=ctx.table_path)
    if not selected:
        log.info("drop_partitions of %s: %s match no partition (already gone): nothing to drop", ctx.table_path,
                 [str(s) for s in specs])
        return None
    types = [f.type for f in fields]
    return _commit_drop(ctx, [tuple(decode_row(p, types)) for p in sorted(selected)])


def commit_time_check_due(ctx: StoreContext, commit_identifier: int, now_ms: int | None = None) -> bool:
    """Is the per-process ``partition.expiration-check-interval`` up (or an end-of-input batch commit)?"""
    opts = ctx.options
    if opts.partition_expiration_time() is None or not ctx.schema.partition_keys:
        return False
    now_ms = clock.now_millis() if now_ms is None else now_ms
    interval = opts.partition_expiration_check_interval()
    last = _LAST_CHECK.get(ctx.table_path)
    due = (last is None or interval == 0 or now_ms > last + interval
           or (opts.end_input_check_partition_expire() and commit_identifier == BATCH_COMMIT_IDENTIFIER))
    if due:
        _LAST_CHECK[ctx.table_path] = now_ms
    return due


def _partitions(ctx: StoreContext, snap: Snapshot | None) -> list[tuple[tuple[Any, ...], list[str], int]]:
    """(values, value strings, newest file creation ms) of every partition of ``snap`` (the latest snapshot)."""
    if snap is None:
        return []
    fields = ctx.schema.partition_fields()
    types = [f.type for f in fields]
    default = ctx.options.partition_default_name()
    newest: dict[bytes, int] = {}
    for e in live_entries(ctx.file_io, ctx.table_path, snap):
        t = e.file.creation_time_millis or 0
        newest[e.partition] = max(newest.get(e.partition, 0), t)
    out = []
    for part, last in newest.items():
        values = tuple(decode_row(part, types))
        strings = [partition_value_string(v, t, default) for v, t in zip(values, types)]
        out.append((values, strings, last))
    return out


def _commit_drop(ctx: StoreContext, values: Sequence[tuple[Any, ...]]) -> int | None:
    keys = list(ctx.schema.partition_keys)
    specs = tuple(dict(zip(keys, v)) for v in values)
    commit = FileStoreCommit(ctx, default_commit_user(ctx.options))
    return commit.commit([], BATCH_COMMIT_IDENTIFIER, overwrite=Overwrite(drop_partitions=specs))
