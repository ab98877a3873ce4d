"""The maintenance planner: from a table's health (:class:`~table_engine.store.lifecycle.health.TableHealth`) and its
options, the maintenance that is due now, as a :class:`Plan` of :class:`Action` s. A pure function: no I/O.

Each action names its kind, what it acts on (partitions and buckets for compaction), the reason (the measured value
and the threshold it passed, both as numbers and as a sentence) and an estimate of the bytes it rewrites or deletes
(None where metadata alone cannot tell). Thresholds are the table's options, Paimon's where Paimon has one:

============================  ===================================================================================
action                        due when
============================  ===================================================================================
``compact`` (minor)           a bucket of a primary-key table has ``num-sorted-run.compaction-trigger`` sorted runs
                              or more; a bucket of an append table has ``compaction.min.file-num`` small files or
                              more; a partition has files in the postpone bucket (``bucket = -2``)
``compact`` (full)            a bucket's rows deleted by deletion vectors exceed ``compaction.delete-ratio-threshold``
                              of its rows
``expire-partitions``         ``partition.expiration-time`` is set and partitions are past it (the caller finds them
                              with a dry run of partition expiry: values need the partition time rules)
``compact-manifest``          ``manifest.merge-min-count`` small manifests or more (a dry run of ``compact-manifest``
                              counts them)
``expire-snapshots``          snapshots are expirable by ``snapshot.num-retained.min/max`` and
                              ``snapshot.time-retained``
``expire-changelogs``         long-lived changelogs are expirable by ``changelog.*``
``expire-tags``               tags are past their ``time-retained``
``remove-orphan-files``       orphan candidates were listed (health with ``orphans``: the table option
                              ``maintenance.remove-orphan-files.enabled``) and some exist
============================  ===================================================================================

The actions come in that order, the order to run them in: compaction first (it commits snapshots expiry then
handles), expiry after, orphans last (files the other actions freed are deleted by them, not left as orphans).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from table_engine.core_options import (
    BUCKET,
    CLUSTERING_STRATEGY,
    COMPACTION_DELETE_RATIO_THRESHOLD,
    COMPACTION_MIN_FILE_NUM,
    MAINTENANCE_ORPHANS_OLDER_THAN,
    MAINTENANCE_SORT_FILES_PER_VALUE,
    MANIFEST_MERGE_MIN_COUNT,
    PARTITION_EXPIRATION_TIME,
    CoreOptions,
)
from table_engine.format.bucket import POSTPONE_BUCKET
from table_engine.options.values import format_duration
from table_engine.sort.keys import clustering_strategy
from table_engine.store.lifecycle.health import BucketHealth, RetentionHealth, TableHealth
from table_engine.store.lifecycle.overlap import ColumnOverlap

__all__ = ["ACTION_KINDS", "Action", "ManifestState", "Plan", "Trigger", "compaction_triggers", "manifest_action",
           "manifest_due_text", "plan_maintenance"]

ACTION_KINDS = ("compact", "expire-partitions", "compact-manifest", "expire-snapshots", "expire-changelogs",
                "expire-tags", "remove-orphan-files")
"""Every action kind, in the order a plan runs them (each is the command of that name)."""


@dataclass(frozen=True)
class ManifestState:
    """What a dry run of ``compact-manifest`` found: the latest snapshot's data manifests, the small ones (below
    ``manifest.target-file-size``), their DELETE entries."""

    manifests: int
    small_manifests: int
    delete_entries: int


@dataclass(frozen=True)
class Trigger:
    """One compaction threshold of the table against its worst bucket: what the planner compares (the table page
    shows these, so that its figures and the plan cannot disagree).

    :param what: what is measured, per bucket (``sorted runs``, ``small files``, ``rows deleted by deletion
        vectors``, ``files in the postpone bucket``).
    :param worst: the worst bucket's value.
    :param threshold: the value from which an action is due.
    :param option: the option the threshold comes from.
    :param due: whether a bucket reached it.
    :param ratio: the values are shares (shown as percentages; due above the threshold, not at it).
    """

    what: str
    worst: float
    threshold: float
    option: str
    due: bool
    ratio: bool = False

    def text(self) -> str:
        """``worst bucket 3; not due: at 5 (num-sorted-run.compaction-trigger)``."""
        spec = ".1%" if self.ratio else "g"
        return (f"worst bucket {self.worst:{spec}}; {'due' if self.due else 'not due'}: "
                f"{'above' if self.ratio else 'at'} {self.threshold:{spec}} ({self.option})")


@dataclass(frozen=True)
class Action:
    """One due maintenance action.

    :param kind: one of :data:`ACTION_KINDS` (the command that runs it).
    :param reason: why, in one sentence (the measured value and the threshold it passed).
    :param measured: the measured value.
    :param threshold: the threshold it passed (the option's value).
    :param option: the option the threshold comes from.
    :param full: for ``compact``: a full compaction.
    :param partitions: for ``compact`` and ``expire-partitions``: the partitions (``k=v/k2=v2``; empty with an
        unpartitioned table: all of it).
    :param buckets: for ``compact``: the ``partition:bucket`` pairs that passed the threshold.
    :param estimated_bytes: bytes rewritten (compaction) or deleted (partitions, orphans); None: unknown from
        metadata.
    :param count: how many snapshots, changelogs, tags or files it removes (None for compaction).
    :param order_strategy: for ``compact``: a sort compaction in this order (``order``, ``zorder``, ``hilbert``).
    :param order_by: for a sort compaction: the columns.
    """

    kind: str
    reason: str
    measured: float
    threshold: float
    option: str
    full: bool = False
    partitions: list[str] = field(default_factory=list)
    buckets: list[str] = field(default_factory=list)
    estimated_bytes: int | None = None
    count: int | None = None
    order_strategy: str | None = None
    order_by: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """The actions due on ``table`` at its snapshot ``snapshot_id``, in the order to run them."""

    table: str
    snapshot_id: int | None
    actions: list[Action]

    @property
    def empty(self) -> bool:
        """Nothing is due."""
        return not self.actions

    def to_dict(self) -> dict[str, Any]:
        """JSON types only."""
        return asdict(self)


def plan_maintenance(health: TableHealth, options: CoreOptions, *, expired_partitions: Sequence[str] = (),
                     manifests: ManifestState | None = None, overlaps: Sequence[ColumnOverlap] = ()) -> Plan:
    """The maintenance due on the table of ``health`` with the options ``options`` (see the module docstring);
    ``expired_partitions`` (``k=v`` texts) and ``manifests`` are what dry runs of partition expiry and manifest
    compaction found (they need more than the health has); ``overlaps``: the files a filter on the first
    clustering column reads per partition (:func:`sort_columns` says when the planner needs them)."""
    sort, sorting = _sort(overlaps, options)
    actions = [*_compactions(health, options, sorting), *([sort] if sort is not None else [])]
    if expired_partitions:
        wanted = set(expired_partitions)
        size = sum(p.bytes for p in health.partitions if p.partition in wanted)
        ttl = options.get(PARTITION_EXPIRATION_TIME)
        actions.append(Action("expire-partitions", f"{_n(len(wanted), 'partition')} older than "
                              f"partition.expiration-time ({format_duration(int(ttl or 0))})", len(wanted),
                              float(ttl or 0),
                              PARTITION_EXPIRATION_TIME.key, partitions=sorted(wanted), estimated_bytes=size,
                              count=len(wanted)))
    manifest = None if manifests is None else manifest_action(manifests, options)
    if manifest is not None:
        actions.append(manifest)
    for kind, r, prefix in (("expire-snapshots", health.snapshots, "snapshot"),
                            ("expire-changelogs", health.changelogs, "changelog")):
        if r.expirable:
            over = bool(r.over_max)
            actions.append(Action(kind, _retention_reason(r, prefix), r.expirable,
                                  r.retain_max if over else r.time_retained_millis,
                                  f"{prefix}.num-retained.max" if over else f"{prefix}.time-retained",
                                  count=r.expirable))
    expired_tags = [t for t in health.tags if t.expired]
    if expired_tags:
        names = ", ".join(t.name for t in expired_tags[:5]) + (", ..." if len(expired_tags) > 5 else "")
        actions.append(Action("expire-tags", f"{_n(len(expired_tags), 'tag')} past their time-retained ({names})",
                              len(expired_tags), 0, "tag.default-time-retained", count=len(expired_tags)))
    o = health.orphans
    if o is not None and o.files:
        actions.append(Action("remove-orphan-files", f"{_n(o.files, 'file')} ({o.bytes} bytes) no snapshot, tag or "
                              f"changelog references, older than {_utc(o.older_than_millis)}",
                              o.files,
                              o.older_than_millis, MAINTENANCE_ORPHANS_OLDER_THAN.key, estimated_bytes=o.bytes,
                              count=o.files))
    return Plan(health.table, health.snapshot_id, actions)


def sort_columns(options: CoreOptions, primary_keys: Sequence[str]) -> tuple[str, ...]:
    """The columns a planned sort compaction orders by: ``clustering.columns`` of an append table with bucket = -1
    and no incremental clustering, when ``maintenance.sort.files-per-value`` is on; else none (no sort is planned,
    and the planner needs no overlap)."""
    if primary_keys or options.get(BUCKET) != -1 or options.clustering_incremental() \
            or not options.get(MAINTENANCE_SORT_FILES_PER_VALUE):
        return ()
    return options.clustering_columns()


def _sort(overlaps: Sequence[ColumnOverlap], options: CoreOptions) -> tuple[Action | None, set[str]]:
    """A sort compaction of the partitions where a filter on the first clustering column reads
    ``maintenance.sort.files-per-value`` files or more on average, and those partitions (``""``: an unpartitioned
    table); a plain compaction of them is not planned too (the sort rewrites every file)."""
    columns = options.clustering_columns()
    trigger = options.get(MAINTENANCE_SORT_FILES_PER_VALUE)
    due = [o for o in overlaps if o.files > 1 and o.mean_files_per_value >= trigger]
    if not due or not columns or not trigger:
        return None, set()
    worst = max(o.mean_files_per_value for o in due)
    strategy = clustering_strategy(options.get(CLUSTERING_STRATEGY), len(columns))
    return Action("compact", f"{_n(len(due), 'partition')} where a filter on {columns[0]} reads "
                  f"{trigger:g} files or more on average (worst {worst:.1f}; {MAINTENANCE_SORT_FILES_PER_VALUE.key}): "
                  f"sorted by {strategy.value}({', '.join(columns)})", worst, trigger,
                  MAINTENANCE_SORT_FILES_PER_VALUE.key, partitions=[o.partition for o in due if o.partition],
                  order_strategy=strategy.value, order_by=list(columns)), {o.partition for o in due}


def manifest_action(manifests: ManifestState, options: CoreOptions) -> Action | None:
    """The ``compact-manifest`` action when it is due (``manifest.merge-min-count`` small manifests or more), else
    None: the one rule the planner and the ``compact-manifest`` command's report share."""
    merge_min = options.get(MANIFEST_MERGE_MIN_COUNT)
    if manifests.small_manifests < merge_min:
        return None
    return Action("compact-manifest", f"{manifests.small_manifests} of {_n(manifests.manifests, 'manifest')} are "
                  f"small: manifest.merge-min-count is {merge_min}", manifests.small_manifests, merge_min,
                  MANIFEST_MERGE_MIN_COUNT.key)


def manifest_due_text(manifests: ManifestState, options: CoreOptions) -> str:
    """Why a manifest compaction is due or not, in one sentence (the command's report)."""
    action = manifest_action(manifests, options)
    if action is not None:
        return f"due: {action.reason}"
    merge_min = options.get(MANIFEST_MERGE_MIN_COUNT)
    return (f"not due: {manifests.small_manifests} of {_n(manifests.manifests, 'manifest')} are small, "
            f"manifest.merge-min-count is {merge_min}")


def _n(count: int, noun: str) -> str:
    """``1 bucket``, ``2 buckets``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _minor_rule(health: TableHealth, options: CoreOptions) -> tuple[Callable[[BucketHealth], int], int, str, str]:
    """The minor compaction trigger of the table: (the per-bucket count, its threshold, the option, what it
    counts): sorted runs of a primary-key table, small files of an append table."""
    if health.primary_key:
        return _sorted_runs, health.num_sorted_run_compaction_trigger, "num-sorted-run.compaction-trigger", \
            "sorted runs"
    if options.clustering_incremental():  # a clustering compaction is due as Paimon's picker would start one
        return _sorted_runs, health.num_sorted_run_compaction_trigger, "num-sorted-run.compaction-trigger", \
            "runs to cluster (a level-0 file each, one per level above)"
    return _small_files, options.get(COMPACTION_MIN_FILE_NUM), COMPACTION_MIN_FILE_NUM.key, "small files"


def compaction_triggers(health: TableHealth, options: CoreOptions) -> list[Trigger]:
    """The compaction thresholds of the table against its worst bucket, as :func:`plan_maintenance` applies them:
    the minor trigger (sorted runs or small files), the deletion-vector ratio, and the postpone backlog (only when
    the table has a postpone bucket)."""
    buckets = [b for b in health.buckets if b.bucket != POSTPONE_BUCKET]
    count, limit, option, what = _minor_rule(health, options)
    worst = max((count(b) for b in buckets), default=0)
    ratio = options.get(COMPACTION_DELETE_RATIO_THRESHOLD)
    worst_dv = max((b.deletion_vector_ratio for b in buckets if b.deleted_rows), default=0.0)
    out = [Trigger(what, worst, limit, option, bool(buckets) and worst >= limit),
           Trigger("share of rows deleted by deletion vectors", worst_dv, ratio,
                   COMPACTION_DELETE_RATIO_THRESHOLD.key, worst_dv > ratio, ratio=True)]
    postponed = [b.files for b in health.buckets if b.bucket == POSTPONE_BUCKET]
    if postponed:
        out.append(Trigger("files in the postpone bucket", max(postponed), 1, "bucket", max(postponed) >= 1))
    return out


def _compactions(health: TableHealth, options: CoreOptions, sorting: Collection[str] = ()) -> list[Action]:
    """A full compaction of the partitions whose deletion vectors passed the threshold, then a minor one of the
    partitions with too many sorted runs, small files or a postpone backlog (a partition in the full one is not
    compacted twice; nor is one in ``sorting``, which a sort compaction rewrites)."""
    ratio = options.get(COMPACTION_DELETE_RATIO_THRESHOLD)
    deleted = [b for b in health.buckets if b.bucket != POSTPONE_BUCKET and b.deleted_rows
               and b.deletion_vector_ratio > ratio and b.partition not in sorting]
    out = []
    if deleted:
        worst = max(b.deletion_vector_ratio for b in deleted)
        out.append(_compact(health, deleted, True, f"{_n(len(deleted), 'bucket')} with more rows deleted by deletion "
                            f"vectors than compaction.delete-ratio-threshold {ratio:.1%} (worst {worst:.1%})",
                            worst, ratio, COMPACTION_DELETE_RATIO_THRESHOLD.key))
    done = {b.partition for b in deleted} | set(sorting)
    count, limit, option, what = _minor_rule(health, options)
    over = [b for b in health.buckets if b.bucket != POSTPONE_BUCKET and count(b) >= limit and b.partition not in done]
    if over:
        worst_over = max(count(b) for b in over)
        out.append(_compact(health, over, False, f"{_n(len(over), 'bucket')} with {limit} {what} or more ({option}; "
                            f"worst {worst_over})", worst_over, limit, option))
        done |= {b.partition for b in over}
    postponed = [b for b in health.buckets if b.bucket == POSTPONE_BUCKET and b.files and b.partition not in done]
    if postponed:
        files = sum(b.files for b in postponed)
        out.append(_compact(health, postponed, False, f"{_n(files, 'file')} wait in the postpone bucket (bucket = -2) "
                            f"of {_n(len(postponed), 'partition')}", files, 1, "bucket"))
    return out


def _sorted_runs(b: BucketHealth) -> int:
    return b.sorted_runs


def _small_files(b: BucketHealth) -> int:
    return b.small_files


def _compact(health: TableHealth, buckets: Sequence[BucketHealth], full: bool, reason: str, measured: float,
             threshold: float, option: str) -> Action:
    """A compaction of the partitions of ``buckets`` (all of an unpartitioned table); the estimate: the bytes of
    those buckets (a full compaction: of every bucket of those partitions)."""
    parts = sorted({b.partition for b in buckets})
    size = (sum(b.bytes for b in health.buckets if b.partition in set(parts)) if full
            else sum(b.bytes for b in buckets))
    return Action("compact", reason, float(measured), float(threshold), option, full=full,
                  partitions=[p for p in parts if p], buckets=[_bucket_name(b) for b in buckets],
                  estimated_bytes=size)


def _bucket_name(b: BucketHealth) -> str:
    """``dt=2026-12-01 bucket 3``; ``bucket 3`` in an unpartitioned table."""
    return f"{b.partition} bucket {b.bucket}" if b.partition else f"bucket {b.bucket}"


def _retention_reason(r: RetentionHealth, prefix: str) -> str:
    most = "no max" if r.retain_max >= _NO_MAX else f"max {r.retain_max}"
    return (f"{r.expirable} of {_n(r.count, prefix)} expirable ({prefix}.num-retained min {r.retain_min}, {most}; "
            f"{prefix}.time-retained {format_duration(r.time_retained_millis)})")


_NO_MAX = 2**31 - 1
"""``*.num-retained.max`` at Java's Integer.MAX_VALUE (Paimon's default): no maximum."""


def _utc(millis: int) -> str:
    """``2026-12-06 17:40:00 UTC`` (the one timestamp form of plans and pages)."""
    return datetime.datetime.fromtimestamp(millis / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
