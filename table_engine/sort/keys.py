"""The one entry to the sort keys: the row order of a table by ``order`` / ``zorder`` / ``hilbert`` over columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_enums import OrderType
from table_engine.errors import OptionError, SchemaError, UnsupportedError
from table_engine.sort.bits import as_words
from table_engine.sort.columns import contiguous
from table_engine.sort.hilbert import hilbert_index, hilbert_words
from table_engine.sort.linear import has_words, order_words
from table_engine.sort.zorder import z_index, z_words

DEFAULT_VAR_LENGTH = 8
"""``zorder.var-length-contribution``'s default."""


def _check_columns(table: pa.Table, columns: Sequence[str]) -> None:
    """SchemaError (Paimon's words) when ``columns`` is empty or names a column ``table`` lacks."""
    if not columns:
        raise SchemaError("order column could not be empty")
    names = table.column_names
    missing = [c for c in columns if c not in names]
    if missing:
        raise SchemaError(f"Can't find column {missing[0]!r} in table columns. Possible columns are {names}")


def _columns(table: pa.Table, columns: Sequence[str]) -> list[tuple[str, pa.Array]]:
    _check_columns(table, columns)
    return [(c, contiguous(table.column(c))) for c in columns]


def sort_key(table: pa.Table, strategy: OrderType, columns: Sequence[str],
             var_length: int = DEFAULT_VAR_LENGTH) -> pa.FixedSizeBinaryArray:
    """The z-order or Hilbert key of each row of ``table`` over ``columns`` (Paimon's ``Z_INDEX`` / ``H_INDEX``),
    compared as unsigned bytes."""
    cols = _curve_columns(table, strategy, columns)
    matrix = z_index(cols, var_length) if strategy is OrderType.ZORDER else hilbert_index(cols)
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(matrix.shape[1]), len(table),
                                                [None, pa.py_buffer(np.ascontiguousarray(matrix).tobytes())])


def _curve_columns(table: pa.Table, strategy: OrderType, columns: Sequence[str]) -> list[tuple[str, pa.Array]]:
    cols = _columns(table, columns)
    if strategy is OrderType.HILBERT:
        if len(cols) < 2:
            raise SchemaError("Hilbert sort needs at least two columns.")
    elif strategy is not OrderType.ZORDER:
        raise UnsupportedError(f"order strategy {strategy.value!r} has no key: only zorder and hilbert do")
    return cols


def curve_words(table: pa.Table, strategy: OrderType, columns: Sequence[str],
                var_length: int = DEFAULT_VAR_LENGTH) -> np.ndarray:
    """The rows' order as an ``(n, words)`` ``uint64`` matrix compared word by word: on a curve, the order of
    :func:`sort_key` in as few words as give it (the z-order key's, the Hilbert index's below 8 dimensions); an
    ``order`` over numbers, their order (:mod:`table_engine.sort.linear`). Computed :data:`WORD_CHUNK_ROWS` rows at
    a time into one matrix: the conversions' temporaries stay small (in the CPU's caches, and in the heap, where a
    fresh process does not fault new pages in for each)."""
    n = table.num_rows
    if n <= WORD_CHUNK_ROWS:
        return _words(table, strategy, columns, var_length)
    table = table.select(list(dict.fromkeys(columns)))
    first = _words(table.slice(0, WORD_CHUNK_ROWS), strategy, columns, var_length)
    out = np.empty((n, first.shape[1]), dtype=np.uint64)
    out[:WORD_CHUNK_ROWS] = first
    for start in range(WORD_CHUNK_ROWS, n, WORD_CHUNK_ROWS):
        out[start:start + WORD_CHUNK_ROWS] = _words(table.slice(start, WORD_CHUNK_ROWS), strategy, columns,
                                                    var_length)
    return out


WORD_CHUNK_ROWS = 1 << 16
"""Rows :func:`curve_words` converts at a time."""


def _words(table: pa.Table, strategy: OrderType, columns: Sequence[str], var_length: int) -> np.ndarray:
    if strategy is OrderType.ORDER:
        return order_words([(table.schema.field(c), arr) for c, arr in _columns(table, columns)])
    cols = _curve_columns(table, strategy, columns)
    return z_words(cols, var_length) if strategy is OrderType.ZORDER else hilbert_words(cols)


def keyed_by_words(schema: pa.Schema, strategy: OrderType, columns: Sequence[str]) -> bool:
    """Whether rows in this order are keyed by words (:data:`KEY_COLUMN`): a curve always, an ``order`` when its
    columns are numbers (:func:`~table_engine.sort.linear.has_words`); else Arrow sorts by the columns."""
    if strategy is not OrderType.ORDER:
        return True
    return has_words([schema.field(c).type for c in columns])


def _binary(words: np.ndarray) -> pa.FixedSizeBinaryArray:
    """Key words as a fixed-size binary column (their big-endian bytes: compared as unsigned bytes, the same order)."""
    n, k = words.shape
    data = words.astype(">u8")
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(8 * k), n, [None, pa.py_buffer(data)])


