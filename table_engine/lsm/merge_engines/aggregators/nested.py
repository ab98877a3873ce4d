"""Aggregators over arrays, maps and nested rows: collect, merge_map and nested_update."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import SchemaError
from table_engine.lsm.merge_engines.aggregators.base import (
    Aggregator,
    FieldOptions,
    _explode,
    _list_from,
    _offsets_and_mask,
)
from table_engine.lsm.merge_engines.segments import (
    Segments,
    combine,
    first_per_group,
    group_ids,
    last_per_group,
    valid_mask,
)
from table_engine.types import DataField, DataType

_I64 = np.int64


@dataclass
class _Elements:
    """The elements of the list/map values of folded rows, with their row's segment and order."""

    seg: np.ndarray        # segment of each element
    order: np.ndarray      # global order of each element (row order, then position in the list)
    retract: np.ndarray    # element comes from a retraction
    child: np.ndarray      # index into the child array(s)


def _elements(values: pa.Array, seg: Segments, retract: np.ndarray | None) -> _Elements:
    child, parent = _explode(values)
    ret = retract[parent] if retract is not None else np.zeros(len(parent), bool)
    return _Elements(seg.ids[parent], np.arange(len(parent), dtype=_I64), ret, child)


def _with_adds(values: pa.Array, seg: Segments, retract: np.ndarray | None) -> tuple[pa.Array, np.ndarray]:
    """``values`` as one array, and which keys have a non-null add (the others fold to null)."""
    vals = combine(values)
    valid = valid_mask(vals)
    if retract is not None:
        valid &= ~retract
    return vals, seg.any(valid)


class _Nested(Aggregator):
    """A retractable function of arrays or maps whose fold rebuilds each value (so single records are folded too);
    the combined retraction of several is all their elements, in order."""

    retractable = True
    single_identity = False

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        vals = combine(values)
        e = _elements(vals, seg, None)
        return _list_from(vals.values.take(pa.array(e.child)), e.seg, seg.any(valid_mask(vals)), self.arrow_type)


class Collect(_Nested):
    """Collects array elements (``distinct``: once each). A retraction removes one matching element per retracted
    element (the earliest present ones), only from a non-null accumulator."""

    name = "collect"
    types_doc = "ARRAY"
    roots = frozenset({"ARRAY"})

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals, has = _with_adds(values, seg, retract)
        items = vals.values
        plain = retract is None or not retract.any()
        if plain and not self.options.distinct:
            e = _elements(vals, seg, None)
            return _list_from(items.take(pa.array(e.child)), e.seg, has, self.arrow_type)
        e = _elements(vals, seg, retract)
        if len(e.seg) == 0:
            return _list_from(items.slice(0, 0), e.seg, has, self.arrow_type)
        elem_vals = items.take(pa.array(e.child))
        gid, ngroups = group_ids([pa.array(e.seg), elem_vals])
        keep = _surviving_elements(gid, ngroups, e.order, e.retract, self.options.distinct)
        return _list_from(elem_vals.take(pa.array(keep)), e.seg[keep], has, self.arrow_type)


def _surviving_elements(gid: np.ndarray, ngroups: int, order: np.ndarray, retract: np.ndarray, distinct: bool
                        ) -> np.ndarray:
    """Indices (ascending order) of the added elements still present after adds and retractions in ``order``.

    Per group of equal elements of a key the adds and retractions form a queue: a retraction removes the earliest
    present element. Without ``distinct`` the count present is a running sum clamped at zero and the survivors are
    the latest adds; with ``distinct`` an element is present when its last operation is an add, positioned at the
    first add after its last retraction.
    """
    n = len(gid)
    idx = np.lexsort((order, gid))
    g = gid[idx]
    ret = retract[idx]
    if distinct:
        last_ret = np.full(ngroups, -1, _I64)
        rpos = np.flatnonzero(ret)
        np.maximum.at(last_ret, g[rpos], rpos)
        after = (~ret) & (np.arange(n, dtype=_I64) > last_ret[g])
        first_after = np.full(ngroups, n, _I64)
        apos = np.flatnonzero(after)
        np.minimum.at(first_after, g[apos], apos)
        chosen = first_after[first_after < n]
        return np.sort(idx[chosen])
    delta = np.where(ret, -1, 1).astype(_I64)
    gseg = Segments.from_ids(g, ngroups)
    csum = np.cumsum(delta)
    offset = np.where(gseg.starts < n, csum[np.minimum(gseg.starts, n - 1)] - delta[np.minimum(gseg.starts, n - 1)],
                      0)
    s = csum - offset[g]                               # running sum inside the group
    min_prefix = np.minimum(gseg._reduce(np.minimum, s, 0), 0)
    final = gseg._reduce(np.add, delta, 0) - min_prefix  # clamped running count at the end
    adds = ~ret
    add_rank_from_end = _rank_from_end(g, adds, ngroups)
    survive = adds & (add_rank_from_end < final[g])
    return np.sort(idx[survive])


