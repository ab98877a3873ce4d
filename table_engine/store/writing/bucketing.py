"""Bucketing: the partition id and the bucket of each row a writer takes, for every bucket mode.

Paimon's ``BucketMode`` (:class:`~table_engine.format.bucket.BucketMode`) decides how a row finds its bucket:

* ``HASH_FIXED`` (``bucket`` > 0): the hash of the bucket key modulo the bucket count;
* ``HASH_DYNAMIC`` (``bucket`` = -1 on a primary-key table): known keys keep their bucket, new keys fill the
  partition's buckets through its HASH index (:mod:`table_engine.store.writing.bucket_assign`);
* ``KEY_DYNAMIC`` (dynamic buckets with a primary key that leaves out a partition field): a global key index routes
  each key to the partition and bucket that hold it (:mod:`table_engine.store.writing.cross_partition`);
* ``POSTPONE_MODE`` (``bucket`` = -2): every row goes to ``bucket-postpone``
  (:mod:`table_engine.store.writing.postpone`);
* ``BUCKET_UNAWARE`` (``bucket`` = -1 on an append table): every row goes to bucket 0.

Partitions are numbered densely per writer (:class:`Partitions`) so that a (partition, bucket) group fits one int64.
Everything is vectorized over the batch with Arrow and numpy; the Python loops run over partitions, not rows. As
pypaimon's ``row_key_extractor`` and Java's ``KeyAndBucketExtractor`` + ``BucketAssigner``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_options import CoreOptions
from table_engine.errors import DataError
from table_engine.format.binary_row import encode_row
from table_engine.format.bucket import BucketMode, bucket_of, hash_key_columns
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.key_value import VALUE_KIND
from table_engine.store.context import StoreContext
from table_engine.store.writing.bucket_assign import Assigner, PartitionBucketIndex
from table_engine.store.writing.cross_partition import (
    BOOTSTRAP_BUCKET,
    GlobalIndex,
    bootstrap_keys,
    key_routes,
    rewrite_partition_columns,
)
from table_engine.store.writing.postpone import POSTPONE_BUCKET
from table_engine.types import DataField

__all__ = ["BucketSpec", "Partitions", "RowKeyExtractor", "fixed_buckets"]


@dataclass(frozen=True)
class BucketSpec:
    """A table's bucket mode, its ``bucket`` option and bucket key, checked for writing."""

    mode: BucketMode
    num_buckets: int
    bucket_keys: tuple[str, ...]

    @classmethod
    def of(cls, schema: TableSchema, options: CoreOptions) -> BucketSpec:
        """The spec of a writable table; :class:`DataError` for a ``bucket`` or ``bucket-key`` it cannot write."""
        has_pk = bool(schema.primary_keys)
        num = options.bucket()
        if num == 0 or num < -2 or (num == POSTPONE_BUCKET and not has_pk):
            raise DataError(f"bucket = {num} is invalid: use a positive count or -1")
        # a global key index instead of per-partition HASH indexes when a key may change partition
        mode = BucketMode.of(has_pk, num, schema.cross_partition_update())
        bucket_keys = tuple(schema.bucket_keys())
        if not has_pk and num > 0 and not bucket_keys:
            raise DataError("an append table with fixed buckets needs the 'bucket-key' option")
        return cls(mode, num, bucket_keys)

    @property
    def total_buckets(self) -> int:
        """The ``_TOTAL_BUCKETS`` of the manifest entries: the bucket count, -2 for postpone, else -1."""
        return self.num_buckets if self.mode in (BucketMode.HASH_FIXED, BucketMode.POSTPONE_MODE) else -1


def fixed_buckets(data: pa.Table, bucket_key: Sequence[DataField], num_buckets: int) -> np.ndarray:
    """``HASH_FIXED``: each row's bucket, the hash of its ``bucket_key`` columns (in the table's types) modulo
    ``num_buckets``, as Paimon's ``FixedBucketRowKeyExtractor``."""
    return bucket_of(hash_key_columns([data.column(f.name) for f in bucket_key], [f.type for f in bucket_key]),
                     num_buckets)


class Partitions:
    """The partitions one writer has met, numbered densely in order of arrival: id -> values and BinaryRow."""

    def __init__(self, fields: Sequence[DataField]) -> None:
        self.fields = tuple(fields)
        self.values: list[tuple[Any, ...]] = []
        """The partition values of each id."""
        self.binary: list[bytes] = []
        """The serialized partition (BinaryRow) of each id."""
        self._ids: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.values)

    def id_of(self, binary: bytes) -> int:
        return self._ids[binary]

    def register(self, values: tuple[Any, ...], binary: bytes) -> int:
        gid = self._ids.get(binary)
        if gid is None:
            gid = len(self.values)
            self.values.append(values)
            self.binary.append(binary)
            self._ids[binary] = gid
        return gid

    def ids(self, t: pa.Table) -> np.ndarray:
        """The partition id of each row of ``t`` (registering new partitions): one dictionary encoding per
        partition column, combined into one code per row."""
        n = t.num_rows
        if not self.fields:
            if not self.values:
                self.register((), encode_row([], []))
            return np.zeros(n, np.int32)
        codes = np.zeros(n, np.int64)
        dicts = []
        for f in self.fields:
            enc = pc.dictionary_encode(t.column(f.name).combine_chunks(), null_encoding="encode")
            idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            dicts.append(enc.dictionary)
            codes = codes * (len(enc.dictionary) + 1) + idx
        uniq, inverse = np.unique(codes, return_inverse=True)
        local_to_global = np.empty(len(uniq), np.int32)
        radices = [len(d) + 1 for d in dicts]
        types = [f.type for f in self.fields]
        for j, code in enumerate(uniq.tolist()):
            vals: list[Any] = []
            rem = code
            for d, r in zip(reversed(dicts), reversed(radices)):
                vals.append(d[rem % r].as_py())
                rem //= r
            vals.reverse()
            local_to_global[j] = self.register(tuple(vals), encode_row(vals, types))
        return local_to_global[inverse.reshape(-1)]


