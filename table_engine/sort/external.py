"""An external sort with bounded memory, vectorized: tables are buffered up to half a byte budget, each full half is
sorted and spilled to local Arrow IPC files (sorted runs) in the background while the other half fills, and the
runs are merged back a batch at a time.

The merge never compares rows one by one: each step takes, from every run's current batch, the rows at or below
the smallest last row among the runs that have more to come (no later row of any run can sort before it), sorts
those together and hands them out. Memory: a half being sorted (its rows, their sorted copy and keys) beside a half
filling while runs are made, then one batch per run plus the rows handed out in one step.

The order is given as Arrow sort keys over the table's columns (:func:`keyed`: the order's own columns, or a
z-order / Hilbert key column added to the rows and dropped from what is handed out).

Cores: a half is cut into one slice of rows per core (Arrow's CPU count: a Spark task's own cores), and the slices
are keyed, sorted and spilled in parallel (:func:`~table_engine.io.executor.parallel_map`: numpy and Arrow release
the GIL), each a run of its own; rows that fit half the budget are sorted the same way and merged in memory.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_enums import OrderType
from table_engine.io.executor import parallel_map, submit
from table_engine.sort.keys import KEY_COLUMN, key_bytes, keyed_indices, order_keys, sorted_with_keys

__all__ = ["ExternalSorter"]

log = logging.getLogger(__name__)

_MARK = "__bound"
MIN_SLICE_ROWS = 1 << 17
"""The fewest rows a buffer's slice sorted in a thread of its own gets (below it one thread sorts them all)."""
RUN_BATCHES = 16
"""Batches a run is merged in (a batch of every run is in memory at once while runs merge)."""


@dataclass
class ExternalSorter:
    """Sorts the tables :meth:`add` gets by ``strategy`` over ``columns`` within ``buffer_bytes`` of Arrow data
    buffered (two halves; a smaller buffer spills more runs, the result is the same); :meth:`sorted` hands the rows
    out in order. A context manager that removes its spill files."""

    strategy: OrderType
    columns: Sequence[str]
    buffer_bytes: int
    var_length: int = 8
    spill_dir: str | None = None
    _buffer: list[pa.Table] = field(default_factory=list)
    _buffered: int = 0
    _runs: list[str] = field(default_factory=list)
    _dir: str | None = None
    _spilling: Future[None] | None = None
    rows: int = 0

    def __enter__(self) -> ExternalSorter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the spill files (once a spill under way has ended)."""
        if self._spilling is not None:
            wait([self._spilling])
            self._spilling = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._runs = []

    @property
    def spilled_runs(self) -> int:
        return len(self._runs)

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.rows += table.num_rows
        self._buffer.append(table)
        self._buffered += table.nbytes
        if self._buffered >= self.buffer_bytes // 2:  # half the buffer fills while the other half is spilled
            self._finish_spill()
            if self._dir is None:
                self._dir = tempfile.mkdtemp(prefix="paimon-sort-", dir=self.spill_dir)
            rows = pa.concat_tables(self._buffer)
            self._buffer, self._buffered = [], 0
            self._spilling = submit(self._spill, rows)

    def _finish_spill(self) -> None:
        """Wait for the spill under way (its error raised here)."""
        if self._spilling is not None:
            spilling, self._spilling = self._spilling, None
            spilling.result()

    def sorted(self) -> Iterator[pa.Table]:
        """The rows added, in order (the key columns dropped)."""
        self._finish_spill()
        last: list[_Run] = []
        if self._buffer:  # the last buffer's runs stay in memory: the merge reads them where they are
            table = pa.concat_tables(self._buffer)
            self._buffer, self._buffered = [], 0
            runs = self._sorted_slices(table)
            if not self._runs and len(runs) == 1:  # it all fit in one slice: nothing to merge
                yield runs[0].select(table.column_names)
                return
            last = [_Run.of_table(r) for r in runs]
        if self._runs or last:
            yield from self._merge([*(_Run.of_file(path) for path in self._runs), *last])

    # ---- runs --------------------------------------------------------------------------------------------------
    def _slices(self, table: pa.Table) -> tuple[list[pa.Table], int]:
        """``table`` cut into a slice of rows per core (at least :data:`MIN_SLICE_ROWS` each), and the cores."""
        threads = max(1, min(pa.cpu_count(), table.num_rows // MIN_SLICE_ROWS))
        step = -(-table.num_rows // threads)
        return [table.slice(i, step) for i in range(0, table.num_rows, step)], threads

    def _sorted_slices(self, table: pa.Table) -> list[pa.Table]:
        """``table``'s slices, each sorted with its key columns, in parallel."""
        slices, threads = self._slices(table)
        return parallel_map(self._sort, slices, threads)

    def _sort(self, table: pa.Table) -> pa.Table:
        """``table``'s rows sorted, with the key columns (what a run holds)."""
        return sorted_with_keys(table, self.strategy, self.columns, self.var_length)

    def _spill(self, rows: pa.Table) -> None:
        """``rows`` cut into slices, sorted and written as runs in parallel (each run's memory freed once written);
        in the background, while the caller fills the buffer's other half."""
        assert self._dir is not None
        slices, threads = self._slices(rows)
        first = len(self._runs)
        paths = [os.path.join(self._dir, f"run-{first + i}.arrow") for i in range(len(slices))]
        parallel_map(self._spill_slice, list(zip(slices, paths, strict=True)), threads)
        self._runs.extend(paths)

    def _spill_slice(self, job: tuple[pa.Table, str]) -> None:
        rows, path = job
        run = self._sort(rows)
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, run.schema) as writer:
            for batch in run.to_batches(max_chunksize=_batch_rows(run.num_rows)):
                writer.write_batch(batch)
        log.info("sort spilled a run of %d rows to %s", run.num_rows, path)

    # ---- merge -------------------------------------------------------------------------------------------------
    def _merge(self, readers: list[_Run]) -> Iterator[pa.Table]:
        try:
            data_names = [n for n in readers[0].schema.names if not n.startswith("__")]
            sort_keys = order_keys(readers[0].schema, self.strategy, self.columns)
            while True:
                live = [r for r in readers if r.buffer.num_rows]
                if not live:
                    return
                waiting = [r for r in live if r.has_more]
                if not waiting:  # the last batch of every run: all of it
                    rest = pa.concat_tables([r.buffer for r in live])
                    yield rest.take(keyed_indices(rest, sort_keys)).select(data_names)
                    return
                lasts = pa.concat_tables([r.buffer.slice(r.buffer.num_rows - 1) for r in waiting])
                bound = lasts.take(keyed_indices(lasts, sort_keys)).slice(0, 1)
                parts = []
                for r in live:
                    n = _count_at_or_below(r.buffer, bound, sort_keys)
                    if n:
                        parts.append(r.buffer.slice(0, n))
                        r.buffer = r.buffer.slice(n)
                    if r.buffer.num_rows == 0:
                        r.advance()
                if parts:
                    out = pa.concat_tables(parts)
                    yield out.take(keyed_indices(out, sort_keys)).select(data_names)
        finally:
            for r in readers:
                r.close()


