"""Sorting key-value records with Arrow: the order records of one key are merged in, and stable sort helpers.

Nothing here knows a merge engine: the merge engines (:mod:`table_engine.lsm.merge_engines`) and the readers and
compactions that feed them sort with these helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.key_value import SEQUENCE_NUMBER

__all__ = ["MergeOrder", "concat_tables", "sort_indices", "sort_kv", "take_sorted"]


@dataclass(frozen=True)
class MergeOrder:
    """How records of one key are ordered: ``sequence.field`` columns, then the system sequence number."""

    key_cols: tuple[str, ...]
    sequence_fields: tuple[str, ...] = ()
    descending: bool = False
    extra: tuple[str, ...] = field(default=())

    def sort_keys(self) -> list[tuple[str, str]]:
        order = "descending" if self.descending else "ascending"
        keys = [(k, "ascending") for k in self.key_cols]
        keys += [(s, order) for s in self.sequence_fields]
        keys.append((SEQUENCE_NUMBER, "ascending"))
        return keys


_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25


def take_sorted(table: pa.Table, keys: Sequence[tuple[str, str]]) -> pa.Table:
    """``table`` sorted by ``keys`` (stable); ``table`` itself when it is in that order already (e.g. rows a
    Spark task received sorted), which saves copying every column."""
    indices = sort_indices(table, keys)
    if np.array_equal(indices.to_numpy(zero_copy_only=False), np.arange(table.num_rows)):
        return table
    return table.take(indices)


def sort_indices(table: pa.Table, keys: Sequence[tuple[str, str]]) -> pa.Array:
    """Stable sort indices with nulls first (the smallest), across pyarrow versions."""
    if _PER_KEY_NULLS:
        return pc.sort_indices(table, sort_keys=[(k, o, "at_start") for k, o in keys])
    return pc.sort_indices(table, sort_keys=list(keys), null_placement="at_start")


def sort_kv(kv: pa.Table, order: MergeOrder, in_sequence_order: bool = False) -> pa.Table:
    """Sort key-value records by key then ordering (stable). ``in_sequence_order``: the records are in sequence
    order already (files concatenated oldest first, no ``sequence.field``), so sorting by key alone suffices."""
    if kv.num_rows <= 1:
        return kv
    keys = [(k, "ascending") for k in order.key_cols] if in_sequence_order else order.sort_keys()
    return take_sorted(kv, keys)


def concat_tables(tables: Sequence[pa.Table]) -> pa.Table:
    """The tables concatenated (schemas must match exactly; one table is returned as is)."""
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="none")