class RowKeyExtractor:
    """The partition id and bucket of each row of one writer (which holds the dynamic modes' key indexes)."""

    def __init__(self, ctx: StoreContext, spec: BucketSpec, hash_indexes: dict[bytes, PartitionBucketIndex]) -> None:
        self.ctx = ctx
        self.spec = spec
        self.layout = ctx.layout
        self.partitions = Partitions(self.layout.partition_fields)
        self.hash_indexes = hash_indexes
        """``HASH_DYNAMIC``: the HASH index of each partition (BinaryRow) written or restored (shared with the
        writer's committed state, which restores it)."""
        self.global_index: GlobalIndex | None = None
        """``KEY_DYNAMIC``: the key index, loaded by :meth:`bootstrap_global_index`."""
        self.input_partitions: set[int] = set()
        """``KEY_DYNAMIC``: the partitions of input rows since the last commit (the writer clears it)."""
        self.assigner: Assigner | None = None
        """Dynamic modes: new keys go only to this writer's buckets (one of several writers of a commit)."""

    def extract(self, t: pa.Table) -> tuple[pa.Table, np.ndarray, np.ndarray]:
        """The rows (``KEY_DYNAMIC``: reordered, with retractions of moved keys), their partition ids and buckets."""
        parts = self.partitions.ids(t)
        if self.spec.mode is BucketMode.KEY_DYNAMIC:
            return self._route_by_global_index(t, parts)
        return t, parts, self.bucket_ids(t, parts)

    def bucket_ids(self, t: pa.Table, parts: np.ndarray) -> np.ndarray:
        """The bucket of each row of ``t`` (partition ids ``parts``), in every mode but ``KEY_DYNAMIC``."""
        n = t.num_rows
        mode = self.spec.mode
        if mode is BucketMode.POSTPONE_MODE:
            return np.full(n, POSTPONE_BUCKET, np.int32)
        if mode is BucketMode.HASH_FIXED:
            fields = [self.ctx.schema.field(k) for k in self.spec.bucket_keys]
            return fixed_buckets(t, fields, self.spec.num_buckets)
        if mode is not BucketMode.HASH_DYNAMIC:
            return np.zeros(n, np.int32)
        hashes = hash_key_columns([t.column(k) for k in self.layout.key_names],
                                  [f.type for f in self.layout.key_fields])
        out = np.empty(n, np.int32)
        target = self.ctx.options.dynamic_bucket_target_row_num()
        max_buckets = self.ctx.options.dynamic_bucket_max_buckets()
        for gid in np.unique(parts).tolist():
            mask = parts == gid
            idx = self.hash_indexes.setdefault(self.partitions.binary[gid], PartitionBucketIndex())
            out[mask] = idx.assign(hashes[mask], target, max_buckets, self.assigner)
        return out

    def _route_by_global_index(self, t: pa.Table, parts: np.ndarray) -> tuple[pa.Table, np.ndarray, np.ndarray]:
        """Rows routed by the global key index (:mod:`table_engine.store.writing.cross_partition`)."""
        assert self.global_index is not None
        key_names = list(self.layout.key_names)
        if self.assigner is not None:  # the bootstrap kept only this assigner's keys: no other key may come
            routes = key_routes(t.select(key_names), [f.type for f in self.layout.key_fields],
                                self.assigner.num_assigners)
            if not (routes == self.assigner.assign_id).all():
                raise DataError(f"rows of keys routed to assigners {sorted(set(routes.tolist()))} reached assigner "
                                f"{self.assigner.assign_id} of {self.assigner.num_assigners} writing cross-partition "
                                f"table {self.ctx.table_path}: route rows by the key hash (use prepare_write)")
        a = self.global_index.assign(t.select(key_names), parts.astype(np.int32))
        self.input_partitions.update(np.unique(parts).tolist())
        t = t.take(pa.array(a.take))
        if a.retract.any():
            kinds = np.where(a.retract, np.int8(3), t.column(VALUE_KIND).to_numpy().astype(np.int8))
            t = t.set_column(t.schema.get_field_index(VALUE_KIND), VALUE_KIND, pa.array(kinds, pa.int8()))
        if (a.parts != parts[a.take]).any():
            part_fields = self.layout.partition_fields
            arrow_schema = self.layout.arrow_schema
            values = pa.table({f.name: pa.array([v[i] for v in self.partitions.values],
                                                arrow_schema.field(f.name).type)
                               for i, f in enumerate(part_fields)})
            t = rewrite_partition_columns(t, [f.name for f in part_fields], values, a.parts)
        return t, a.parts, a.buckets

    def bootstrap_global_index(self) -> None:
        """``KEY_DYNAMIC``: load the key index from the table's keys (this assigner's only, if any)."""
        keys = bootstrap_keys(self.ctx, assigner=self.assigner)
        parts = self.partitions.ids(keys) if keys.num_rows else np.empty(0, np.int32)
        key_names = list(self.layout.key_names)
        key_schema = pa.schema([self.layout.arrow_schema.field(k) for k in key_names])
        merge_fn = self.ctx.merge_function
        assert merge_fn is not None
        self.global_index = GlobalIndex(key_names, key_schema, merge_fn.capabilities.moved_key,
                                        self.ctx.options.dynamic_bucket_target_row_num(), self.assigner)
        self.global_index.load(keys, parts.astype(np.int32), keys.column(BOOTSTRAP_BUCKET).to_numpy().astype(np.int32))
