"""Compacted append tables stay readable by pypaimon 2.1.0: many small write-only commits, then a dedicated minor
and a full compaction (unaware bucket, partitioned, fixed buckets with deletion vectors applied by the compaction);
pypaimon reads every snapshot exactly as the model expects and sees the same snapshot kinds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from table_engine import Catalog
from table_engine.format.data_file_meta import FileSource
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors
from table_engine.table import Table
from tests.interop.conftest import (
    CASES,
    Batch,
    Model,
    PypaimonClient,
    assert_snapshots_read_as_expected,
    make_batches,
)

pytestmark = pytest.mark.interop

_BY_NAME = {c.name: c for c in CASES}
APPEND_CASES = [
    _BY_NAME["append"],
    _BY_NAME["append_part"],
    dataclasses.replace(_BY_NAME["append"], name="append_bucket2", options={"bucket": "2", "bucket-key": "id"}),
]
SLICES = 4


def _delete_first_rows(table: Table) -> int:
    """Mark the first two rows of each bucket's oldest file deleted (a DV index file per bucket); rows deleted."""
    ctx = table.store
    messages = []
    for s in table.plan():
        f = min(s.files, key=lambda x: x.min_sequence_number)
        dvs = BucketDeletionVectors(ctx.file_io, ctx.table_path, [])
        dvs.delete(f.file_name, [0, 1])
        new, _ = dvs.flush()
        messages.append(CommitMessage(s.partition, s.bucket, s.total_buckets, new_index_files=new))
    table.commit(messages)
    return 2 * len(messages)


@pytest.mark.parametrize("case", APPEND_CASES, ids=[c.name for c in APPEND_CASES])
def test_pypaimon_reads_compacted_append_tables(case, pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    dv = case.name == "append_bucket2"
    options = {**case.table_options, "write-only": "true", "compaction.min.file-num": "3",
               **({"deletion-vectors.enabled": "true"} if dv else {})}
    table = Catalog(str(warehouse)).create_table(case.identifier, schema=case.schema,
                                                 partition_keys=case.partition_keys, options=options)
    model = Model(case)
    expected = {}
    for batch in make_batches(case, deletes=False, seed_tag="append-compaction"):
        step = -(-batch.data.num_rows // SLICES)
        for start in range(0, batch.data.num_rows, step):
            part = Batch(batch.data.slice(start, step), batch.kinds[start:start + step])
            sid = int(table.write(part.data))
            model.apply(part)
            expected[sid] = model.expected()
    files_before = sum(len(s.files) for s in table.plan())
    if dv:
        _delete_first_rows(table)
        deleted_snapshot = table.latest_snapshot_id()
        expected[deleted_snapshot] = table.read()  # our reader applies the vectors; compaction must keep exactly it
        assert expected[deleted_snapshot].num_rows < len(model)
    minor = table.maintenance.compact()
    assert minor is not None
    expected[minor] = expected[max(expected)]
    full = table.maintenance.compact(full=True)
    if full is not None:
        expected[full] = expected[minor]
    live = [f for s in table.plan() for f in s.files]
    assert len(live) < files_before
    assert any(f.file_source == int(FileSource.COMPACT) for f in live) and {f.level for f in live} == {0}
    if dv:
        entries = table.store.index_entries(table.latest_snapshot())
        assert not [e for e in entries if e.index_file.index_type == DELETION_VECTORS_INDEX]

    assert_snapshots_read_as_expected(pypaimon, warehouse, case, table, expected)
    seen = {s["id"]: s["commitKind"] for s in pypaimon.snapshots(warehouse, case.identifier)["snapshots"]}
    assert seen == {s.id: str(s.commit_kind) for s in table.snapshots()}
    assert seen[minor] == "COMPACT"
