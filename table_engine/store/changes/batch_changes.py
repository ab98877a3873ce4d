"""Batch incremental reads: ``incremental-between``, ``incremental-between-timestamp`` and ``scan.mode`` latest-delta.

The range comes from :func:`table_engine.store.changes.starting.resolve_incremental`; delta and changelog ranges are
read as :mod:`table_engine.store.changes.incremental` changes, diff ranges (two tags by default, or
``incremental-between-scan-mode`` diff) as :mod:`table_engine.store.changes.diff`. A data-table read keeps the
``+I``/``+U`` rows without the row kind (-U and -D are dropped, as Paimon's batch reads do); the ``$audit_log`` table
keeps every row with its ``rowkind``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_enums import IncrementalBetweenScanMode, StartupMode
from table_engine.core_options import CoreOptions
from table_engine.format.snapshot import Snapshot, read_snapshot
from table_engine.predicate import Predicate
from table_engine.store.changes.diff import plan_diff
from table_engine.store.changes.incremental import ROWKIND_COLUMN, plan_changes
from table_engine.store.changes.starting import (
    LiveSnapshots,
    TagResolver,
    resolve_batch_start,
    resolve_incremental,
    startup_mode,
)
from table_engine.store.changes.stream_scan import AnySplit, iter_plan_splits
from table_engine.store.context import StoreContext

__all__ = ["batch_start_snapshot", "is_incremental", "needs_start_resolution", "plan_incremental",
           "read_incremental"]


def needs_start_resolution(options: CoreOptions) -> bool:
    """Whether a batch read with these options reads another snapshot than the latest (scan.mode and its
    options: from-snapshot, from-timestamp, compacted-full...)."""
    return startup_mode(options) not in (StartupMode.LATEST_FULL, StartupMode.LATEST, StartupMode.INCREMENTAL,
                                         StartupMode.LATEST_DELTA)


def batch_start_snapshot(ctx: StoreContext, tag: TagResolver) -> Snapshot | None:
    """The snapshot a batch read of ``scan.mode`` reads (see :func:`resolve_batch_start`)."""
    return resolve_batch_start(ctx.options, LiveSnapshots(ctx), tag)


def is_incremental(options: CoreOptions) -> bool:
    """Whether a batch read with these options reads changes rather than a snapshot."""
    return startup_mode(options) in (StartupMode.INCREMENTAL, StartupMode.LATEST_DELTA)


def plan_incremental(ctx: StoreContext, tag: TagResolver, predicates: Sequence[Predicate] = ()) -> list[AnySplit]:
    """The splits of the incremental read the options of ``ctx`` describe."""
    rng = resolve_incremental(ctx.options, LiveSnapshots(ctx), tag)
    if rng.empty:
        return []
    if rng.scan_mode is IncrementalBetweenScanMode.DIFF:
        before = rng.before if rng.before is not None else \
            (read_snapshot(ctx.file_io, ctx.table_path, rng.start) if rng.start > 0 else None)
        after = rng.after if rng.after is not None else read_snapshot(ctx.file_io, ctx.table_path, rng.end)
        return list(plan_diff(ctx, before, after, predicates))
    return list(plan_changes(ctx.file_io, ctx.table_path, ctx.schema, ctx.options, rng.start, rng.end, predicates,
                             scan_mode=rng.scan_mode))


def read_incremental(ctx: StoreContext, splits: Sequence[AnySplit], predicates: Sequence[Predicate] = (),
                     columns: Sequence[str] | None = None, with_row_kind: bool = False,
                     batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
    """Rows of incremental splits: with ``rowkind`` (all kinds) or without it (``+I``/``+U`` rows only)."""
    for batch in iter_plan_splits(ctx, splits, predicates, columns, batch_size):
        if with_row_kind:
            yield batch
            continue
        kinds = batch.column(ROWKIND_COLUMN)
        kept = batch.filter(pc.or_(pc.equal(kinds, "+I"), pc.equal(kinds, "+U")))
        if kept.num_rows:
            yield pa.RecordBatch.from_arrays(kept.columns[1:], schema=kept.schema.remove(0))
