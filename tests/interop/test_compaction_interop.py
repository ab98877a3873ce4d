"""Compacted tables stay readable by pypaimon 2.1.0: after writer-side compaction (files spread over several levels,
overlapping sequence ranges merged across levels), a dedicated minor compaction and a full compaction, pypaimon
reads every snapshot exactly as the dict model expects."""

from __future__ import annotations

from pathlib import Path

import pytest

from table_engine import Catalog
from tests.interop.conftest import (
    PK_CASES,
    Batch,
    Case,
    Model,
    PypaimonClient,
    assert_snapshots_read_as_expected,
    make_batches,
)

pytestmark = pytest.mark.interop

COMPACTION_CASES = [c for c in PK_CASES if c.name in (
    "pk_bucket4", "pk_bucket4_part_rowkind", "pk_bucket4_string_key", "pk_dynamic_part_rowkind")]


def _write(table: object, case: Case, batch: Batch) -> int:
    if case.rowkind_field:
        return int(table.write(batch.data))  # type: ignore[attr-defined]
    return int(table.write(batch.data, row_kinds=batch.kinds))  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", COMPACTION_CASES, ids=[c.name for c in COMPACTION_CASES])
def test_pypaimon_reads_compacted_tables(case: Case, pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    options = {**case.table_options, "num-sorted-run.compaction-trigger": "2", "write-buffer-size": "64 kb"}
    table = Catalog(str(warehouse)).create_table(case.identifier, schema=case.schema,
                                                 primary_keys=case.primary_keys,
                                                 partition_keys=case.partition_keys, options=options)
    model = Model(case)
    expected = {}
    for batch in make_batches(case, deletes=True, seed_tag="compaction"):
        sid = _write(table, case, batch)
        model.apply(batch)
        expected[sid] = model.expected()
    levels = {f.level for s in table.plan() for f in s.files}
    assert len(levels) > 1, f"writer compaction should spread files over levels, got {levels}"
    minor = table.maintenance.compact()
    if minor is not None:
        expected[minor] = model.expected()
    full = table.maintenance.compact(full=True)
    assert full is not None
    expected[full] = model.expected()
    assert {f.level for s in table.plan() for f in s.files} == {table.options.num_levels() - 1}

    assert_snapshots_read_as_expected(pypaimon, warehouse, case, table, expected)
    seen = {s["id"]: s["commitKind"] for s in pypaimon.snapshots(warehouse, case.identifier)["snapshots"]}
    assert seen == {s.id: str(s.commit_kind) for s in table.snapshots()}
    assert seen[full] == "COMPACT"
