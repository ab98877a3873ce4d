"""The changelog consumption API: poll a table's changes as Arrow batches with row kinds, commit progress.

::

    consumer = table.changelog_consumer("etl", options={"scan.mode": "latest-full"})
    while True:
        polled = consumer.poll(max_snapshots=10)
        for batch in polled.batches():          # ``rowkind`` + the table's columns; one split at a time
            sink(batch)
        consumer.commit(polled.position)        # only now is the consumer file written

A :class:`ChangelogConsumer` wraps a :class:`~table_engine.store.changes.stream_scan.StreamScan`. With a consumer id, a
new consumer (e.g. after a restart) starts at the recorded ``nextSnapshot`` of ``consumer/consumer-<id>``: changes
committed before it are not repeated, and progress that was polled but not committed is read again (at-least-once
delivery of uncommitted batches, exactly-once for committed ones: Paimon's ``consumer.mode`` exactly-once; a
caller that commits every poll before processing it gets at-most-once). The consumer file also protects the
snapshots from ``nextSnapshot`` on from snapshot expiry. Without a consumer id the position is the caller's to keep
(:meth:`ChangelogConsumer.seek`). Without a recorded position the start is the table's ``scan.mode``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from table_engine.core_options import CONSUMER_ID
from table_engine.errors import ConsumerError
from table_engine.predicate import Predicate
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.changes.stream_scan import StreamPlan, StreamScan
from table_engine.store.context import StoreContext

__all__ = ["ChangelogConsumer", "PolledChanges"]


@dataclass(frozen=True)
class PolledChanges:
    """The result of one :meth:`ChangelogConsumer.poll`: plans of consecutive snapshots and the position after them.

    ``position``: the next snapshot id to read after these changes (None when the start is still unresolved, e.g.
    an empty table); pass it to :meth:`ChangelogConsumer.commit` once the batches are processed.
    """

    plans: tuple[StreamPlan, ...]
    position: int | None
    _scan: StreamScan
    _columns: tuple[str, ...] | None
    _batch_size: int

    @property
    def snapshot_ids(self) -> list[int]:
        return [p.snapshot_id for p in self.plans]

    @property
    def empty(self) -> bool:
        return not self.plans

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The change rows, ``rowkind`` first, in snapshot order; read lazily split by split."""
        for plan in self.plans:
            yield from self._scan.read(plan, self._columns, self._batch_size)

    def to_arrow(self) -> pa.Table:
        """All change rows as one table (use :meth:`batches` for bounded memory)."""
        return pa.Table.from_batches(list(self.batches()), schema=self._scan.output_schema(self._columns))


class ChangelogConsumer:
    """Consumes a table's changes (see the module docstring).

    ``consumer_id``: the Paimon consumer that records progress (None: progress is not stored). ``ctx`` carries the
    table options overlaid with read options (``scan.mode``, ``scan.snapshot-id``, ``consumer.ignore-progress``,
    ``streaming-read-overwrite``...).
    """

    def __init__(self, ctx: StoreContext, consumer_id: str | None = None, predicates: Sequence[Predicate] = (),
                 columns: Sequence[str] | None = None, batch_size: int = 65536,
                 scan_class: type[StreamScan] = StreamScan) -> None:
        configured = ctx.options.get(CONSUMER_ID)
        if consumer_id is not None and configured not in (None, consumer_id):
            raise ConsumerError(f"consumer id {consumer_id!r} differs from option {CONSUMER_ID.key} {configured!r}")
        consumer_id = consumer_id if consumer_id is not None else configured
        if consumer_id is not None:
            ConsumerManager(ctx.file_io, ctx.table_path).get(consumer_id)  # checks the id
            ctx = ctx.with_options({CONSUMER_ID.key: consumer_id})
        self.ctx = ctx
        self.consumer_id = consumer_id
        self.scan = scan_class(ctx, predicates)
        self.predicates = tuple(predicates)
        self.columns = tuple(columns) if columns is not None else None
        self.batch_size = batch_size

    @property
    def position(self) -> int | None:
        """The next snapshot id a poll reads (None before the start is resolved)."""
        return self.scan.checkpoint()

    @property
    def finished(self) -> bool:
        """A bounded read (``scan.bounded.watermark``) reached its end."""
        return self.scan.finished

    def poll(self, max_snapshots: int = 1, max_rows: int | None = None) -> PolledChanges:
        """Plan the changes of up to ``max_snapshots`` snapshots that have changes (the initial full snapshot
        counts as one), stopping early once ``max_rows`` (file row counts) are planned; empty when nothing new
        is committed. Reading happens when the result's batches are iterated."""
        if max_snapshots < 1:
            raise ConsumerError(f"max_snapshots must be at least 1, got {max_snapshots}")
        plans: list[StreamPlan] = []
        rows = 0
        while len(plans) < max_snapshots and (max_rows is None or rows < max_rows):
            plan = self.scan.plan()
            if plan is None:
                break
            plans.append(plan)
            rows += plan.row_count
        return PolledChanges(tuple(plans), self.scan.checkpoint(), self.scan, self.columns, self.batch_size)

    def commit(self, position: int | None) -> None:
        """Record that every change before snapshot ``position`` is processed (writes the consumer file)."""
        if position is None:
            return
        if self.consumer_id is None:
            raise ConsumerError("this changelog consumer has no consumer id: keep the position yourself "
                                "(ChangelogConsumer.seek) or give a consumer id")
        self.scan.notify_checkpoint_complete(position)

    def seek(self, position: int | None) -> None:
        """Continue polling at snapshot ``position`` (e.g. a position kept by the caller); None starts over."""
        self.scan.restore(position)