def _rank_from_end(g: np.ndarray, mask: np.ndarray, ngroups: int) -> np.ndarray:
    """For rows where ``mask`` holds: how many later masked rows of the same group follow (0 = the last one)."""
    m = mask.astype(_I64)
    total = np.bincount(g, weights=m, minlength=ngroups).astype(_I64)
    csum = np.cumsum(m)
    start_c = np.zeros(ngroups, _I64)
    first_idx = np.searchsorted(g, np.arange(ngroups))
    valid_first = first_idx < len(g)
    start_c[valid_first] = csum[first_idx[valid_first]] - m[first_idx[valid_first]]
    rank_from_start = csum - start_c[g] - 1
    return np.asarray(total[g] - 1 - rank_from_start, _I64)


class MergeMap(_Nested):
    """Merges maps (a later value of a key wins); a retraction removes its keys from a non-null accumulator.
    Keys keep the order of their (last) insertion; the combined retraction of several maps is their merge."""

    name = "merge_map"
    types_doc = "MAP"
    roots = frozenset({"MAP"})

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals, has = _with_adds(values, seg, retract)
        e = _elements(vals, seg, retract)
        keys, items = vals.keys, vals.items
        if len(e.seg) == 0:
            return self._map(keys.slice(0, 0), items.slice(0, 0), e.seg, has)
        elem_keys = keys.take(pa.array(e.child))
        gid, ngroups = group_ids([pa.array(e.seg), elem_keys])
        n = len(gid)
        pos = np.arange(n, dtype=_I64)
        last_ret = last_per_group(gid, ngroups, np.where(e.retract, pos, -1))
        live = ~e.retract & (pos > last_ret[gid])
        first_live = first_per_group(gid, ngroups, np.where(live, pos, n))
        last_live = last_per_group(gid, ngroups, np.where(live, pos, -1))
        present = np.flatnonzero(last_live >= 0)
        order = np.argsort(first_live[present], kind="stable")
        at = first_live[present][order]       # position of the key
        value_from = last_live[present][order]  # its latest value
        return self._map(elem_keys.take(pa.array(at)), items.take(pa.array(e.child[value_from])), e.seg[at], has)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return self.fold(values, seg, None)

    def _map(self, keys: pa.Array, items: pa.Array, elem_seg: np.ndarray, has: np.ndarray) -> pa.Array:
        offsets, mask = _offsets_and_mask(elem_seg, has)
        return pa.MapArray.from_arrays(offsets, keys, items, type=self.arrow_type, mask=mask)


