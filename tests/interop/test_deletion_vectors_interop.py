"""Merge-on-write tables (``deletion-vectors.enabled``) between our engine and pypaimon 2.1.0.

* Tables our engine writes and compacts with deletion vectors read identically in pypaimon (which, like Java, skips
  level 0 and applies the vectors without merging): after every writer-compacted commit, after a minor compaction
  that leaves vectors on higher-level files, and after a full compaction.
* A DV table pypaimon writes (all level 0, so invisible to both readers) becomes visible to both once our engine
  compacts it, and stays right when pypaimon writes more level-0 files over our levels and vectors.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.table import Table
from tests.interop.conftest import (
    PK_CASES,
    Batch,
    Case,
    Model,
    PypaimonClient,
    assert_same_rows,
    assert_snapshots_read_as_expected,
    make_batches,
)

pytestmark = pytest.mark.interop

DV_OPTIONS = {"deletion-vectors.enabled": "true"}
CASES = [dataclasses.replace(c, options={**c.options, **DV_OPTIONS}) for c in PK_CASES
         if c.name in ("pk_bucket4", "pk_bucket4_part_rowkind", "pk_dynamic_part_rowkind")]


def _write(table: Table, case: Case, batch: Batch) -> int:
    if case.rowkind_field:
        return int(table.write(batch.data))  # type: ignore[arg-type]
    return int(table.write(batch.data, row_kinds=batch.kinds))  # type: ignore[arg-type]


def _vectors(table: Table, snapshot_id: int) -> int:
    entries = table.store.index_entries(table.snapshot(snapshot_id))
    return sum(r.cardinality or 0 for e in entries if e.index_file.index_type == DELETION_VECTORS_INDEX
               for r in e.index_file.dv_ranges or ())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pypaimon_reads_engine_deletion_vectors(case: Case, pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    options = {**case.table_options, "write-buffer-size": "64 kb"}
    table = Catalog(str(warehouse)).create_table(case.identifier, schema=case.schema,
                                                 primary_keys=case.primary_keys,
                                                 partition_keys=case.partition_keys, options=options)
    model = Model(case)
    expected: dict[int, pa.Table] = {}
    for batch in make_batches(case, deletes=True, seed_tag="dv"):
        sid = _write(table, case, batch)  # writer compaction: the returned snapshot is the COMPACT one
        model.apply(batch)
        expected[sid] = model.expected()
    # a full compaction, a few write-only level-0 rows, a minor compaction (vectors on the max level), a full one
    before_minor = table.maintenance.compact(full=True)
    assert before_minor is not None
    expected[before_minor] = model.expected()
    write_only = table.copy({"write-only": "true"})
    extra = make_batches(case, deletes=True, seed_tag="dv-more")[1]
    extra = Batch(extra.data.slice(0, 40), extra.kinds[:40])
    _write(write_only, case, extra)
    model.apply(extra)
    minor = table.maintenance.compact()
    assert minor is not None
    expected[minor] = model.expected()
    assert _vectors(table, minor) > 0, "the minor compaction should leave deletion vectors on higher levels"
    full = table.maintenance.compact(full=True)
    assert full is not None
    expected[full] = model.expected()
    assert _vectors(table, full) == 0
    assert any(_vectors(table, s) for s in expected), "no compared snapshot has deletion vectors"

    assert_snapshots_read_as_expected(pypaimon, warehouse, case, table, expected)


@pytest.mark.parametrize("case", CASES[:2], ids=[c.name for c in CASES[:2]])
def test_engine_compacts_pypaimon_deletion_vector_tables(case: Case, pypaimon: PypaimonClient,
                                                         tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    batches = make_batches(case, deletes=case.rowkind_field, seed_tag="pp-dv")
    first, second = batches[:2], batches[2:]
    model = Model(case)
    pypaimon.write(warehouse, case.identifier, case.schema, case.primary_keys, case.partition_keys,
                   case.table_options, [b.data for b in first])
    for b in first:
        model.apply(b, honour_kinds=case.rowkind_field)
    table = Catalog(str(warehouse)).get_table(case.identifier)
    _, read_schema = pypaimon.schema(warehouse, case.identifier)
    assert table.read().num_rows == 0 == pypaimon.read(warehouse, case.identifier).num_rows  # all level 0
    mor = table.copy({"deletion-vectors.merge-on-read": "true"})
    assert_same_rows(mor.read(), model.expected(), case.sort_keys, read_schema)

    compacted = table.maintenance.compact()
    assert compacted is not None
    assert_same_rows(table.read(), model.expected(), case.sort_keys, read_schema)
    assert_same_rows(pypaimon.read(warehouse, case.identifier), model.expected(), case.sort_keys, read_schema)

    # pypaimon writes level-0 files over our levels; our minor compaction pushes them up with vectors
    pypaimon.write(warehouse, case.identifier, case.schema, case.primary_keys, case.partition_keys,
                   case.table_options, [b.data for b in second], create=False)
    for b in second:
        model.apply(b, honour_kinds=case.rowkind_field)
    minor = table.maintenance.compact()
    assert minor is not None and _vectors(table, minor) > 0
    assert_same_rows(table.read(), model.expected(), case.sort_keys, read_schema)
    assert_same_rows(pypaimon.read(warehouse, case.identifier), model.expected(), case.sort_keys, read_schema)
    table.maintenance.compact(full=True)
    assert_same_rows(table.read(), model.expected(), case.sort_keys, read_schema)
    assert_same_rows(pypaimon.read(warehouse, case.identifier), model.expected(), case.sort_keys, read_schema)


def test_pypaimon_applies_engine_vectors_of_append_tables(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    from tests.table_engine.store.indexes.test_deletion_vectors import append_table_with_vector

    warehouse = tmp_path / "wh"
    t = append_table_with_vector(Catalog(str(warehouse)), [0, 3, 5, 9])
    ours = sorted(t.read().column("id").to_pylist())
    theirs = sorted(pypaimon.read(warehouse, "db.app").column("id").to_pylist())
    assert ours == theirs == [1, 2, 4, 6, 7, 8]
