"""Range partitioning by a sort order: boundaries from a sample of the rows' keys, and each row's range, so that
several workers can sort one partition (each its own range of keys) and the ranges, in order, are the partition
sorted (the Spark sort compaction: :mod:`table_engine.spark.jobs.sort_job`).

Rows carry the columns their order sorts by (:func:`~table_engine.sort.keys.keyed_sort`): a curve's key, compared
as unsigned bytes, or the ``order`` columns with their NaN flags. Pure functions over Arrow tables; nothing loops
over rows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.sort.keys import KEY_COLUMN, SortKeys, key_bytes, keyed_indices

__all__ = ["SAMPLE_PER_RANGE", "boundaries", "key_columns", "range_ids", "sample"]

SAMPLE_PER_RANGE = 100
"""Rows sampled for each range a partition is cut into (Spark's range partitioning samples 100 a partition)."""
_MARK = "__bound"


def key_columns(keyed: pa.Table, sort_keys: SortKeys) -> pa.Table:
    """Only the columns ``sort_keys`` sort by."""
    return keyed.select([name for name, _, _ in sort_keys])


def sample(keyed: pa.Table, sort_keys: SortKeys, fraction: float, seed: int) -> pa.Table:
    """The key columns of each row kept with probability ``fraction`` (a seeded draw: the same rows each run)."""
    if fraction >= 1:
        return key_columns(keyed, sort_keys)
    keep = np.random.default_rng(seed).random(keyed.num_rows) < fraction
    return key_columns(keyed, sort_keys).filter(pa.array(keep))


def boundaries(samples: pa.Table, sort_keys: SortKeys, ranges: int) -> pa.Table:
    """The ``ranges - 1`` keys that cut the sample's order into ``ranges`` parts of equal counts, ascending (empty
    for one range or an empty sample; a skewed sample may repeat a boundary: its range is then empty)."""
    if ranges <= 1 or samples.num_rows == 0:
        return samples.slice(0, 0)
    ordered = samples.take(keyed_indices(samples, sort_keys))
    at = [min(ordered.num_rows - 1, ordered.num_rows * i // ranges) for i in range(1, ranges)]
    return ordered.take(pa.array(at, pa.int64()))


def range_ids(keyed: pa.Table, bounds: pa.Table, sort_keys: SortKeys) -> np.ndarray:
    """Each row's range: how many of the (ascending) ``bounds`` sort at or before it, 0 to ``len(bounds)``."""
    n = keyed.num_rows
    if bounds.num_rows == 0:
        return np.zeros(n, dtype=np.int64)
    if len(sort_keys) == 1 and sort_keys[0][0] == KEY_COLUMN:
        return np.searchsorted(key_bytes(bounds), key_bytes(keyed), side="right").astype(np.int64)
    rows = key_columns(keyed, sort_keys)
    both = pa.concat_tables([rows.append_column(_MARK, pa.array(np.ones(n, np.int8))),
                             bounds.append_column(_MARK, pa.array(np.zeros(bounds.num_rows, np.int8)))])
    # a bound sorts before the rows equal to it: the bounds counted before a row are those at or below it
    order = pc.sort_indices(both, sort_keys=[*sort_keys, (_MARK, "ascending", "at_end")]).to_numpy()
    is_bound = order >= n
    before = np.cumsum(is_bound)
    ids = np.empty(n, dtype=np.int64)
    ids[order[~is_bound]] = before[~is_bound]
    return ids
