"""Streaming scans: a start (``scan.mode``, or a consumer's position), then one snapshot's changes per plan.

Mirrors Paimon's ``DataTableStreamScan``. The first :meth:`StreamScan.plan` resolves the start
(:func:`table_engine.store.changes.starting.resolve_stream_start`): a full snapshot (modes latest-full, compacted-full,
from-snapshot-full) or nothing; with ``changelog-producer`` lookup the full phase reads only files above level 0
(level-0 changes reach the stream through the changelog of a later compaction), with full-compaction only the top
level. Each later plan holds the changes of one snapshot (:class:`ChangeSplit`):

* ``changelog-producer`` none: the data files each APPEND snapshot added (COMPACT and OVERWRITE snapshots skipped);
* input / lookup / full-compaction: the changelog files of any snapshot that has a changelog manifest list;
* OVERWRITE snapshots with ``streaming-read-overwrite``: the diff of the files they replaced and added
  (:mod:`table_engine.store.changes.diff`); an append table with ``streaming-read-append-overwrite`` reads only what
  they added.

Snapshots without changes are skipped; :meth:`plan` returns None when there is no new snapshot (poll again later)
or the read ended (``scan.bounded.watermark``; :attr:`StreamScan.finished`). The position, :meth:`checkpoint`, is the
next snapshot id; :meth:`restore` resumes from one, and :meth:`notify_checkpoint_complete` records it as the
``consumer-id`` consumer, which resumes there when a new scan starts and protects those snapshots from expiry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from table_engine import clock as engine_clock
from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import (
    CONSUMER_ID,
    SCAN_BOUNDED_WATERMARK,
    STREAMING_READ_APPEND_OVERWRITE,
    STREAMING_READ_OVERWRITE,
    STREAMING_READ_SNAPSHOT_DELAY,
    CoreOptions,
)
from table_engine.errors import SnapshotNotExistError
from table_engine.features import Op, require
from table_engine.format.feature_detection import snapshot_features
from table_engine.format.snapshot import CommitKind, Snapshot, earliest_snapshot_id, list_snapshot_ids, read_snapshot
from table_engine.predicate import Predicate
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.changes.diff import DiffSplit, iter_diff, plan_overwrite_diff
from table_engine.store.changes.incremental import (
    ROWKIND_COLUMN,
    ChangeSplit,
    changes_schema,
    iter_changes,
    plan_snapshot_changes,
)
from table_engine.store.changes.starting import LiveSnapshots, StartingPoint, resolve_stream_start
from table_engine.store.context import StoreContext
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.scan import Split, plan_splits

__all__ = ["FULL", "StreamPlan", "StreamScan", "follow_up_plan", "full_plan", "iter_plan_splits", "next_snapshot",
           "stream_start"]

log = logging.getLogger(__name__)

FULL, DELTA, CHANGELOG, OVERWRITE = "full", "delta", "changelog", "overwrite"
AnySplit = Split | ChangeSplit | DiffSplit


@dataclass(frozen=True)
class StreamPlan:
    """What one :meth:`StreamScan.plan` returns: the splits of one snapshot, read in full or as its changes.

    ``kind``: ``full`` (rows of the snapshot, all ``+I``), ``delta`` (added data files), ``changelog`` (changelog
    files) or ``overwrite`` (diff of an OVERWRITE). ``next_snapshot``: the scan position after this plan.
    """

    snapshot_id: int
    kind: str
    splits: tuple[AnySplit, ...]
    next_snapshot: int

    @property
    def row_count(self) -> int:
        return sum(s.row_count for s in self.splits)


class StreamScan:
    """A streaming scan of a table (see the module docstring). Not thread-safe; cheap to create."""

    def __init__(self, ctx: StoreContext, predicates: Sequence[Predicate] = (),
                 clock: Callable[[], float] = lambda: engine_clock.now_millis() / 1000) -> None:
        self.ctx = ctx
        self.options: CoreOptions = ctx.options
        self.predicates = list(predicates)
        self.consumer_id = self.options.get(CONSUMER_ID)
        self._clock = clock
        self._next: int | None = None
        self.start: StartingPoint | None = None
        self._table_was_empty = not list_snapshot_ids(ctx.file_io, ctx.table_path)
        self.finished = False

    # ---- position ----------------------------------------------------------------------------------------------
    def checkpoint(self) -> int | None:
        """The next snapshot id to read (None before the start is resolved)."""
        return self._next

    def restore(self, next_snapshot: int | None) -> None:
        """Resume at ``next_snapshot`` (as returned by :meth:`checkpoint`); None starts over."""
        self._next = next_snapshot
        self.finished = False

    def notify_checkpoint_complete(self, next_snapshot: int | None) -> None:
        """Every change before ``next_snapshot`` is processed: record it as the ``consumer-id`` consumer."""
        if next_snapshot is None or self.consumer_id is None:
            return
        self.consumer_manager().update(self.consumer_id, next_snapshot)
        log.info("%s: consumer %s at snapshot %d", self.ctx.table_path, self.consumer_id, next_snapshot)

    def consumer_manager(self) -> ConsumerManager:
        return ConsumerManager(self.ctx.file_io, self.ctx.table_path)

    # ---- planning ----------------------------------------------------------------------------------------------
    def plan(self) -> StreamPlan | None:
        """The next plan: the full snapshot first (per mode), then the changes of the next snapshot with any;
        None when nothing new is committed yet or the read :attr:`finished`."""
        if self.finished:
            return None
        if self._next is None:
            first = self._first_plan()
            if first is not None or self._next is None:
                return first
        return self._next_plan()

    def _first_plan(self) -> StreamPlan | None:
        start = stream_start(self.ctx, self._table_was_empty)
        self.start = start
        if start.waiting:
            return None
        if start.full_snapshot is None:
            self._next = start.next_snapshot
            log.info("%s: stream starts at snapshot %s", self.ctx.table_path, self._next)
            return None
        snap = read_snapshot(self.ctx.file_io, self.ctx.table_path, start.full_snapshot)
        require(self.ctx.table_path, snapshot_features(snap), Op.READ)
        plan = full_plan(self.ctx, snap, self.predicates)
        self._next = snap.id + 1
        self._check_bounded(snap)
        log.info("%s: stream starts with snapshot %d in full (%d splits)", self.ctx.table_path, snap.id,
                 len(plan.splits))
        return plan

    def _next_plan(self) -> StreamPlan | None:
        while True:
            assert self._next is not None
            sid = self._next
            snap = self._fetch(sid)
            if snap is None or self._delayed(snap):
                return None
            if self._check_bounded(snap):
                return None
            plan = follow_up_plan(self.ctx, snap, self.predicates)
            self._next = sid + 1
            if plan is not None and plan.splits:
                return plan

    def _fetch(self, sid: int) -> Snapshot | None:
        return next_snapshot(self.ctx, sid)

    def _delayed(self, snap: Snapshot) -> bool:
        delay = self.options.get(STREAMING_READ_SNAPSHOT_DELAY)
        return delay is not None and snap.time_millis > self._clock() * 1000 - delay

    def _check_bounded(self, snap: Snapshot) -> bool:
        bound = self.options.get(SCAN_BOUNDED_WATERMARK)
        if bound is not None and snap.watermark is not None and snap.watermark > bound:
            self.finished = True
        return self.finished

    # ---- reading -----------------------------------------------------------------------------------------------
    def read(self, plan: StreamPlan, columns: Sequence[str] | None = None,
             batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
        """The rows of ``plan`` with a leading ``rowkind`` column, split by split (bounded memory)."""
        yield from iter_plan_splits(self.ctx, plan.splits, self.predicates, columns, batch_size)

    def output_schema(self, columns: Sequence[str] | None = None) -> pa.Schema:
        """The schema of :meth:`read`'s batches."""
        schema = changes_schema(self.ctx.schema)
        return schema if columns is None else pa.schema([schema.field(n) for n in (ROWKIND_COLUMN, *columns)])


