"""The one entry to the sort keys: the row order of a table by ``order`` / ``zorder`` / ``hilbert`` over columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_enums import OrderType
from table_engine.errors import OptionError, SchemaError, UnsupportedError
from table_engine.sort.columns import contiguous
from table_engine.sort.hilbert import hilbert_index
from table_engine.sort.zorder import z_index

DEFAULT_VAR_LENGTH = 8
"""``zorder.var-length-contribution``'s default."""


def _columns(table: pa.Table, columns: Sequence[str]) -> list[tuple[str, pa.Array]]:
    if not columns:
        raise SchemaError("order column could not be empty")
    names = table.column_names
    missing = [c for c in columns if c not in names]
    if missing:
        raise SchemaError(f"Can't find column {missing[0]!r} in table columns. Possible columns are {names}")
    return [(c, contiguous(table.column(c))) for c in columns]


def sort_key(table: pa.Table, strategy: OrderType, columns: Sequence[str],
             var_length: int = DEFAULT_VAR_LENGTH) -> pa.FixedSizeBinaryArray:
    """The z-order or Hilbert key of each row of ``table`` over ``columns`` (Paimon's ``Z_INDEX`` / ``H_INDEX``),
    compared as unsigned bytes."""
    cols = _columns(table, columns)
    if strategy is OrderType.ZORDER:
        matrix = z_index(cols, var_length)
    elif strategy is OrderType.HILBERT:
        if len(cols) < 2:
            raise SchemaError("Hilbert sort needs at least two columns.")
        matrix = hilbert_index(cols)
    else:
        raise UnsupportedError(f"order strategy {strategy.value!r} has no key: only zorder and hilbert do")
    width = matrix.shape[1]
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(table),
                                                [None, pa.py_buffer(np.ascontiguousarray(matrix).tobytes())])


KEY_COLUMN = "__key"
"""The column a z-order or Hilbert key is added as (:func:`keyed_sort`)."""

SortKeys = list[tuple[str, str, str]]


def order_keys(schema: pa.Schema, strategy: OrderType, columns: Sequence[str]) -> SortKeys:
    """The Arrow sort keys of ``strategy`` over ``columns`` on the table :func:`keyed_sort` makes of a table of
    ``schema``: ``order`` sorts by the values, ascending, nulls first, NaN after every number (as Paimon's
    ``OrderSorter`` in Spark; Arrow would put NaN with the nulls); the curves by their key."""
    if strategy is OrderType.NONE:
        raise UnsupportedError("order strategy 'none' does not order rows")
    if strategy is not OrderType.ORDER:
        return [(KEY_COLUMN, "ascending", "at_start")]
    keys: SortKeys = []
    for i, c in enumerate(columns):
        if pa.types.is_floating(schema.field(c).type):
            keys.append((f"__nan{i}", "ascending", "at_start"))
        keys.append((c, "ascending", "at_start"))
    return keys


def keyed_sort(table: pa.Table, strategy: OrderType, columns: Sequence[str],
               var_length: int = DEFAULT_VAR_LENGTH) -> tuple[pa.Table, SortKeys]:
    """``table`` with the columns its order sorts by added (a curve's key, NaN flags), and the sort keys."""
    cols = _columns(table, columns)
    keys = order_keys(table.schema, strategy, columns)
    if strategy is OrderType.ORDER:
        for i, (_, arr) in enumerate(cols):
            if pa.types.is_floating(arr.type):
                table = table.append_column(f"__nan{i}", pc.is_nan(arr))
        return table, keys
    return table.append_column(KEY_COLUMN, sort_key(table, strategy, columns, var_length)), keys


def sort_indices(table: pa.Table, strategy: OrderType, columns: Sequence[str],
                 var_length: int = DEFAULT_VAR_LENGTH) -> pa.Array:
    """The row positions of ``table`` in ``strategy``'s order over ``columns`` (stable: equal rows keep their order;
    see :func:`order_keys`)."""
    if strategy is OrderType.NONE:
        raise UnsupportedError("order strategy 'none' does not order rows")
    keyed, keys = keyed_sort(table, strategy, columns, var_length)
    return pc.sort_indices(keyed, sort_keys=keys)


def clustering_strategy(value: str, columns: int) -> OrderType:
    """``clustering.strategy`` for ``columns`` clustering columns (Paimon's ``CoreOptions.clusteringStrategy``):
    ``auto`` is order for one column, zorder for 2 to 4, hilbert for 5 or more; other values name a strategy
    (case-insensitive). An OptionError names a value that is none of them."""
    if value == "auto":
        return OrderType.ORDER if columns == 1 else OrderType.ZORDER if columns < 5 else OrderType.HILBERT
    try:
        strategy = OrderType(value.strip().lower())
    except ValueError:
        strategy = OrderType.NONE
    if strategy is OrderType.NONE:
        raise OptionError(f"clustering.strategy: cannot match type: {value} for ordering (auto, order, zorder or "
                          "hilbert)")
    return strategy
