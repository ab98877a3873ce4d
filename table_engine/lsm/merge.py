"""Merging records of one key, vectorized over Arrow tables.

The same merge function folds duplicates in the write buffer, merges sorted runs in compaction and merges files
in merge-on-read. A merge function receives key-value records sorted by key and then by ordering (sequence
fields, then ``_SEQUENCE_NUMBER``) and returns one record per key, keeping the kind of the winning record (a
``-D`` winner is kept so that it can delete older records; readers drop it at the end).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import UnsupportedError
from table_engine.lsm.key_value import SEQUENCE_NUMBER, last_of_key_runs


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


class MergeFunction(Protocol):
    """Folds records of equal key (input sorted by :meth:`MergeOrder.sort_keys`) into one record per key."""

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table: ...


class DeduplicateMerge:
    """``merge-engine = deduplicate``: the record with the highest ordering wins (a ``-D`` winner deletes the key)."""

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table:
        if kv.num_rows <= 1:
            return kv
        return kv.filter(last_of_key_runs(kv, order.key_cols))


_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25


def sort_indices(table: pa.Table, keys: Sequence[tuple[str, str]]) -> pa.Array:
    """Stable sort indices with nulls first (the smallest), across pyarrow versions."""
    if _PER_KEY_NULLS:
        return pc.sort_indices(table, sort_keys=[(k, o, "at_start") for k, o in keys])
    return pc.sort_indices(table, sort_keys=list(keys), null_placement="at_start")


def sort_kv(kv: pa.Table, order: MergeOrder) -> pa.Table:
    """Sort key-value records by key then ordering (stable)."""
    if kv.num_rows <= 1:
        return kv
    return kv.take(sort_indices(kv, order.sort_keys()))


def merge_function_for(merge_engine: str) -> MergeFunction:
    """The merge function of a ``merge-engine`` option value."""
    if merge_engine == "deduplicate":
        return DeduplicateMerge()
    raise UnsupportedError(f"merge-engine {merge_engine!r} is not supported yet (only 'deduplicate')")


def sort_and_merge(kv: pa.Table, order: MergeOrder, fn: MergeFunction) -> pa.Table:
    return fn.merge_sorted(sort_kv(kv, order), order)


def concat_tables(tables: Sequence[pa.Table]) -> pa.Table:
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="none")
