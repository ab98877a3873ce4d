"""Merging records of one key, vectorized over Arrow tables.

The same merge function folds duplicates in the write buffer, merges sorted runs in compaction and merges files
in merge-on-read. A merge function receives key-value records sorted by key and then by ordering (sequence
fields, then ``_SEQUENCE_NUMBER``) and returns one record per key, keeping the kind of the winning record (a
``-D`` winner is kept so that it can delete older records; readers drop it at the end). Columns that are not value
columns of the table (keys, ``_SEQUENCE_NUMBER``, a writer's bookkeeping columns) pass through from the key's last
record. The engines other than deduplicate live in :mod:`table_engine.lsm.merge_engines`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import UnsupportedError
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND, last_of_key_runs

if TYPE_CHECKING:
    from table_engine.core_options import CoreOptions
    from table_engine.format.schema_file import TableSchema


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

    def on_write(self, kv: pa.Table) -> pa.Table:
        """Check and prepare freshly written records (all value columns and ``_VALUE_KIND``) before buffering:
        reject row kinds the engine does not accept, turn values into mergeable partial states."""
        ...

    def read_columns(self, columns: set[str]) -> set[str]:
        """Extra columns a read of ``columns`` must load for the merge (e.g. sequence-group fields)."""
        ...


class DeduplicateMerge:
    """``merge-engine = deduplicate``: the record with the highest ordering wins (a ``-D`` winner deletes the key).

    With ``ignore_delete`` retractions found in files (written before the option was set) are skipped: the last
    ``+I``/``+U`` wins, and a key with only retractions keeps its last one (dropped by readers).
    """

    def __init__(self, ignore_delete: bool = False) -> None:
        self.ignore_delete = ignore_delete

    def on_write(self, kv: pa.Table) -> pa.Table:
        return kv

    def read_columns(self, columns: set[str]) -> set[str]:
        return set()

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table:
        if kv.num_rows <= 1:
            return kv
        last = last_of_key_runs(kv, order.key_cols)
        if self.ignore_delete:
            kinds = np.asarray(kv.column(VALUE_KIND).to_numpy(), np.int8)
            retract = (kinds == 1) | (kinds == 3)
            if retract.any():
                from table_engine.lsm.merge_engines.segments import Segments

                seg = Segments.of(kv, order.key_cols)
                pick = seg.last_where(~retract)
                rows = np.where(pick >= 0, pick, seg.ends - 1)
                return kv.take(pa.array(rows))
        if pc.all(last).as_py():  # every key once (the common case of a write): nothing to drop, no copy
            return kv
        return kv.filter(last)


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


def merge_function_for(schema: TableSchema | str, options: CoreOptions | None = None, *,
                       table: str | None = None) -> MergeFunction:
    """The merge function of a primary-key table (its ``merge-engine`` and the options of that engine).

    ``options`` default to the schema's; ``table`` names the table in error messages. A bare ``merge-engine`` value
    (legacy form) is accepted for ``deduplicate`` only.
    """
    if isinstance(schema, str):
        if schema == "deduplicate":
            return DeduplicateMerge()
        raise UnsupportedError(f"merge-engine {schema!r} needs the table schema: use merge_function_for(schema)")
    from dataclasses import replace

    from table_engine.lsm.merge_engines import create_merge_function

    if options is not None and dict(options.raw) != dict(schema.options):
        schema = replace(schema, options=dict(options.raw))
    return create_merge_function(schema, table)


def sort_and_merge(kv: pa.Table, order: MergeOrder, fn: MergeFunction, in_sequence_order: bool = False) -> pa.Table:
    return fn.merge_sorted(sort_kv(kv, order, in_sequence_order), order)


def concat_tables(tables: Sequence[pa.Table]) -> pa.Table:
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="none")
