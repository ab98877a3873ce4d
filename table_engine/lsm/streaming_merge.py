"""A streaming k-way merge of sorted runs of key-value records, in bounded memory.

Each input run is an iterator of Arrow tables (chunks, e.g. Parquet row groups / record batches read file after
file) whose rows are sorted by key and hold at most one record per key (every data file, every sorted run of a
bucket and every spilled write-buffer run does). The merge repeatedly picks a cut-off key, the smallest *last key
of the current chunk* among the runs that still have more chunks, takes every run's buffered rows with a key
<= cut-off (a prefix of each buffer: one vectorized comparison on the key columns), concatenates them, sorts them
by :meth:`MergeOrder.sort_keys` and merges them with the table's :class:`MergeFunction` (the one the in-memory
paths use). No record of a taken key can follow in any run, so merging piece by piece equals merging everything at
once. Memory is bounded by (number of runs x chunk size) plus one output piece.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.merge_engines.function import MergeFunction, sort_and_merge
from table_engine.lsm.sort import MergeOrder, concat_tables, take_sorted

__all__ = ["FileRoller", "rows_up_to", "streaming_merge"]

T = TypeVar("T")


class _Run:
    """One input run: the rows buffered from its current chunk(s) and the chunks still to come."""

    def __init__(self, chunks: Iterator[pa.Table]) -> None:
        self.chunks = chunks
        self.buffer: pa.Table | None = None
        self.exhausted = False

    def fill(self) -> None:
        """Pull chunks until the buffer holds rows or the run ends."""
        while (self.buffer is None or self.buffer.num_rows == 0) and not self.exhausted:
            nxt = next(self.chunks, None)
            if nxt is None:
                self.exhausted = True
            else:
                self.buffer = nxt

    def has_rows(self) -> bool:
        return self.buffer is not None and self.buffer.num_rows > 0


def rows_up_to(table: pa.Table, key_cols: Sequence[str], cutoff: Sequence[pa.Scalar]) -> int:
    """How many leading rows of ``table`` (sorted by ``key_cols``, no null keys) have a key <= ``cutoff``
    (lexicographic over the key columns, vectorized)."""
    if table.num_rows == 0:
        return 0
    mask: pa.ChunkedArray | pa.Array | None = None
    for k, c in reversed(list(zip(key_cols, cutoff))):
        col = table.column(k)
        if mask is None:
            mask = pc.less_equal(col, c)
        else:
            mask = pc.or_(pc.less(col, c), pc.and_(pc.equal(col, c), mask))
    assert mask is not None
    return int(pc.sum(mask).as_py() or 0)


def _last_key(table: pa.Table, key_cols: Sequence[str]) -> tuple[pa.Scalar, ...]:
    i = table.num_rows - 1
    return tuple(table.column(k)[i] for k in key_cols)


def _key_value(key: Sequence[pa.Scalar]) -> tuple[object, ...]:
    return tuple(s.as_py() for s in key)


def streaming_merge(runs: Iterable[Iterator[pa.Table]], order: MergeOrder, merge_function: MergeFunction | None,
                    ) -> Iterator[pa.Table]:
    """Merge sorted ``runs`` (each with one record per key) into key-ordered tables with one record per key.

    The runs are given oldest first where that matters (records of equal key and equal ordering keep the run order,
    as a stable sort of the runs concatenated would). ``merge_function`` None: the runs hold disjoint keys (one
    sorted run), pieces are only ordered, never merged; otherwise every piece is merged with it. The yielded tables
    have the runs' schema."""
    state = [_Run(iter(r)) for r in runs]
    key_cols = list(order.key_cols)
    while True:
        for r in state:
            r.fill()
        live = [r for r in state if r.has_rows()]
        if not live:
            return
        open_runs = [r for r in live if not r.exhausted]
        pieces: list[pa.Table] = []
        if not open_runs:  # every run's rest is buffered: merge it all
            for r in live:
                assert r.buffer is not None
                pieces.append(r.buffer)
                r.buffer = None
        else:
            lasts = [_last_key(r.buffer, key_cols) for r in open_runs if r.buffer is not None]
            cutoff = min(lasts, key=_key_value)
            for r in live:
                assert r.buffer is not None
                n = rows_up_to(r.buffer, key_cols, cutoff)
                if n:
                    pieces.append(r.buffer.slice(0, n))
                    r.buffer = r.buffer.slice(n)
        out = _merge_pieces(pieces, order, merge_function)
        if out.num_rows:
            yield out


def _merge_pieces(pieces: list[pa.Table], order: MergeOrder, fn: MergeFunction | None) -> pa.Table:
    if fn is None:  # disjoint keys: only order them
        return pieces[0] if len(pieces) == 1 else take_sorted(concat_tables(pieces),
                                                              [(k, "ascending") for k in order.key_cols])
    # merged even when one run holds all of the piece's keys: a merge function may rewrite a lone record (e.g.
    # partial-update stores a lone +U as +I), as one in-memory merge of all the runs does
    return sort_and_merge(concat_tables(pieces), order, fn)


class FileRoller(Generic[T]):
    """Collects merged pieces and hands them to ``write`` in tables of about ``target_bytes`` (Arrow size), so that
    output files are rolled as they are produced; :meth:`finish` writes the rest. ``write`` returns what it wrote
    (e.g. file metadata)."""

    def __init__(self, write: Callable[[pa.Table], list[T]], target_bytes: int) -> None:
        self.write = write
        self.target_bytes = max(1, target_bytes)
        self.pending: list[pa.Table] = []
        self.pending_bytes = 0
        self.written: list[T] = []

    def add(self, piece: pa.Table) -> None:
        if piece.num_rows == 0:
            return
        self.pending.append(piece)
        self.pending_bytes += piece.nbytes
        if self.pending_bytes < self.target_bytes:
            return
        t = concat_tables(self.pending)
        per_row = max(1, t.nbytes // max(1, t.num_rows))
        rows = max(1, self.target_bytes // per_row)
        while t.num_rows >= rows:
            self.written.extend(self.write(t.slice(0, rows)))
            t = t.slice(rows)
        self.pending = [t] if t.num_rows else []
        self.pending_bytes = t.nbytes if t.num_rows else 0

    def finish(self) -> list[T]:
        if self.pending:
            self.written.extend(self.write(concat_tables(self.pending)))
            self.pending, self.pending_bytes = [], 0
        return self.written
