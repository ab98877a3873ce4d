"""Aggregators over strings and serialized objects: listagg, roaring bitmaps and DataSketches sketches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import UnsupportedError
from table_engine.lsm.merge_engines.aggregators.base import Aggregator, FieldOptions, _explode, _list_from
from table_engine.lsm.merge_engines.segments import (
    Segments,
    combine,
    first_per_group,
    group_ids,
    take_or_null,
    valid_mask,
)
from table_engine.types import MAX_LENGTH, DataType

_I64 = np.int64

def _blank(values: pa.Array) -> np.ndarray:
    """Java's ``StringUtils.isBlank``: null, empty or only whitespace."""
    arr = combine(values)
    empty = pc.equal(pc.utf8_length(arr), 0)
    space = pc.utf8_is_space(arr)
    blank = pc.fill_null(pc.or_(empty, space), True)
    return np.asarray(blank.to_numpy(zero_copy_only=False), bool)


class ListAgg(Aggregator):
    """Joins non-blank strings with ``list-agg-delimiter``; ``distinct`` skips tokens seen already."""

    single_identity = False

    name = "listagg"
    types_doc = "STRING"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "VARCHAR" and t.length == MAX_LENGTH

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals = combine(values).cast(pa.string())
        keep = ~_blank(vals)
        has = seg.any(keep)
        rows = np.flatnonzero(keep)
        kept = vals.take(pa.array(rows))
        kept_seg = seg.ids[rows]
        delim = self.options.delimiter
        if not self.options.distinct:
            lists = _list_from(kept, kept_seg, has, pa.list_(pa.string()))
            return pc.binary_join(lists, delim).cast(self.arrow_type)
        # distinct: the first string goes in whole; later ones add their non-blank tokens not seen yet
        first_of_seg = np.zeros(len(rows), bool)
        if len(rows):
            first_of_seg[0] = True
            first_of_seg[1:] = kept_seg[1:] != kept_seg[:-1]
        tokens = pc.split_pattern(kept, delim) if delim else pc.utf8_split_whitespace(kept)
        child, parent = _explode(tokens)
        flat = combine(tokens).values.take(pa.array(child))
        tok_seg = kept_seg[parent]
        tok_first = first_of_seg[parent]
        candidate = tok_first | ~_blank(flat)
        cand = np.flatnonzero(candidate)
        gid, ngroups = group_ids([pa.array(tok_seg[cand]), flat.take(pa.array(cand))])
        first_pos = first_per_group(gid, ngroups, np.arange(len(cand), dtype=_I64))
        is_first_occ = first_pos[gid] == np.arange(len(cand), dtype=_I64)
        later = cand[is_first_occ & ~tok_first[cand]]
        # pieces: the first string of each segment, then the added tokens, in order
        piece_seg = np.concatenate([kept_seg[first_of_seg], tok_seg[later]])
        piece_ord = np.concatenate([np.flatnonzero(first_of_seg) * 0 - 1, later])
        order = np.lexsort((piece_ord, piece_seg))
        n_first = int(first_of_seg.sum())
        firsts = kept.take(pa.array(np.flatnonzero(first_of_seg)))
        all_pieces = pa.concat_arrays([firsts, flat.take(pa.array(later)).cast(pa.string())])
        src = np.concatenate([np.arange(n_first, dtype=_I64), n_first + np.arange(len(later), dtype=_I64)])
        pieces = all_pieces.take(pa.array(src[order]))
        lists = _list_from(pieces, piece_seg[order], has, pa.list_(pa.string()))
        return pc.binary_join(lists, delim).cast(self.arrow_type)


# ---------------------------------------------------------------------------------------------------- bitmaps, sketches

class _ObjectUnion(Aggregator):
    """Union of serialized objects (bitmaps, sketches): a key with one non-null value keeps its bytes as they are;
    keys with several are unioned (one library call per such key: these libraries have no batch API)."""

    types_doc = "VARBINARY"
    roots = frozenset({"VARBINARY"})

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        valid = valid_mask(values)
        counts = seg.count_where(valid)
        result = take_or_null(values, seg.last_where(valid))
        multi = np.flatnonzero(counts > 1)
        if not len(multi):
            return result
        vals = combine(values)
        out = result.to_pylist()
        for s in multi.tolist():
            rows = np.flatnonzero(valid[seg.starts[s]:seg.ends[s]]) + seg.starts[s]
            items = [vals[int(r)].as_py() for r in rows]
            try:
                out[s] = self.union(items)
            except (ValueError, RuntimeError, TypeError) as e:
                raise self._error(f"cannot deserialize or union the stored values: {e}") from None
        return pa.array(out, self.arrow_type)

    def union(self, items: list[bytes]) -> bytes:
        raise NotImplementedError


class RoaringBitmap32(_ObjectUnion):
    """OR of serialized 32-bit roaring bitmaps (portable format, as Java's RoaringBitmap writes it)."""

    name = "rbm32"

    def union(self, items: list[bytes]) -> bytes:
        from pyroaring import BitMap

        out = BitMap.union(*[BitMap.deserialize(b) for b in items])
        out.run_optimize()
        return bytes(out.serialize())


class RoaringBitmap64(_ObjectUnion):
    """OR of serialized 64-bit roaring bitmaps (the 64-bit portable format of pyroaring's ``BitMap64``)."""

    name = "rbm64"

    def union(self, items: list[bytes]) -> bytes:
        from pyroaring import BitMap64

        out = BitMap64.union(*[BitMap64.deserialize(b) for b in items])
        out.run_optimize()
        return bytes(out.serialize())


class HllSketch(_ObjectUnion):
    """Union of serialized Apache DataSketches HLL sketches (result: HLL_4, compact, lgK = the smallest lgK)."""

    name = "hll_sketch"

    def union(self, items: list[bytes]) -> bytes:
        ds = _datasketches()
        sketches = [ds.hll_sketch.deserialize(b) for b in items]
        union = ds.hll_union(min(s.lg_config_k for s in sketches))
        for s in sketches:
            union.update(s)
        return bytes(union.get_result(ds.tgt_hll_type.HLL_4).serialize_compact())


class ThetaSketch(_ObjectUnion):
    """Union of serialized Apache DataSketches theta sketches (default union, ordered compact result)."""

    name = "theta_sketch"

    def union(self, items: list[bytes]) -> bytes:
        ds = _datasketches()
        union = ds.theta_union()
        for b in items:
            union.update(ds.compact_theta_sketch.deserialize(b))
        return bytes(union.get_result().serialize())


def _datasketches() -> Any:
    try:
        import datasketches
    except ImportError:  # pragma: no cover - a declared dependency
        raise UnsupportedError("hll_sketch / theta_sketch need the 'datasketches' package (pip install "
                               "datasketches)") from None
    return datasketches
