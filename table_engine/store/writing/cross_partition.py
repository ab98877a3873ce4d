"""Cross-partition upsert: a global key -> (partition, bucket) index for dynamic-bucket tables whose primary key
does not contain every partition field (Paimon's ``CROSS_PARTITION`` bucket mode, its ``GlobalIndexAssigner``).

A key lives in exactly one (partition, bucket). At the start of a write the index is bootstrapped from the live
keys of the latest snapshot (key and partition columns only, split by split in ``bootstrap-parallelism``
threads; with ``cross-partition-upsert.index-ttl`` a split all of whose files were created longer ago than the
ttl is skipped, as Paimon's ``IndexBootstrap`` does, so its keys may come back as duplicates). Each written batch
is then assigned against the index, which also learns the keys of the batch (so later rows of the batch and
later batches of the same writer see them). A row whose key already lives in another partition is handled as the
merge engine's :class:`~table_engine.lsm.merge_engines.MovedKey` capability says:

* ``DELETE_AND_INSERT`` (``deduplicate``): a DELETE record with the key is written into the old partition and
  bucket, and the row goes into its new partition (a new bucket there);
* ``UPDATE_OLD`` (``partial-update`` and ``aggregation``): the row is written into the old partition and bucket
  (its partition fields replaced by the old partition's values);
* ``IGNORE`` (``first-row``): the row is dropped.

New keys of a partition fill its buckets up to ``dynamic-bucket.target-row-num`` keys (counted from the bootstrap,
less keys moved away) in bucket order, then open the lowest unused bucket; with an :class:`Assigner`, only the
assigner's own buckets. No HASH index files are written in this mode (as in Paimon).

Everything is vectorized: the index is an Arrow table of keys looked up with ``pc.index_in`` or hash joins;
only loops over partitions and buckets are Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine import clock
from table_engine.core_options import (
    CROSS_PARTITION_UPSERT_BOOTSTRAP_PARALLELISM,
    CROSS_PARTITION_UPSERT_INDEX_TTL,
)
from table_engine.format.bucket import bucket_of, hash_key_columns
from table_engine.io.executor import parallel_map
from table_engine.lsm.merge_engines import MovedKey
from table_engine.store.context import StoreContext
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.scan import Split, plan_splits
from table_engine.store.writing.bucket_assign import Assigner
from table_engine.types import DataType

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
_ROW = "__xp_row"
_POS = "__xp_pos"
BOOTSTRAP_BUCKET = "_BUCKET"
"""The bucket column of :func:`bootstrap_keys` (Paimon's ``IndexBootstrap.BUCKET_FIELD``)."""


def key_routes(keys: pa.Table, key_types: list[DataType], num_assigners: int) -> I32:
    """Each row's assigner when rows are routed by key: the key's hash (Paimon's BinaryRow hash of the trimmed
    primary key) modulo ``num_assigners``, Java style."""
    return bucket_of(hash_key_columns(list(keys.columns), key_types), num_assigners)


def bootstrap_keys(ctx: StoreContext, now_millis: int | None = None, assigner: Assigner | None = None) -> pa.Table:
    """Live rows of the latest snapshot as key columns, partition columns and ``_BUCKET`` (one row per key).

    Splits whose files are all older than ``cross-partition-upsert.index-ttl`` (by creation time) are skipped.
    Splits are read in ``cross-partition-upsert.bootstrap-parallelism`` threads. With an ``assigner`` only the
    keys routed to it (:func:`key_routes`) are kept."""
    schema = ctx.schema
    columns = list(dict.fromkeys([*schema.trimmed_primary_keys(), *schema.partition_keys]))
    read = TableRead(read_context(ctx), columns)
    empty = read.output_schema.empty_table().append_column(BOOTSTRAP_BUCKET, pa.array([], pa.int32()))
    snapshot = ctx.latest_snapshot()
    if snapshot is None:
        return empty
    splits = plan_splits(ctx.file_io, ctx.table_path, snapshot, schema, schema_loader=ctx.schema_by_id)
    ttl = ctx.options.get(CROSS_PARTITION_UPSERT_INDEX_TTL)
    if ttl is not None:
        now = clock.now_millis() if now_millis is None else now_millis
        splits = [s for s in splits if _within_ttl(s, ttl, now)]

    key_names = schema.trimmed_primary_keys()
    key_types = [schema.field(k).type for k in key_names]

    def one(split: Split) -> pa.Table:
        t = read.read_split(split)
        if assigner is not None and t.num_rows:
            t = t.filter(pa.array(key_routes(t.select(key_names), key_types, assigner.num_assigners)
                                  == assigner.assign_id))
        return t.append_column(BOOTSTRAP_BUCKET, pa.array(np.full(t.num_rows, split.bucket, np.int32)))

    parallelism = max(1, ctx.options.get(CROSS_PARTITION_UPSERT_BOOTSTRAP_PARALLELISM))
    if parallelism > 1 and len(splits) > 1:
        tables = parallel_map(one, splits, parallelism)
    else:
        tables = [one(s) for s in splits]
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else empty


def _within_ttl(split: Split, ttl_millis: int, now_millis: int) -> bool:
    """Paimon's ``IndexBootstrap.filterSplit``: keep the split if any file was created within the ttl."""
    return any(f.creation_time_millis is None or now_millis <= f.creation_time_millis + ttl_millis
               for f in split.files)


@dataclass
class Assignment:
    """Where the rows of one batch go: ``take`` indexes the batch (a row may appear twice: its DELETE in the old
    partition, then itself), with each output row's partition id, bucket and whether it is that DELETE."""

    take: I64
    parts: I32
    buckets: I32
    retract: npt.NDArray[np.bool_]


class GlobalIndex:
    """Key -> (partition id, bucket) of one writer; partition ids are the writer's own.

    Stored as an Arrow table of keys with numpy arrays of partitions and buckets at the same positions. A batch is
    looked up with ``pc.index_in`` (one key column) or a hash join (several), and the index is updated in place
    for known keys, new keys being appended."""

    def __init__(self, key_names: list[str], key_schema: pa.Schema, moved_key: MovedKey, target_rows: int,
                 assigner: Assigner | None = None) -> None:
        self.key_names = key_names
        self.key_schema = key_schema
        self.moved_key = moved_key  # what the merge engine does with a key arriving in another partition
        self.target_rows = max(1, target_rows)
        self.assigner = assigner
        self.keys = key_schema.empty_table()
        self.parts: I32 = np.empty(0, np.int32)
        self.buckets: I32 = np.empty(0, np.int32)
        self._single: pa.Array | None = None  # the one key column, combined (lookups with pc.index_in)
        self.counts: dict[int, dict[int, int]] = {}  # partition id -> bucket -> keys

    def load(self, keys: pa.Table, parts: I32, buckets: I32) -> None:
        """Bootstrap from existing keys (``keys``: the key columns; one row per key)."""
        self._append(keys.select(self.key_names), parts, buckets)
        if len(parts):
            combo = (parts.astype(np.int64) << 32) | (buckets.astype(np.int64) & 0xFFFFFFFF)
            uniq, counts = np.unique(combo, return_counts=True)
            for c, n in zip(uniq.tolist(), counts.tolist()):
                per = self.counts.setdefault(c >> 32, {})
                b = int(np.int32(c & 0xFFFFFFFF))
                per[b] = per.get(b, 0) + n

    def __len__(self) -> int:
        return len(self.parts)

    def assign(self, keys: pa.Table, parts: I32) -> Assignment:
        """Assign the rows of a batch (``keys``: its key columns, ``parts``: each row's partition id)."""
        n = keys.num_rows
        keys = keys.select(self.key_names).cast(self.key_schema)
        rows = np.arange(n, dtype=np.int64)
        pos = self._lookup(keys)  # each row's key in the index, -1 if unknown
        known = pos >= 0
        old_part = np.full(n, -1, np.int32)
        old_bucket = np.full(n, -1, np.int32)
        old_part[known] = self.parts[pos[known]]
        old_bucket[known] = self.buckets[pos[known]]
        kid = _dense_ids(keys)
        order = np.lexsort((rows, kid))  # by key, then arrival
        s_kid, s_part = kid[order], parts[order].astype(np.int32)
        s_old_part, s_old_bucket = old_part[order], old_bucket[order]
        group_start = np.ones(n, bool)
        group_start[1:] = s_kid[1:] != s_kid[:-1]
        if self.moved_key is MovedKey.DELETE_AND_INSERT:
            out = self._assign_moving(order, group_start, s_part, s_old_part, s_old_bucket)
        else:
            out = self._assign_fixed(order, group_start, s_part, s_old_part, s_old_bucket)
        self._remember(keys, kid, pos, out)
        return out

    # ---- moved keys ----------------------------------------------------------------------------------------------
    def _assign_fixed(self, order: I64, group_start: npt.NDArray[np.bool_], s_part: I32, s_old_part: I32,
                      s_old_bucket: I32) -> Assignment:
        """UPDATE_OLD (into the key's partition) and IGNORE (records for other partitions dropped)."""
        gid = np.cumsum(group_start) - 1
        starts = np.flatnonzero(group_start)
        loc_part = s_old_part[starts].copy()
        loc_bucket = s_old_bucket[starts].copy()
        new = loc_part < 0
        loc_part[new] = s_part[starts][new]
        loc_bucket[new] = self._new_buckets(loc_part[new], order[starts][new])
        r_part, r_bucket = loc_part[gid], loc_bucket[gid]
        keep = np.ones(len(order), bool)
        if self.moved_key is MovedKey.IGNORE:
            keep = r_part == s_part
        take = order[keep]
        back = np.argsort(take, kind="stable")  # arrival order
        return Assignment(take[back], r_part[keep][back], r_bucket[keep][back], np.zeros(len(take), bool))

    def _assign_moving(self, order: I64, group_start: npt.NDArray[np.bool_], s_part: I32, s_old_part: I32,
                       s_old_bucket: I32) -> Assignment:
        """DELETE_AND_INSERT: each change of partition retracts the key from where it was and opens it anew."""
        n = len(order)
        prev_part = np.empty(n, np.int32)
        prev_part[1:] = s_part[:-1]
        prev_part[group_start] = s_old_part[group_start]
        moved = s_part != prev_part  # a new location for the key (new key, or another partition)
        seg_start = moved | group_start
        seg = np.cumsum(seg_start) - 1
        seg_rows = np.flatnonzero(seg_start)
        seg_bucket = s_old_bucket[seg_rows].copy()  # segments that are not moves continue the existing bucket
        seg_moved = moved[seg_rows]
        seg_bucket[seg_moved] = self._new_buckets(s_part[seg_rows][seg_moved], order[seg_rows][seg_moved])
        r_bucket = seg_bucket[seg]
        # retractions: a move from an existing location (the previous segment, or the index for a group's first)
        retract_rows = np.flatnonzero(moved & (prev_part >= 0))
        prev_bucket = np.where(group_start[retract_rows], s_old_bucket[retract_rows],
                               seg_bucket[np.maximum(seg[retract_rows] - 1, 0)])
        d_part = prev_part[retract_rows]
        for p, b in zip(d_part.tolist(), prev_bucket.tolist()):
            per = self.counts.setdefault(p, {})
            per[b] = max(0, per.get(b, 0) - 1)
        take = np.concatenate([order[retract_rows], order])
        sort_key = take * 2 + np.concatenate([np.zeros(len(retract_rows), np.int64), np.ones(n, np.int64)])
        back = np.argsort(sort_key, kind="stable")
        return Assignment(take[back], np.concatenate([d_part, s_part])[back].astype(np.int32),
                          np.concatenate([prev_bucket, r_bucket])[back].astype(np.int32),
                          np.concatenate([np.ones(len(retract_rows), bool), np.zeros(n, bool)])[back])

    # ---- buckets and the index -----------------------------------------------------------------------------------
    def _new_buckets(self, parts: I32, arrival: I64) -> I32:
        """Buckets for keys new to their partition (``parts``), filled in arrival order."""
        out = np.empty(len(parts), np.int32)
        if not len(parts):
            return out
        by_arrival = np.argsort(arrival, kind="stable")
        for p in np.unique(parts).tolist():
            pos = by_arrival[parts[by_arrival] == p]
            out[pos] = self._fill(self.counts.setdefault(p, {}), len(pos))
        return out

    def _fill(self, counts: dict[int, int], m: int) -> I32:
        """``m`` buckets: existing buckets with room (in bucket order), then the lowest unused ones (Paimon's
        crosspartition ``BucketAssigner``), only this writer's buckets."""
        out = np.empty(m, np.int32)
        cursor = 0
        owns = self.assigner.owns if self.assigner is not None else (lambda b: True)
        for b in sorted(counts):
            if cursor == m:
                break
            room = self.target_rows - counts[b]
            if room > 0 and owns(b):
                take = min(room, m - cursor)
                out[cursor:cursor + take] = b
                counts[b] += take
                cursor += take
        b = self.assigner.assign_id if self.assigner is not None else 0
        step = self.assigner.num_assigners if self.assigner is not None else 1
        while cursor < m:
            if b not in counts:
                take = min(self.target_rows, m - cursor)
                out[cursor:cursor + take] = b
                counts[b] = take
                cursor += take
            b += step
        return out

    def _remember(self, keys: pa.Table, kid: I64, pos: I64, a: Assignment) -> None:
        """The index learns each batch key's final location (its last non-retract output row)."""
        live = np.flatnonzero(~a.retract)
        if not len(live):
            return
        rows = a.take[live]  # batch rows in output (arrival) order
        rev_kid = kid[rows][::-1]
        _, last_rev = np.unique(rev_kid, return_index=True)
        last = len(rows) - 1 - last_rev  # per key, its last output row
        row = rows[last]
        f_part, f_bucket = a.parts[live][last], a.buckets[live][last]
        known = pos[row] >= 0
        self.parts[pos[row][known]] = f_part[known]
        self.buckets[pos[row][known]] = f_bucket[known]
        new = ~known
        if new.any():
            self._append(keys.take(pa.array(row[new])), f_part[new], f_bucket[new])

    def _append(self, keys: pa.Table, parts: I32, buckets: I32) -> None:
        self.keys = pa.concat_tables([self.keys, keys.cast(self.key_schema)])
        self.parts = np.concatenate([self.parts, np.asarray(parts, np.int32)])
        self.buckets = np.concatenate([self.buckets, np.asarray(buckets, np.int32)])
        self._single = None

    def _lookup(self, keys: pa.Table) -> I64:
        """Index position of each row's key (-1: unknown)."""
        n = keys.num_rows
        if not len(self.parts):
            return np.full(n, -1, np.int64)
        if len(self.key_names) == 1:
            if self._single is None:
                self._single = self.keys.column(0).combine_chunks()
            found = pc.index_in(keys.column(0), value_set=self._single)
            return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
        left = keys.append_column(_ROW, pa.array(np.arange(n, dtype=np.int64)))
        right = self.keys.append_column(_POS, pa.array(np.arange(len(self.parts), dtype=np.int64)))
        joined = left.join(right, self.key_names, join_type="inner")
        out = np.full(n, -1, np.int64)
        out[joined.column(_ROW).to_numpy()] = joined.column(_POS).to_numpy()
        return out


def _dense_ids(keys: pa.Table) -> I64:
    """A dense id per distinct key of a batch (per column dictionary codes, combined and re-densified)."""
    ids = np.zeros(keys.num_rows, np.int64)
    for col in keys.columns:
        enc = pc.dictionary_encode(col.combine_chunks())
        codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        ids = ids * len(enc.dictionary) + codes
        if len(keys.columns) > 1:
            ids = np.unique(ids, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return ids


def rewrite_partition_columns(t: pa.Table, names: list[str], values: pa.Table, parts: I32) -> pa.Table:
    """``t`` with its partition columns ``names`` set to row ``parts[i]`` of ``values`` (values per partition id)."""
    idx = pa.array(parts, pa.int32())
    for name in names:
        i = t.schema.get_field_index(name)
        t = t.set_column(i, t.field(i), pc.take(values.column(name), idx).cast(t.field(i).type))
    return t
