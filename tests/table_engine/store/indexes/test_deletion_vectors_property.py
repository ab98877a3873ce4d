"""Property test of merge-on-write: the lifecycle state machine (writes, minor/full compactions, partition drops,
expiry, tags, consumers, rollbacks) on a ``deletion-vectors.enabled`` table, plus write-only writes whose level-0
files stay invisible until a compaction.

Besides the lifecycle invariants (stable reads of every snapshot and tag, exactly the referenced files on disk --
deletion-vector index files included):

* a merge-on-read view (``deletion-vectors.merge-on-read``) always equals the dict model;
* whenever no level-0 file is left (after every compaction, and after writes that the writer compacted), the plain
  batch read equals the dict model, no level-0 file exists, and the live rows of the higher-level files minus the
  rows their deletion vectors delete are exactly the model's rows.
"""

from __future__ import annotations

import pyarrow as pa
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import rows
from tests.table_engine.store.lifecycle.test_lifecycle_property import _SETTINGS, SCHEMA, LifecycleMachine


class DeletionVectorMachine(LifecycleMachine):
    OPTIONS = {"deletion-vectors.enabled": "true"}

    def merged_view(self) -> Table:
        return self.table.copy({"deletion-vectors.merge-on-read": "true"})

    def level0_files(self) -> int:
        return sum(1 for s in self.merged_view().plan() for f in s.files if f.level == 0)

    def record_new_snapshots(self) -> None:
        for sid in self.snapshot_ids():
            if sid not in self.contents:
                self.contents[sid] = rows(self.table.read(snapshot_id=sid))
        expected = sorted((k[0], k[1], v) for k, v in self.model.items())
        assert rows(self.merged_view().read()) == expected
        if self.level0_files() == 0:
            assert rows(self.table.read()) == expected

    @rule(batch=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 6), st.integers(0, 99)),
                         min_size=1, max_size=6))
    def write_only(self, batch: list[tuple[str, int, int]]) -> None:
        for dt, i, v in batch:
            self.model[(dt, i)] = v
        self.table.copy({"write-only": "true"}).write(pa.table(
            {"dt": [r[0] for r in batch], "id": [r[1] for r in batch], "v": [r[2] for r in batch]}, schema=SCHEMA))
        self.record_new_snapshots()

    @rule(full=st.booleans())
    def compact(self, full: bool) -> None:
        self.table.maintenance.compact(full=full)
        assert self.level0_files() == 0
        self.record_new_snapshots()
        assert rows(self.table.read()) == sorted((k[0], k[1], v) for k, v in self.model.items())

    @precondition(lambda self: self.table.latest_snapshot_id() is not None)
    @rule(data=st.data(), by_tag=st.booleans())
    def rollback(self, data: st.DataObject, by_tag: bool) -> None:
        LifecycleMachine.rollback(self, data, by_tag)
        # the model after a rollback: what the target snapshot holds, uncompacted level 0 included
        self.model = {(r[0], r[1]): r[2] for r in rows(self.merged_view().read())}

    @invariant()
    def vectors_delete_exactly_the_old_versions(self) -> None:
        if self.table.latest_snapshot_id() is None or self.level0_files():
            return
        snap = self.table.latest_snapshot()
        physical = sum(f.row_count for s in self.table.plan() for f in s.files)
        deleted = sum(r.cardinality or 0 for e in self.table.store.index_entries(snap)
                      if e.index_file.index_type == DELETION_VECTORS_INDEX for r in e.index_file.dv_ranges or ())
        assert physical - deleted == len(rows(self.table.read()))


TestDeletionVectors = DeletionVectorMachine.TestCase
TestDeletionVectors.settings = _SETTINGS
