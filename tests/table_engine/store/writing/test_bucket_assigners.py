"""Dynamic-bucket assignment shared by several writers of one commit (``Assigner``: Paimon's isMyBucket rule)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import TableEngineError
from table_engine.store.writing.bucket_assign import Assigner, PartitionBucketIndex
from tests.budget import examples


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


class _RowModel:
    """Row-by-row reference of dynamic-bucket assignment: a known hash keeps its bucket; a new one goes to the lowest
    of the assigner's buckets below the target, opening the next one when all are full; once opening one would
    pass ``max_buckets``, the call's remaining new hashes go round-robin over the assigner's existing buckets."""

    def __init__(self, known: dict[int, int]) -> None:
        self.bucket_of = dict(known)

    def assign(self, hashes: list[int], target: int, max_buckets: int, assigner: Assigner | None) -> list[int]:
        total = len(set(self.bucket_of.values()))
        own: dict[int, int] = {}
        for b in self.bucket_of.values():
            if assigner is None or assigner.owns(b):
                own[b] = own.get(b, 0) + 1
        candidate, step = (0, 1) if assigner is None else (assigner.assign_id, assigner.num_assigners)
        spread: list[int] | None = None
        k = 0
        out = []
        for h in hashes:
            if h not in self.bucket_of:
                while spread is None:
                    if candidate not in own and 0 <= max_buckets <= total:
                        spread = sorted(own)
                        if not spread:
                            raise TableEngineError("dynamic-bucket.max-buckets leaves no bucket to write to")
                    elif own.get(candidate, 0) < target:
                        break
                    else:
                        candidate += step
                if spread is not None:
                    self.bucket_of[h] = spread[k % len(spread)]
                    k += 1
                else:
                    total += candidate not in own
                    own[candidate] = own.get(candidate, 0) + 1
                    self.bucket_of[h] = candidate
            out.append(self.bucket_of[h])
        return out


@settings(max_examples=examples(200), deadline=None)
@given(known=st.dictionaries(st.integers(-50, 50), st.integers(0, 5), max_size=30),
       calls=st.lists(st.lists(st.integers(-60, 60), max_size=40), min_size=1, max_size=4),
       target=st.integers(1, 6), max_buckets=st.sampled_from([-1, -1, 2, 4, 8]),
       assigner=st.sampled_from([None, (0, 1), (0, 2), (1, 2), (2, 3)]))
def test_assign_equals_a_row_by_row_model(known, calls, target, max_buckets, assigner):
    """Calls of any size, with repeated and known hashes, give each row the bucket of the row-by-row model, and the
    index afterwards holds every hash once, sorted."""
    owner = Assigner(*assigner) if assigner else None
    per_bucket: dict[int, list[int]] = {}
    for h, b in known.items():
        per_bucket.setdefault(b, []).append(h)
    index = PartitionBucketIndex.from_buckets({b: np.array(hs, np.int32) for b, hs in per_bucket.items()})
    model = _RowModel(known)
    for hashes in calls:
        try:
            expected = model.assign(hashes, target, max_buckets, owner)
        except TableEngineError:
            with pytest.raises(TableEngineError, match="max-buckets"):
                index.assign(np.array(hashes, np.int32), target, max_buckets, owner)
            return
        assert index.assign(np.array(hashes, np.int32), target, max_buckets, owner).tolist() == expected
        assert index.hashes.tolist() == sorted(model.bucket_of)
        assert dict(zip(index.hashes.tolist(), index.buckets.tolist())) == model.bucket_of
