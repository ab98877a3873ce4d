"""Bucket assignment: fixed buckets by hash, dynamic buckets through the per-partition HASH index.

Dynamic bucket mode (``bucket`` = -1 on a primary-key table) keeps, per partition, which key hash lives in
which bucket (persisted as HASH index files, one per bucket). Known keys go to their bucket; new keys fill the
existing buckets up to ``dynamic-bucket.target-row-num`` and then open new buckets. All of it is vectorized with
numpy; only the loop over buckets is Python.

Several writers of one commit (e.g. Spark tasks) share a partition safely when each owns a slice of the key hashes
(rows are routed by key) and an :class:`Assigner` slice of the buckets, Paimon's ``isMyBucket`` rule
``bucket % num_assigners == assign_id``: new keys then only fill the writer's own buckets, so no two writers change
the HASH index of the same bucket, and a key, known or new, is only ever seen by one writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from table_engine.errors import TableEngineError

I32 = npt.NDArray[np.int32]


@dataclass(frozen=True)
class Assigner:
    """Writer ``assign_id`` of ``num_assigners``: it opens and fills only buckets ``b % num_assigners == assign_id``."""

    assign_id: int
    num_assigners: int

    def __post_init__(self) -> None:
        if self.num_assigners < 1 or not 0 <= self.assign_id < self.num_assigners:
            raise TableEngineError(f"assigner {self.assign_id} of {self.num_assigners} is invalid")

    def owns(self, bucket: int) -> bool:
        return bucket % self.num_assigners == self.assign_id


@dataclass
class PartitionBucketIndex:
    """Key hash -> bucket of one partition (sorted hashes with their buckets)."""

    hashes: I32 = field(default_factory=lambda: np.empty(0, np.int32))
    buckets: I32 = field(default_factory=lambda: np.empty(0, np.int32))
    changed: set[int] = field(default_factory=set)

    @staticmethod
    def from_buckets(per_bucket: dict[int, I32]) -> PartitionBucketIndex:
        if not per_bucket:
            return PartitionBucketIndex()
        hs = np.concatenate([np.asarray(h, np.int32) for h in per_bucket.values()])
        bs = np.concatenate([np.full(len(h), b, np.int32) for b, h in per_bucket.items()])
        order = np.argsort(hs, kind="stable")
        return PartitionBucketIndex(hs[order], bs[order])

    def bucket_counts(self) -> dict[int, int]:
        counts = np.bincount(self.buckets) if len(self.buckets) else np.empty(0, np.int64)
        return {int(b): int(counts[b]) for b in np.flatnonzero(counts)}

    def assign(self, hashes: I32, target_rows: int, max_buckets: int = -1, assigner: Assigner | None = None) -> I32:
        """Buckets for ``hashes`` (one per row); new hashes are added to the index (into ``assigner``'s buckets)."""
        hashes = np.asarray(hashes, np.int32)
        out = np.empty(len(hashes), np.int32)
        # looked up in hash order: a binary search of sorted needles walks the index once (about 10x faster than
        # needles in arrival order on an index of millions)
        order = np.argsort(hashes)
        needles = hashes[order]
        if len(self.hashes):
            pos = np.minimum(np.searchsorted(self.hashes, needles), len(self.hashes) - 1)
            found = self.hashes[pos] == needles
            out[order[found]] = self.buckets[pos[found]]
        else:
            found = np.zeros(len(hashes), bool)
        if found.all():
            return out
        missing, at_rows = needles[~found], order[~found]  # sorted new hashes, and the rows they are on
        starts = np.flatnonzero(np.r_[True, missing[1:] != missing[:-1]])
        new_unique = missing[starts]
        first_pos = np.minimum.reduceat(at_rows, starts)  # each new hash's first row
        inverse = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(missing)]))
        # keep arrival order of new keys (Paimon assigns in arrival order)
        arrival = np.argsort(first_pos)  # first rows are distinct
        new_hashes = new_unique[arrival]
        new_buckets = np.empty(len(new_hashes), np.int32)
        counts = self.bucket_counts()
        total = len(counts)
        if assigner is not None:
            counts = {b: c for b, c in counts.items() if assigner.owns(b)}
        cursor = 0
        candidate = 0 if assigner is None else assigner.assign_id
        step = 1 if assigner is None else assigner.num_assigners
        while cursor < len(new_hashes):
            used = counts.get(candidate, 0)
            room = target_rows - used
            if candidate not in counts and 0 <= max_buckets <= total:
                # bucket limit reached: spread the rest over existing buckets (Paimon's max-buckets behaviour)
                existing = sorted(counts)
                if not existing:
                    raise TableEngineError("dynamic-bucket.max-buckets leaves no bucket to write to"
                                           + (f" for assigner {assigner.assign_id} of {assigner.num_assigners}"
                                              if assigner is not None else ""))
                rest = len(new_hashes) - cursor
                new_buckets[cursor:] = np.asarray(existing, np.int32)[np.arange(rest) % len(existing)]
                for b in existing:
                    self.changed.add(b)
                cursor = len(new_hashes)
                break
            if room > 0:
                take = min(room, len(new_hashes) - cursor)
                new_buckets[cursor:cursor + take] = candidate
                if candidate not in counts:
                    total += 1
                counts[candidate] = used + take
                self.changed.add(candidate)
                cursor += take
            candidate += step
        by_hash = np.empty(len(new_unique), np.int32)  # the new buckets in the order of new_unique (sorted)
        by_hash[arrival] = new_buckets
        out[at_rows] = by_hash[inverse]
        # merge the new hashes (none of them in the index) into the sorted index: O(index) per call, no re-sort
        at = np.searchsorted(self.hashes, new_unique)
        self.hashes = np.insert(self.hashes, at, new_unique)
        self.buckets = np.insert(self.buckets, at, by_hash)
        return out

    def hashes_of(self, bucket: int) -> I32:
        out: I32 = self.hashes[self.buckets == bucket]
        return out
