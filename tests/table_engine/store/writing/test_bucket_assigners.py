"""Dynamic-bucket assignment shared by several writers of one commit (``Assigner``: Paimon's isMyBucket rule)."""

from __future__ import annotations

import numpy as np
import pytest

from table_engine.errors import TableEngineError
from table_engine.store.writing.bucket_assign import Assigner, PartitionBucketIndex


def test_each_assigner_opens_and_fills_only_its_own_buckets():
    known = PartitionBucketIndex.from_buckets({0: np.arange(0, 5, dtype=np.int32), 1: np.arange(5, 8, dtype=np.int32),
                                               2: np.arange(8, 10, dtype=np.int32)})
    views = [PartitionBucketIndex(known.hashes.copy(), known.buckets.copy()) for _ in range(2)]
    new_keys = [np.arange(100, 120, dtype=np.int32), np.arange(200, 220, dtype=np.int32)]
    for i, (view, keys) in enumerate(zip(views, new_keys)):
        assigner = Assigner(i, 2)
        out = view.assign(np.concatenate([keys, np.array([6], np.int32)]), target_rows=6, assigner=assigner)
        assert out[-1] == 1                                               # a known key stays in its bucket
        assert all(assigner.owns(int(b)) for b in out[:-1])
        assert view.changed and all(assigner.owns(b) for b in view.changed)
    a0, a1 = (set(v.changed) for v in views)
    assert not a0 & a1                                                    # no bucket's index changed twice
    counts0 = views[0].bucket_counts()
    assert counts0[0] == 6 and counts0[2] == 6                            # own buckets filled to the target first


def test_without_an_assigner_new_keys_fill_buckets_in_order():
    index = PartitionBucketIndex()
    out = index.assign(np.arange(10, dtype=np.int32), target_rows=4)
    assert out.tolist() == [0] * 4 + [1] * 4 + [2] * 2


def test_max_buckets_counts_every_bucket_and_an_assigner_without_one_fails():
    index = PartitionBucketIndex.from_buckets({1: np.arange(3, dtype=np.int32)})
    out = index.assign(np.arange(10, 14, dtype=np.int32), target_rows=3, max_buckets=1, assigner=Assigner(1, 2))
    assert set(out.tolist()) == {1}                                       # limit reached: spread over own buckets
    with pytest.raises(TableEngineError, match="assigner 0 of 2"):
        index.assign(np.arange(20, 24, dtype=np.int32), target_rows=3, max_buckets=1, assigner=Assigner(0, 2))
    with pytest.raises(TableEngineError):
        Assigner(2, 2)
