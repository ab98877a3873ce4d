"""Paimon's ``$binlog`` row layout: change rows with every column packed into an array.

A ``-U`` row and the row after it (its ``+U``) become one row ``[before, after]`` with the second row's kind; any
other row becomes ``[value]`` with its own kind (Paimon's ``BinlogTable`` with ``PackChangelogReader`` for
streaming splits; batch snapshot reads pack every row alone). Vectorized: the packed columns are list arrays over
the original columns, with offsets from the pairing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.store.changes.incremental import ROWKIND_COLUMN

__all__ = ["binlog_schema", "pack_binlog"]


def binlog_schema(changes: pa.Schema) -> pa.Schema:
    """``rowkind`` then each column as a list of its (nullable) type."""
    return pa.schema([changes.field(ROWKIND_COLUMN),
                      *[pa.field(f.name, pa.list_(f.type), nullable=True)
                        for f in changes if f.name != ROWKIND_COLUMN]])


def pack_binlog(batches: Iterable[pa.RecordBatch], pair_updates: bool = True) -> Iterator[pa.RecordBatch]:
    """Pack change batches (``rowkind`` + columns) into binlog rows; a ``-U`` ending one batch pairs with the first
    row of the next."""
    carry: pa.RecordBatch | None = None
    for batch in batches:
        if carry is not None:
            batch = pa.Table.from_batches([carry, batch]).combine_chunks().to_batches()[0]
            carry = None
        if batch.num_rows == 0:
            continue
        kinds = batch.column(ROWKIND_COLUMN)
        if pair_updates and kinds[batch.num_rows - 1].as_py() == "-U" and _ends_unpaired(kinds):
            carry = batch.slice(batch.num_rows - 1)
            batch = batch.slice(0, batch.num_rows - 1)
        if batch.num_rows:
            yield _pack(batch, pair_updates)
    if carry is not None:
        yield _pack(carry, pair_updates)


def _ends_unpaired(kinds: pa.Array) -> bool:
    """Whether the last row is a -U that starts a pair (not the partner of a -U before it)."""
    lengths = _group_lengths(kinds)
    return bool(lengths[-1] == 1)


def _group_lengths(kinds: pa.Array) -> np.ndarray:
    """Length (1 or 2) of each output row, pairing each -U with the row after it."""
    is_ub = np.asarray(pc.equal(kinds, "-U").to_numpy(zero_copy_only=False), dtype=bool)
    n = len(is_ub)
    lengths: list[int] = []
    i = 0
    ub_positions = np.flatnonzero(is_ub)
    # walk only the -U positions; rows between them are singletons
    for p in ub_positions.tolist():
        if p < i:
            continue  # consumed as the partner of the previous -U
        lengths.extend([1] * (p - i))
        if p + 1 < n:
            lengths.append(2)
            i = p + 2
        else:
            lengths.append(1)
            i = p + 1
    lengths.extend([1] * (n - i))
    return np.asarray(lengths, dtype=np.int32)


def _pack(batch: pa.RecordBatch, pair_updates: bool) -> pa.RecordBatch:
    kinds = batch.column(ROWKIND_COLUMN)
    n = batch.num_rows
    lengths = _group_lengths(kinds) if pair_updates else np.ones(n, dtype=np.int32)
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    last = pa.array(np.cumsum(lengths) - 1)
    arrays = [kinds.take(last)]
    names = [ROWKIND_COLUMN]
    for name in batch.schema.names:
        if name == ROWKIND_COLUMN:
            continue
        arrays.append(pa.ListArray.from_arrays(offsets, batch.column(name)))
        names.append(name)
    return pa.RecordBatch.from_arrays(arrays, schema=binlog_schema(batch.schema))