def key_words(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A fixed-size binary key column as an ``(n, words)`` matrix of native ``uint64``, most significant word first
    (:func:`~table_engine.sort.bits.as_words`): comparing the rows word by word compares the keys as unsigned
    bytes."""
    col = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    width = col.type.byte_width
    flat = np.frombuffer(col.buffers()[1], dtype=np.uint8)[col.offset * width:(col.offset + len(col)) * width]
    return as_words(flat.reshape(len(col), width))


def argsort_words(words: np.ndarray) -> np.ndarray:
    """The stable ascending order of the rows of an ``(n, k)`` ``uint64`` matrix compared word by word.

    The bits every row shares at the front are skipped (a curve key of small numbers starts with many: the common
    prefix of all rows is that of the first varying word's minimum and maximum); the next 64 bits, shifted into one
    word, keep their top bits and take the row's position in the low ones, and the words are sorted as plain
    numbers (faster than an argsort; equal tops come out in row order); the rows whose tops tie are then ordered by
    the rest of their key, in place."""
    n, k = words.shape
    if n < 2:
        return np.arange(n, dtype=np.intp)
    j, spread = next(((i, int(c.min()) ^ int(c.max())) for i in range(k) if (c := words[:, i]).min() != c.max()),
                     (k, 0))
    if j == k:
        return np.arange(n, dtype=np.intp)
    shift = 64 - spread.bit_length()
    first = words[:, j] << np.uint64(shift)
    if shift and j + 1 < k:
        first |= words[:, j + 1] >> np.uint64(64 - shift)
    bits = int(n - 1).bit_length()
    mask = np.uint64((1 << bits) - 1)
    packed = first & ~mask
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort(kind="stable")  # a radix sort: as fast as any on random keys, near linear on merged runs
    order = (packed & mask).astype(np.intp)
    packed >>= np.uint64(bits)  # the tops
    same = packed[1:] == packed[:-1]
    del packed
    if not same.any():
        return order
    tied = np.zeros(n, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    starts = np.ones(n, dtype=bool)
    starts[1:] = ~same
    group = np.cumsum(starts)[tied]
    rows = order[tied]
    rest = (words[rows, i] for i in range(k - 1, j, -1))
    order[tied] = rows[np.lexsort((*rest, first[rows], group))]
    return order


KEY_COLUMN = "__key"
"""The column a z-order or Hilbert key is added as (:func:`keyed_sort`)."""

SortKeys = list[tuple[str, str, str]]


def order_keys(schema: pa.Schema, strategy: OrderType, columns: Sequence[str]) -> SortKeys:
    """The Arrow sort keys of ``strategy`` over ``columns`` on the table :func:`keyed_sort` makes of a table of
    ``schema``: ``order`` sorts by the values, ascending, nulls first, NaN after every number (as Paimon's
    ``OrderSorter`` in Spark; Arrow would put NaN with the nulls); the curves by their key."""
    if strategy is OrderType.NONE:
        raise UnsupportedError("order strategy 'none' does not order rows")
    if KEY_COLUMN in schema.names or keyed_by_words(schema, strategy, columns):
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
    if keys[0][0] != KEY_COLUMN:
        for i, (_, arr) in enumerate(cols):
            if pa.types.is_floating(arr.type):
                table = table.append_column(f"__nan{i}", pc.is_nan(arr))
        return table, keys
    return table.append_column(KEY_COLUMN, _binary(curve_words(table, strategy, columns, var_length))), keys


def sorted_with_keys(table: pa.Table, strategy: OrderType, columns: Sequence[str],
                     var_length: int = DEFAULT_VAR_LENGTH) -> pa.Table:
    """``table`` in ``strategy``'s order over ``columns`` (stable), with the columns it sorts by added as
    :func:`keyed_sort` adds them (what a run of an external sort holds)."""
    _check_columns(table, columns)  # names only: combining the chunks here would copy them for nothing
    if keyed_by_words(table.schema, strategy, columns):
        words = curve_words(table, strategy, columns, var_length)
        order = argsort_words(words)
        return table.take(order).append_column(KEY_COLUMN, _binary(np.take(words, order, axis=0)))
    keyed, keys = keyed_sort(table, strategy, columns, var_length)
    return keyed.take(pc.sort_indices(keyed, sort_keys=keys))


def sort_indices(table: pa.Table, strategy: OrderType, columns: Sequence[str],
                 var_length: int = DEFAULT_VAR_LENGTH) -> pa.Array:
    """The row positions of ``table`` in ``strategy``'s order over ``columns`` (stable: equal rows keep their order;
    see :func:`order_keys`)."""
    if strategy is OrderType.NONE:
        raise UnsupportedError("order strategy 'none' does not order rows")
    _check_columns(table, columns)  # names only: combining the chunks here would copy them for nothing
    if keyed_by_words(table.schema, strategy, columns):
        return pa.array(argsort_words(curve_words(table, strategy, columns, var_length)))
    keyed, keys = keyed_sort(table, strategy, columns, var_length)
    return pc.sort_indices(keyed, sort_keys=keys)


def key_bytes(rows: pa.Table) -> np.ndarray:
    """The curve keys of ``rows`` (their :data:`KEY_COLUMN`) as numpy fixed-width bytes, compared as unsigned bytes
    as Arrow compares them (for ``searchsorted``)."""
    col = rows.column(KEY_COLUMN).combine_chunks()
    width = col.type.byte_width
    data = np.frombuffer(col.buffers()[1], dtype=f"S{width}")
    return data[col.offset:col.offset + len(col)]


def keyed_indices(keyed: pa.Table, keys: SortKeys) -> pa.Array:
    """The row order of a table :func:`keyed_sort` made (stable): a curve's key sorted as words
    (:func:`argsort_words`), an ``order`` by Arrow."""
    if len(keys) == 1 and keys[0][0] == KEY_COLUMN:
        return pa.array(argsort_words(key_words(keyed.column(KEY_COLUMN))))
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
