"""An external sort with bounded memory, vectorized: tables are buffered up to a byte budget, each full buffer is
sorted and spilled to a local Arrow IPC file (a sorted run), and the runs are merged back a batch at a time.

The merge never compares rows one by one: each step takes, from every run's current batch, the rows at or below
the smallest last row among the runs that have more to come (no later row of any run can sort before it), sorts
those together with Arrow and hands them out. Memory: the buffer while runs are made, then one batch per run plus
the rows handed out in one step.

The order is given as Arrow sort keys over the table's columns (:func:`keyed`: the order's own columns, or a
z-order / Hilbert key column added to the rows and dropped from what is handed out).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_enums import OrderType
from table_engine.sort.keys import KEY_COLUMN, keyed_sort, order_keys

__all__ = ["ExternalSorter"]

log = logging.getLogger(__name__)

_MARK = "__bound"


@dataclass
class ExternalSorter:
    """Sorts the tables :meth:`add` gets by ``strategy`` over ``columns`` within ``buffer_bytes`` of Arrow data
    (a smaller buffer spills more runs; the result is the same); :meth:`sorted` hands the rows out in order, in
    tables of about ``buffer_bytes / 4``. A context manager that removes its spill files."""

    strategy: OrderType
    columns: Sequence[str]
    buffer_bytes: int
    var_length: int = 8
    spill_dir: str | None = None
    _buffer: list[pa.Table] = field(default_factory=list)
    _buffered: int = 0
    _runs: list[str] = field(default_factory=list)
    _dir: str | None = None
    rows: int = 0

    def __enter__(self) -> ExternalSorter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the spill files."""
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
        if self._buffered >= self.buffer_bytes:
            self._spill()

    def sorted(self) -> Iterator[pa.Table]:
        """The rows added, in order (the key columns dropped)."""
        if not self._runs:  # it all fit: one sort in memory
            if self._buffer:
                yield self._sort(pa.concat_tables(self._buffer))[0]
            self._buffer, self._buffered = [], 0
            return
        if self._buffer:
            self._spill()
        yield from self._merge()

    # ---- runs --------------------------------------------------------------------------------------------------
    def _sort(self, table: pa.Table) -> tuple[pa.Table, pa.Table]:
        """``table`` sorted, and its sorted rows with the key columns (what a run stores)."""
        with_keys, sort_keys = keyed_sort(table, self.strategy, self.columns, self.var_length)
        ordered = with_keys.take(pc.sort_indices(with_keys, sort_keys=sort_keys))
        return ordered.select(table.column_names), ordered

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="paimon-sort-", dir=self.spill_dir)
        _, run = self._sort(pa.concat_tables(self._buffer))
        self._buffer, self._buffered = [], 0
        path = os.path.join(self._dir, f"run-{len(self._runs)}.arrow")
        batch_rows = max(1024, run.num_rows // 64)
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, run.schema) as writer:
            for batch in run.to_batches(max_chunksize=batch_rows):
                writer.write_batch(batch)
        self._runs.append(path)
        log.info("sort spilled run %d (%d rows) to %s", len(self._runs), run.num_rows, path)

    # ---- merge -------------------------------------------------------------------------------------------------
    def _merge(self) -> Iterator[pa.Table]:
        readers = [_Run(path) for path in self._runs]
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
                    yield rest.take(pc.sort_indices(rest, sort_keys=sort_keys)).select(data_names)
                    return
                lasts = pa.concat_tables([r.buffer.slice(r.buffer.num_rows - 1) for r in waiting])
                bound = lasts.take(pc.sort_indices(lasts, sort_keys=sort_keys)).slice(0, 1)
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
                    yield out.take(pc.sort_indices(out, sort_keys=sort_keys)).select(data_names)
        finally:
            for r in readers:
                r.close()


def _count_at_or_below(rows: pa.Table, bound: pa.Table, sort_keys: list[tuple[str, str, str]]) -> int:
    """How many of ``rows`` (sorted) sort at or before ``bound`` (one row): a binary search on a curve's key, else
    the bound's place when it is sorted in after its equals."""
    if len(sort_keys) == 1 and sort_keys[0][0] == KEY_COLUMN:
        keys, one = _key_bytes(rows), _key_bytes(bound)
        return int(np.searchsorted(keys, one[0], side="right"))
    both = pa.concat_tables([rows.append_column(_MARK, pa.array([0] * rows.num_rows, pa.int8())),
                             bound.append_column(_MARK, pa.array([1], pa.int8()))])
    order = pc.sort_indices(both, sort_keys=[*sort_keys, (_MARK, "ascending", "at_end")])
    return int(pc.index(order, pa.scalar(rows.num_rows, pa.uint64())).as_py())


def _key_bytes(rows: pa.Table) -> np.ndarray:
    """The curve keys of ``rows`` as numpy fixed-width bytes (compared as unsigned bytes, as Arrow compares them)."""
    col = rows.column(KEY_COLUMN).combine_chunks()
    width = col.type.byte_width
    data = np.frombuffer(col.buffers()[1], dtype=f"S{width}")
    return data[col.offset:col.offset + len(col)]


class _Run:
    """A spilled run read a batch at a time, one batch ahead (so that :attr:`has_more` is known)."""

    def __init__(self, path: str) -> None:
        self._file = pa.OSFile(path, "rb")
        self._reader = pa.ipc.open_file(self._file)
        self.schema = self._reader.schema
        self._next = 0
        self._batches: int = self._reader.num_record_batches
        self.buffer: pa.Table = self.schema.empty_table()
        """The current batch's rows not handed out yet (empty once the run is read)."""
        self.advance()

    @property
    def has_more(self) -> bool:
        """Whether batches follow the current one."""
        return self._next < self._batches

    def advance(self) -> None:
        """Load the next batch (an empty buffer at the end)."""
        if self._next < self._batches:
            self.buffer = pa.Table.from_batches([self._reader.get_batch(self._next)])
            self._next += 1
        else:
            self.buffer = self.schema.empty_table()

    def close(self) -> None:
        self._file.close()