def stream_start(ctx: StoreContext, table_was_empty: bool = False) -> StartingPoint:
    """Where a stream read of ``ctx`` (its options: ``scan.mode``, ``consumer-id``...) starts now; reads the
    snapshots and the consumer file (see :func:`resolve_stream_start`)."""
    options = ctx.options
    consumer_next = None
    consumer_id = options.get(CONSUMER_ID)
    if consumer_id is not None:
        consumer = ConsumerManager(ctx.file_io, ctx.table_path).get(consumer_id)
        consumer_next = consumer.next_snapshot if consumer is not None else None
    return resolve_stream_start(options, LiveSnapshots(ctx), consumer_next, table_was_empty)


def next_snapshot(ctx: StoreContext, sid: int) -> Snapshot | None:
    """Snapshot ``sid`` for a stream read: None if it is not committed yet; SnapshotNotExistError if it expired."""
    try:
        snap = read_snapshot(ctx.file_io, ctx.table_path, sid)
        require(ctx.table_path, snapshot_features(snap), Op.READ)  # the capability gate, per snapshot streamed
        return snap
    except SnapshotNotExistError:
        earliest = earliest_snapshot_id(ctx.file_io, ctx.table_path)
        if earliest is not None and sid < earliest:
            raise SnapshotNotExistError(
                f"the next snapshot {sid} of the stream read of {ctx.table_path} has expired (earliest is "
                f"{earliest}): changes were lost; read with a consumer-id so snapshot expiry keeps the "
                "snapshots a reader still needs") from None
        return None