class NestedUpdate(_Nested):
    """Collects rows into an ``ARRAY<ROW>`` "nested table".

    With ``nested-key``: a later row replaces the row of the same key (with ``nested-sequence-field`` only when its
    sequence is not smaller), a retraction removes the key's row; rows keep the order of their key's insertion.
    Without a key rows are appended and a retraction removes every equal row. ``count-limit`` caps the rows
    (new keys beyond it are dropped); ``nested-key-null-strategy``: merge (a key with nulls is an ordinary key),
    ignore (rows whose key has a null are skipped) or error."""

    name = "nested_update"
    types_doc = "ARRAY<ROW>"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "ARRAY" and t.element is not None and t.element.root == "ROW"

    @classmethod
    def check_type(cls, field: DataField, options: FieldOptions) -> None:
        super().check_type(field, options)
        assert field.type.element is not None
        names = [f.name for f in field.type.element.fields]
        for opt, cols in (("nested-key", options.nested_key), ("nested-sequence-field",
                                                               options.nested_sequence_field)):
            for c in cols:
                if c not in names:
                    raise SchemaError(f"column {field.name!r}: fields.{field.name}.{opt} names {c!r}, which is "
                                      f"not a field of its rows {names}")
        if options.nested_sequence_field and not options.nested_key:
            raise SchemaError(f"column {field.name!r}: fields.{field.name}.nested-sequence-field needs "
                              f"fields.{field.name}.nested-key")
        if options.count_limit <= 0:
            raise SchemaError(f"column {field.name!r}: fields.{field.name}.count-limit must be positive")

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals, has = _with_adds(values, seg, retract)
        e = _elements(vals, seg, retract)
        rows = vals.values
        if len(e.seg):
            row_ok = valid_mask(rows.take(pa.array(e.child)))  # null rows are skipped
            if not row_ok.all():
                e = _Elements(e.seg[row_ok], e.order[row_ok], e.retract[row_ok], e.child[row_ok])
        if len(e.seg) == 0:
            return _list_from(rows.slice(0, 0), e.seg, has, self.arrow_type)
        elem_rows = rows.take(pa.array(e.child))
        key = self.options.nested_key
        n = len(e.seg)
        pos = np.arange(n, dtype=_I64)
        if key:
            key_cols = [pc.struct_field(elem_rows, [self._index(k)]) for k in key]
            any_null = np.zeros(n, bool)
            for kc in key_cols:
                any_null |= ~valid_mask(kc)
            if any_null.any():
                strategy = self.options.nested_key_null_strategy
                if strategy == "error":
                    raise self._error("a nested key has a null value (nested-key-null-strategy = error)")
                if strategy == "ignore":
                    ok = ~any_null
                    e = _Elements(e.seg[ok], e.order[ok], e.retract[ok], e.child[ok])
                    elem_rows = elem_rows.filter(pa.array(ok))
                    key_cols = [kc.filter(pa.array(ok)) for kc in key_cols]
                    n = len(e.seg)
                    pos = np.arange(n, dtype=_I64)
            gid, ngroups = group_ids([pa.array(e.seg), *key_cols])
            last_ret = last_per_group(gid, ngroups, np.where(e.retract, pos, -1))
            live = ~e.retract & (pos > last_ret[gid])
            first_live = first_per_group(gid, ngroups, np.where(live, pos, n))
            if self.options.nested_sequence_field:
                seq = [pc.struct_field(elem_rows, [self._index(s)]) for s in self.options.nested_sequence_field]
                from table_engine.lsm.merge_engines.segments import dense_ranks

                rank = np.where(live, dense_ranks(seq), -1)
                best = np.full(ngroups, -1, _I64)
                np.maximum.at(best, gid, rank)
                winner = live & (rank == best[gid])
                value_from = last_per_group(gid, ngroups, np.where(winner, pos, -1))
            else:
                value_from = last_per_group(gid, ngroups, np.where(live, pos, -1))
            present = np.flatnonzero(value_from >= 0)
            order = np.argsort(first_live[present], kind="stable")
            at = first_live[present][order]
            src = value_from[present][order]
            out_seg = e.seg[at]
        else:
            gid, ngroups = group_ids([pa.array(e.seg), elem_rows])
            last_ret = last_per_group(gid, ngroups, np.where(e.retract, pos, -1))
            src = np.flatnonzero(~e.retract & (pos > last_ret[gid]))
            out_seg = e.seg[src]
        limit = self.options.count_limit
        if limit < 2**31 - 1 and len(src):
            rank = np.arange(len(src), dtype=_I64) - np.searchsorted(out_seg, out_seg)
            ok = rank < limit
            src, out_seg = src[ok], out_seg[ok]
        return _list_from(elem_rows.take(pa.array(src)), out_seg, has, self.arrow_type)

    def _index(self, name: str) -> int:
        assert self.field.type.element is not None
        return [f.name for f in self.field.type.element.fields].index(name)


# ---------------------------------------------------------------------------------------------------- registry

