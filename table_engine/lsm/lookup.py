"""Looking keys up in the higher levels of a bucket's LSM tree (pure: tables in, indices out; no I/O).

Lookup compaction (deletion vectors, and the lookup changelog producer) needs, for keys that a compaction moves out
of level 0, the newest older version of each key stored in a level above the output level: Paimon's
``LookupLevels.lookup(key, outputLevel + 1)``. The caller reads the candidate files level by level (lowest first:
the newest data) and calls :func:`locate_keys` per file with the keys still unresolved; a key found in a level is
not looked up in the levels above it.

Everything is vectorized: one hash lookup (``pyarrow.compute.index_in``) or hash join per file, no per-row Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.levels import KeyCodec, Levels

R = TypeVar("R")

__all__ = ["KeyHits", "keys_not_in", "locate_keys", "may_hold_keys", "without_keys"]

_LEFT = "__lookup_left"
_RIGHT = "__lookup_right"


@dataclass(frozen=True)
class KeyHits:
    """Matches of looked-up keys in one candidate table: ``key_index[i]`` (row of the keys) was found at row
    ``candidate_index[i]`` of the candidates."""

    key_index: npt.NDArray[np.int64]
    candidate_index: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.key_index)


def locate_keys(keys: pa.Table, candidates: pa.Table, key_names: Sequence[str]) -> KeyHits:
    """Where each row of ``keys`` occurs in ``candidates`` (both hold the ``key_names`` columns; the candidates'
    keys are unique, as in one data file). Keys without a match are left out."""
    if keys.num_rows == 0 or candidates.num_rows == 0:
        empty = np.empty(0, np.int64)
        return KeyHits(empty, empty)
    if len(key_names) == 1:
        name = key_names[0]
        found = pc.index_in(keys.column(name), value_set=candidates.column(name).combine_chunks())
        hit = found.is_valid()
        key_index = np.flatnonzero(hit.to_numpy(zero_copy_only=False)).astype(np.int64)
        cand = found.filter(hit).to_numpy(zero_copy_only=False).astype(np.int64)
        return KeyHits(key_index, cand)
    left = keys.select(list(key_names)).append_column(_LEFT, pa.array(np.arange(keys.num_rows, dtype=np.int64)))
    right = candidates.select(list(key_names)).append_column(
        _RIGHT, pa.array(np.arange(candidates.num_rows, dtype=np.int64)))
    joined = left.join(right, keys=list(key_names), join_type="inner", use_threads=False)
    li = joined.column(_LEFT).to_numpy().astype(np.int64)
    ri = joined.column(_RIGHT).to_numpy().astype(np.int64)
    order = np.argsort(li, kind="stable")
    return KeyHits(li[order], ri[order])


def keys_not_in(keys: pa.Table, others: Sequence[pa.Table], key_names: Sequence[str]) -> npt.NDArray[np.bool_]:
    """Mask over ``keys``: True where the key occurs in none of ``others``."""
    mask = np.ones(keys.num_rows, dtype=np.bool_)
    for other in others:
        if other.num_rows:
            mask[locate_keys(keys, other, key_names).key_index] = False
    return mask


def without_keys(keys: pa.Table, hits: KeyHits) -> pa.Table:
    """``keys`` without the rows ``hits`` found (the keys still to look up in higher levels)."""
    keep = np.ones(keys.num_rows, dtype=np.bool_)
    keep[hits.key_index] = False
    return keys.filter(pa.array(keep))


def may_hold_keys(codec: KeyCodec, f: DataFileMeta, keys: pa.Table, first_key: str) -> bool:
    """Whether the key range of ``f`` can hold one of ``keys`` (pruned on the first key column only; True when the
    values do not compare)."""
    try:
        lo_hi = pc.min_max(keys.column(first_key))
        lo, hi = lo_hi["min"].as_py(), lo_hi["max"].as_py()
        return bool(codec.min_key(f)[0] <= hi and lo <= codec.max_key(f)[0])
    except (TypeError, pa.ArrowException, IndexError):
        return True


def find_keys_above(levels: Levels, codec: KeyCodec, key_names: Sequence[str], output_level: int, keys: pa.Table,
                    read: Callable[[DataFileMeta], R], rows_of: Callable[[R], pa.Table], *,
                    newest_wins: bool) -> Iterator[tuple[DataFileMeta, R, KeyHits]]:
    """The files above ``output_level`` that hold some of ``keys``, lowest level first, each with what ``read``
    returned for it and where the keys were found in its rows (``rows_of`` of that). With ``newest_wins`` a key
    found is not looked for further up (the first version found, on the lowest level, is the newest); the walk
    stops once no key is left."""
    remaining = keys.select(list(key_names))
    for level in range(output_level + 1, levels.max_level + 1):
        for f in levels.run_of_level(level).files:
            if remaining.num_rows == 0:
                return
            if not may_hold_keys(codec, f, remaining, key_names[0]):
                continue
            got = read(f)
            hits = locate_keys(remaining, rows_of(got), key_names)
            if not len(hits):
                continue
            yield f, got, hits
            if newest_wins:
                remaining = without_keys(remaining, hits)
