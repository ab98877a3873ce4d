"""Property test: random sequences of writes, compactions, partition drops, expiry, tags, consumers and rollbacks.

After every step:

* every retained snapshot and every tag reads exactly what it read when it was created;
* the files on disk are exactly the files retained snapshots and tags reference (nothing missing, nothing left);
* the set of snapshots an expiry keeps is the one a simple model of Paimon's retention rules predicts.

``LIFECYCLE_EXAMPLES`` (environment) scales the number of random sequences.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from table_engine import Catalog
from table_engine.errors import PartitionSpecError
from tests.budget import examples
from tests.table_engine.store.lifecycle.lifecycle_support import assert_exact_files, assert_nothing_missing, rows

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
FUTURE = 2**62
Row = tuple[object, ...]


def expected_retained(ids: list[int], retain_min: int, retain_max: int, max_deletes: int,
                      consumer: int | None, all_old: bool) -> list[int]:
    """Model of the retention rules (all snapshots older than the cut-off, or none of them)."""
    if not ids:
        return []
    earliest, latest = ids[0], ids[-1]
    low = max(latest - retain_max + 1, earliest)
    high = latest - retain_min + 1  # exclusive upper bound of what may expire
    if consumer is not None:
        high = min(high, consumer)
    high = min(high, earliest + max_deletes)
    # time rule: snapshot s may expire only if s + 1 is older than the cut-off
    end = high if (all_old or low >= high) else low
    return [i for i in ids if i >= end] if end > earliest else ids


class LifecycleMachine(RuleBasedStateMachine):
    OPTIONS: dict[str, str] = {}

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="lifecycle-")
        self.table = Catalog(self.dir).create_table(
            "db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
            options={"bucket": "2", "manifest.merge-min-count": "3", "num-sorted-run.compaction-trigger": "3",
                     **self.OPTIONS})
        self.contents: dict[int, list[Row]] = {}
        self.model: dict[tuple[object, object], object] = {}
        self.tag_counter = 0
        self.consumer: int | None = None

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- helpers -----------------------------------------------------------------------------------------------
    def snapshot_ids(self) -> list[int]:
        return [s.id for s in self.table.snapshots()]

    def record_new_snapshots(self) -> None:
        for sid in self.snapshot_ids():
            if sid not in self.contents:
                self.contents[sid] = rows(self.table.read(snapshot_id=sid))
        expected = sorted((k[0], k[1], v) for k, v in self.model.items())
        assert rows(self.table.read()) == expected

    def versions(self) -> list[int]:
        return sorted(set(self.snapshot_ids()) | {t.snapshot_id for t in self.table.tags()})

    # ---- rules -------------------------------------------------------------------------------------------------
    @rule(batch=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 6), st.integers(0, 99)),
                         min_size=1, max_size=6),
          overwrite=st.booleans())
    def write(self, batch: list[tuple[str, int, int]], overwrite: bool) -> None:
        if overwrite:
            for dt in {r[0] for r in batch}:
                self.model = {k: v for k, v in self.model.items() if k[0] != dt}
        for dt, i, v in batch:
            self.model[(dt, i)] = v
        self.table.write(pa.table({"dt": [r[0] for r in batch], "id": [r[1] for r in batch],
                                   "v": [r[2] for r in batch]}, schema=SCHEMA), overwrite=overwrite)
        self.record_new_snapshots()

    @rule(full=st.booleans())
    def compact(self, full: bool) -> None:
        self.table.maintenance.compact(full=full)
        self.record_new_snapshots()

    @rule(dt=st.sampled_from(["a", "b", "c"]))
    def drop_partition(self, dt: str) -> None:
        if not any(k[0] == dt for k in self.model):  # no live partition dt (rows are never deleted here)
            latest = self.table.latest_snapshot_id()
            with pytest.raises(PartitionSpecError, match=f"'dt={dt}' matches no partition"):
                self.table.maintenance.drop_partitions([{"dt": dt}])
            assert self.table.latest_snapshot_id() == latest
            return
        self.table.maintenance.drop_partitions([{"dt": dt}])
        self.model = {k: v for k, v in self.model.items() if k[0] != dt}
        self.record_new_snapshots()

    @precondition(lambda self: self.table.latest_snapshot_id() is not None)
    @rule(retain_min=st.integers(1, 4), extra=st.integers(0, 4), max_deletes=st.integers(1, 8),
          all_old=st.booleans())
    def expire(self, retain_min: int, extra: int, max_deletes: int, all_old: bool) -> None:
        before = self.snapshot_ids()
        self.table.expire_snapshots(retain_min=retain_min, retain_max=retain_min + extra, max_deletes=max_deletes,
                                    older_than_millis=FUTURE if all_old else 0)
        assert self.snapshot_ids() == expected_retained(before, retain_min, retain_min + extra, max_deletes,
                                                        self.consumer, all_old)

    @precondition(lambda self: self.table.latest_snapshot_id() is not None)
    @rule(data=st.data())
    def create_tag(self, data: st.DataObject) -> None:
        sid = data.draw(st.sampled_from(self.versions()))
        self.tag_counter += 1
        self.table.create_tag(f"tag{self.tag_counter}", sid)

    @precondition(lambda self: bool(self.table.list_tags()))
    @rule(data=st.data())
    def delete_tag(self, data: st.DataObject) -> None:
        self.table.delete_tag(data.draw(st.sampled_from(self.table.list_tags())))

    @precondition(lambda self: self.table.latest_snapshot_id() is not None)
    @rule(data=st.data(), clear=st.booleans())
    def set_consumer(self, data: st.DataObject, clear: bool) -> None:
        if clear:
            self.table.maintenance.reset_consumer("reader")
            self.consumer = None
        else:
            self.consumer = data.draw(st.sampled_from(self.snapshot_ids()))
            self.table.maintenance.reset_consumer("reader", self.consumer)

    @precondition(lambda self: self.table.latest_snapshot_id() is not None)
    @rule(data=st.data(), by_tag=st.booleans())
    def rollback(self, data: st.DataObject, by_tag: bool) -> None:
        tags = self.table.tags()
        if by_tag and tags:
            tag = data.draw(st.sampled_from(tags))
            target = tag.snapshot_id
            self.table.rollback_to(tag.name)
        else:
            target = data.draw(st.sampled_from(self.snapshot_ids()))
            self.table.rollback_to(target)
        assert self.table.latest_snapshot_id() == target
        for sid in [s for s in self.contents if s > target]:
            del self.contents[sid]
        self.model = {(r[0], r[1]): r[2] for r in self.contents[target]}
        if self.consumer is not None and self.consumer > target:
            self.table.maintenance.reset_consumer("reader")
            self.consumer = None

    # ---- invariants --------------------------------------------------------------------------------------------
    @invariant()
    def reads_are_stable(self) -> None:
        for sid in self.snapshot_ids():
            assert rows(self.table.read(snapshot_id=sid)) == self.contents[sid], f"snapshot {sid}"
        for tag in self.table.tags():
            assert rows(self.table.read(tag=tag.name)) == self.contents[tag.snapshot_id], f"tag {tag.name}"

    @invariant()
    def files_are_exactly_the_referenced_ones(self) -> None:
        assert_exact_files(self.table)


class DecoupledChangelogMachine(LifecycleMachine):
    """The same with changelogs outliving snapshots (``changelog.num-retained.*`` above the snapshot settings).

    Files of APPEND commits stay while their changelog does, so between steps only "nothing referenced is
    missing" holds (the oracle counts what retained changelogs use); once the lifecycle is no longer decoupled,
    the remaining changelogs go and the files are exact again.
    """

    OPTIONS = {"changelog.num-retained.min": "6", "changelog.num-retained.max": "8"}

    @precondition(lambda self: self.table.latest_snapshot_id() is not None)
    @rule(retain_min=st.integers(1, 4), max_deletes=st.integers(1, 8))
    def expire(self, retain_min: int, max_deletes: int) -> None:
        before = self.snapshot_ids()
        result = self.table.expire_snapshots(retain_min=retain_min, max_deletes=max_deletes,
                                             older_than_millis=FUTURE)
        assert result.changelogs_kept == result.expired_snapshot_ids
        assert self.snapshot_ids() == expected_retained(before, retain_min, 2**31 - 1, max_deletes, self.consumer,
                                                        True)

    @invariant()
    def files_are_exactly_the_referenced_ones(self) -> None:
        assert_nothing_missing(self.table)

    def teardown(self) -> None:
        try:
            if self.table.latest_snapshot_id() is not None:
                self.table.maintenance.reset_consumer("reader")
                self.table.expire_snapshots(retain_min=1, changelog_retain_min=1, changelog_retain_max=1,
                                            changelog_time_retained=0, older_than_millis=FUTURE,
                                            max_deletes=10_000)
                assert_exact_files(self.table)
                self.reads_are_stable()
        finally:
            super().teardown()


_SETTINGS = settings(max_examples=int(os.environ.get("LIFECYCLE_EXAMPLES", examples(25))), stateful_step_count=25,
                     deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestLifecycle = LifecycleMachine.TestCase
TestLifecycle.settings = _SETTINGS
TestDecoupledChangelog = DecoupledChangelogMachine.TestCase
TestDecoupledChangelog.settings = _SETTINGS


def test_model_of_retention() -> None:
    ids = list(range(3, 13))
    assert expected_retained(ids, 1, 100, 100, None, True) == [12]
    assert expected_retained(ids, 1, 100, 100, None, False) == ids  # nothing is old
    assert expected_retained(ids, 1, 4, 100, None, False) == [9, 10, 11, 12]  # max applies regardless of time
    assert expected_retained(ids, 1, 100, 3, None, True) == list(range(6, 13))  # limit
    assert expected_retained(ids, 1, 100, 100, 7, True) == list(range(7, 13))  # consumer
    assert expected_retained(ids, 3, 100, 100, None, True) == [10, 11, 12]  # min