def full_plan(ctx: StoreContext, snap: Snapshot, predicates: Sequence[Predicate] = ()) -> StreamPlan:
    """The full phase of a stream read at ``snap``: its merged rows (all ``+I``); with ``changelog-producer`` lookup
    only files above level 0, with full-compaction only top-level files."""
    splits = plan_splits(ctx.file_io, ctx.table_path, snap, ctx.schema, predicates, ctx.schema_by_id,
                         merge_capabilities=ctx.merge_capabilities)
    producer = ctx.options.changelog_producer()
    if ctx.schema.primary_keys and producer in (ChangelogProducer.LOOKUP, ChangelogProducer.FULL_COMPACTION):
        top = ctx.options.num_levels() - 1
        keep: Callable[[int], bool] = (lambda lv: lv > 0) if producer == ChangelogProducer.LOOKUP \
            else (lambda lv: lv == top)
        splits = [s for s in (replace(s, files=[f for f in s.files if keep(f.level)]) for s in splits) if s.files]
    return StreamPlan(snap.id, FULL, tuple(splits), snap.id + 1)


def follow_up_plan(ctx: StoreContext, snap: Snapshot, predicates: Sequence[Predicate] = ()) -> StreamPlan | None:
    """The changes a stream read takes from one snapshot (None: it is skipped), per the module docstring."""
    fio, path, schema, options = ctx.file_io, ctx.table_path, ctx.schema, ctx.options
    if snap.commit_kind == CommitKind.OVERWRITE:
        if not schema.primary_keys and options.get(STREAMING_READ_APPEND_OVERWRITE):
            added = plan_snapshot_changes(fio, path, schema, snap, False, predicates)
            return StreamPlan(snap.id, OVERWRITE, tuple(added), snap.id + 1)
        if options.get(STREAMING_READ_OVERWRITE):
            return StreamPlan(snap.id, OVERWRITE, tuple(plan_overwrite_diff(ctx, snap, predicates)), snap.id + 1)
    if options.changelog_producer() != ChangelogProducer.NONE:
        if not snap.changelog_manifest_list:
            return None
        splits = plan_snapshot_changes(fio, path, schema, snap, True, predicates)
        return StreamPlan(snap.id, CHANGELOG, tuple(splits), snap.id + 1)
    if snap.commit_kind != CommitKind.APPEND:
        return None
    splits = plan_snapshot_changes(fio, path, schema, snap, False, predicates)
    return StreamPlan(snap.id, DELTA, tuple(splits), snap.id + 1)


def iter_plan_splits(ctx: StoreContext, splits: Sequence[AnySplit], predicates: Sequence[Predicate] = (),
                     columns: Sequence[str] | None = None, batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
    """Rows of snapshot splits (``+I``), change splits and diff splits, as ``rowkind`` + table columns."""
    schema = changes_schema(ctx.schema)
    names = [ROWKIND_COLUMN, *(columns if columns is not None else ctx.schema.field_names())]
    rctx = read_context(ctx)
    reader: TableRead | None = None
    for split in splits:
        batches: Iterator[pa.RecordBatch]
        if isinstance(split, ChangeSplit):
            batches = iter_changes(ctx, split, predicates, batch_size, rctx)
        elif isinstance(split, DiffSplit):
            batches = iter_diff(ctx, split, predicates, batch_size)
        else:
            reader = reader or TableRead(rctx, None, predicates)
            batches = (pa.RecordBatch.from_arrays([pa.repeat(pa.scalar("+I"), b.num_rows), *b.columns],
                                                  schema=schema)
                       for b in reader.to_batches([split], batch_size))
        for b in batches:
            yield b if columns is None else b.select(names)
