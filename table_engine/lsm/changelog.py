"""Changelog rows from old and new merged values of keys (pure and vectorized: Arrow in, Arrow out).

The rules are those of Paimon's ``LookupChangelogMergeFunctionWrapper`` and ``FullChangelogMergeFunctionWrapper``:
for each key of the new values,

* no old value (or an old retraction) and an added new value: ``+I`` (new);
* an old value and a retracted new value (``-U``/``-D`` winner): ``-D`` (old);
* an old value and an added new value: ``-U`` (old) then ``+U`` (new), unless ``changelog-producer.row-deduplicate``
  is on and both are equal on every compared column (``changelog-producer.row-deduplicate-ignore-fields`` are not
  compared): then nothing;
* with ``insert_only`` (an engine whose changelog is insert-only, ``first-row``): only ``+I`` for new keys.

Rows come out in key order (the order of ``after``), each key's rows in change order. Every row carries the
sequence number of the new record, so that a reader ordering change files and rows by sequence number keeps each
key's rows in change order (Paimon gives a retraction the sequence number of the old record instead).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND, is_add
from table_engine.lsm.lookup import locate_keys

__all__ = ["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE", "changelog_rows", "equal_rows"]

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3


def changelog_rows(before: pa.Table | None, after: pa.Table, key_names: Sequence[str],
                   compare: Sequence[str] | None = None, insert_only: bool = False) -> pa.Table:
    """The changelog of the keys of ``after`` (one merged row per key, in key order) given their old merged values
    ``before`` (at most one row per key, any order; keys missing or retracted there had no value).

    ``compare``: the columns that must differ for an update to be emitted (row-deduplicate); None emits every
    update. The result has the columns of ``after``, ``_VALUE_KIND`` holding the change kind."""
    n = after.num_rows
    if n == 0:
        return after
    b_index = np.full(n, -1, dtype=np.int64)
    if before is not None and before.num_rows:
        before = before.filter(is_add(before.column(VALUE_KIND)))
        hits = locate_keys(after, before, key_names)
        b_index[hits.key_index] = hits.candidate_index
    new_add = np.asarray(is_add(after.column(VALUE_KIND)).to_numpy(zero_copy_only=False), dtype=np.bool_)
    has_old = b_index >= 0
    inserted = np.flatnonzero(new_add & ~has_old)
    if insert_only:
        updated = deleted = np.empty(0, dtype=np.int64)
    else:
        deleted = np.flatnonzero(~new_add & has_old)
        updated = np.flatnonzero(new_add & has_old)
        if compare is not None and len(updated):
            assert before is not None
            same = equal_rows(before.take(pa.array(b_index[updated])), after.take(pa.array(updated)), compare)
            updated = updated[~same]
    seq = after.column(SEQUENCE_NUMBER)
    pieces: list[pa.Table] = []
    order: list[npt.NDArray[np.int64]] = []
    sub: list[npt.NDArray[np.int64]] = []

    def add(rows: pa.Table, at: npt.NDArray[np.int64], kind: int, step: int) -> None:
        if not len(at):
            return
        rows = rows.set_column(rows.schema.get_field_index(SEQUENCE_NUMBER), SEQUENCE_NUMBER,
                               seq.take(pa.array(at)))
        rows = rows.set_column(rows.schema.get_field_index(VALUE_KIND), VALUE_KIND,
                               pa.array(np.full(len(at), kind, dtype=np.int8)))
        pieces.append(rows)
        order.append(at)
        sub.append(np.full(len(at), step, dtype=np.int64))

    add(after.take(pa.array(inserted)), inserted, INSERT, 1)
    if before is not None and (len(updated) or len(deleted)):
        old = before.select(after.column_names).cast(after.schema)
        add(old.take(pa.array(b_index[updated])), updated, UPDATE_BEFORE, 0)
        add(old.take(pa.array(b_index[deleted])), deleted, DELETE, 0)
    add(after.take(pa.array(updated)), updated, UPDATE_AFTER, 1)
    if not pieces:
        return after.schema.empty_table()
    out = pa.concat_tables(pieces)
    rank = np.lexsort((np.concatenate(sub), np.concatenate(order)))
    return out.take(pa.array(rank))


def equal_rows(a: pa.Table, b: pa.Table, columns: Sequence[str]) -> npt.NDArray[np.bool_]:
    """Row-wise equality of two tables of the same length on ``columns`` (two nulls are equal)."""
    same = np.ones(a.num_rows, dtype=np.bool_)
    for c in columns:
        x, y = a.column(c), b.column(c)
        try:
            eq = pc.fill_null(pc.equal(x, y), False)
            both_null = pc.and_(pc.is_null(x), pc.is_null(y))
            col_same = np.asarray(pc.or_(eq, both_null).to_numpy(zero_copy_only=False), dtype=np.bool_)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            # nested types (lists, maps, structs): no vectorized comparison kernel in Arrow
            col_same = np.fromiter((p == q for p, q in zip(x.to_pylist(), y.to_pylist())), dtype=np.bool_,
                                   count=a.num_rows)
        same &= col_same
    return same
