"""Key-value records as Arrow tables: row kinds and the system columns of primary-key data files.

A key-value table holds the value columns (all table columns) plus ``_SEQUENCE_NUMBER`` (int64) and
``_VALUE_KIND`` (int8: 0=+I, 1=-U, 2=+U, 3=-D). Data files additionally carry ``_KEY_<k>`` copies of the
trimmed primary key in front.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
KEY_PREFIX = "_KEY_"
SYSTEM_COLUMNS = (SEQUENCE_NUMBER, VALUE_KIND)


class RowKind(IntEnum):
    """Paimon row kinds with their byte values."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    @property
    def short(self) -> str:
        return ROW_KIND_STRINGS[self.value]


ROW_KIND_STRINGS = ("+I", "-U", "+U", "-D")
_KIND_LOOKUP = pa.array(list(ROW_KIND_STRINGS))


def row_kinds_from_strings(kinds: pa.Array | pa.ChunkedArray | Sequence[str], where: str) -> pa.Array:
    """Vectorized ``+I/-U/+U/-D`` strings -> int8 codes; an unknown or null kind is a DataError naming ``where``."""
    arr = kinds if isinstance(kinds, pa.Array | pa.ChunkedArray) else pa.array(list(kinds), pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.string())
    codes = pc.index_in(arr, value_set=_KIND_LOOKUP)
    if codes.null_count:
        bad_pos = pc.index(pc.is_null(codes), True).as_py()
        raise DataError(f"{where}: row kind {arr[bad_pos].as_py()!r} at row {bad_pos} is not one of "
                        f"{list(ROW_KIND_STRINGS)}")
    return codes.cast(pa.int8())


def kind_strings(codes: pa.Array | pa.ChunkedArray) -> pa.Array:
    """int8 kind codes -> ``+I/-U/+U/-D`` strings."""
    np_codes = np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int64)
    return pa.DictionaryArray.from_arrays(pa.array(np_codes, pa.int32()), _KIND_LOOKUP).cast(pa.string())


def is_add(kind_col: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """True for +I and +U."""
    return pc.or_(pc.equal(kind_col, 0), pc.equal(kind_col, 2))


def key_column_name(name: str) -> str:
    """The ``_KEY_``-prefixed name of a primary-key column in a data file."""
    return KEY_PREFIX + name


def last_of_key_runs(table: pa.Table, key_cols: Sequence[str]) -> pa.Array:
    """Boolean mask: True for the last row of every run of equal keys (table sorted by key)."""
    n = table.num_rows
    if n == 0:
        return pa.array([], pa.bool_())
    if n == 1:
        return pa.array([True])
    diff: pa.Array | None = None
    for k in key_cols:
        col = table.column(k)
        d = pc.not_equal(col.slice(0, n - 1), col.slice(1))
        d = pc.fill_null(d, False)
        diff = d if diff is None else pc.or_(diff, d)
    assert diff is not None
    if isinstance(diff, pa.ChunkedArray):
        diff = diff.combine_chunks()
    return pa.concat_arrays([diff, pa.array([True])])


def check_no_null_keys(table: pa.Table, key_cols: Sequence[str], where: str) -> None:
    """DataError naming the first primary-key column of ``table`` with nulls (``where`` says what is written)."""
    for k in key_cols:
        nulls = table.column(k).null_count
        if nulls:
            raise DataError(f"{where}: primary key column {k!r} has {nulls} null value(s); primary keys cannot be null")