def _count_at_or_below(rows: pa.Table, bound: pa.Table, sort_keys: list[tuple[str, str, str]]) -> int:
    """How many of ``rows`` (sorted) sort at or before ``bound`` (one row): a binary search on a curve's key, else
    the bound's place when it is sorted in after its equals."""
    if len(sort_keys) == 1 and sort_keys[0][0] == KEY_COLUMN:
        keys, one = key_bytes(rows), key_bytes(bound)
        return int(np.searchsorted(keys, one[0], side="right"))
    both = pa.concat_tables([rows.append_column(_MARK, pa.array([0] * rows.num_rows, pa.int8())),
                             bound.append_column(_MARK, pa.array([1], pa.int8()))])
    order = pc.sort_indices(both, sort_keys=[*sort_keys, (_MARK, "ascending", "at_end")])
    return int(pc.index(order, pa.scalar(rows.num_rows, pa.uint64())).as_py())


def _batch_rows(rows: int) -> int:
    return max(1024, rows // RUN_BATCHES)


class _Run:
    """A sorted run (spilled to a file, or a table in memory) read a batch at a time, one batch ahead (so that
    :attr:`has_more` is known)."""

    def __init__(self, schema: pa.Schema, batches: int, get: Callable[[int], pa.RecordBatch],
                 file: pa.NativeFile | None = None) -> None:
        self._file = file
        self._get = get
        self.schema = schema
        self._next = 0
        self._batches = batches
        self.buffer: pa.Table = self.schema.empty_table()
        """The current batch's rows not handed out yet (empty once the run is read)."""
        self.advance()

    @staticmethod
    def of_file(path: str) -> _Run:
        file = pa.OSFile(path, "rb")
        reader = pa.ipc.open_file(file)
        return _Run(reader.schema, reader.num_record_batches, reader.get_batch, file)

    @staticmethod
    def of_table(table: pa.Table) -> _Run:
        batches = table.to_batches(max_chunksize=_batch_rows(table.num_rows))
        return _Run(table.schema, len(batches), batches.__getitem__)

    @property
    def has_more(self) -> bool:
        """Whether batches follow the current one."""
        return self._next < self._batches

    def advance(self) -> None:
        """Load the next batch (an empty buffer at the end)."""
        if self._next < self._batches:
            self.buffer = pa.Table.from_batches([self._get(self._next)])
            self._next += 1
        else:
            self.buffer = self.schema.empty_table()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

