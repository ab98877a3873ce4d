"""Tables written by pypaimon 2.1.0 are read by our engine exactly as pypaimon reads them.

For every case of ``CASES`` pypaimon creates the table and writes four commits (inserts; upserts of half existing,
half new keys; deletes/updates; re-inserts, ``-U`` retractions and keys repeated inside one batch). pypaimon has no
row-kind argument, so deletes go through ``rowkind.field`` on the cases that declare it; the other cases get
upserts only. A tag ``t1`` is created after commit 2.

``test_pypaimon_round_trip_matches_model`` needs no engine: it checks pypaimon against the dict model, i.e. it
validates the fixtures and the model themselves.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.interop.conftest import (
    CASE_IDS,
    CASES,
    PK_CASES,
    Batch,
    Case,
    Model,
    PypaimonClient,
    assert_same_rows,
    assert_same_types,
    make_batches,
)

pytestmark = pytest.mark.interop

TAG = "t1"
TAG_AFTER_COMMIT = 2


@dataclass
class PypaimonTable:
    case: Case
    warehouse: Path
    batches: list[Batch]
    snapshot_ids: list[int]
    expected: dict[int, pa.Table]  # snapshot id -> model contents after that commit
    pp_latest: pa.Table  # pypaimon's own reads
    pp_snapshots: dict[int, pa.Table]
    pp_tag: pa.Table

    @property
    def read_schema(self) -> pa.Schema:
        return self.pp_latest.schema


@pytest.fixture(scope="session")
def pypaimon_tables(
    pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[Case], PypaimonTable]:
    """Lazily writes (once per session) each case with pypaimon and reads every version back with pypaimon."""
    cache: dict[str, PypaimonTable] = {}

    def get(case: Case) -> PypaimonTable:
        if case.name in cache:
            return cache[case.name]
        warehouse = tmp_path_factory.mktemp(f"pypaimon-{case.name}")
        batches = make_batches(case, deletes=case.rowkind_field, seed_tag="pypaimon")
        snapshot_ids = pypaimon.write(
            warehouse,
            case.identifier,
            case.schema,
            case.primary_keys,
            case.partition_keys,
            case.table_options,
            [b.data for b in batches],
            tags={TAG: TAG_AFTER_COMMIT},
        )
        assert len(snapshot_ids) == len(batches)
        model = Model(case)
        expected = {}
        for snapshot_id, batch in zip(snapshot_ids, batches):
            model.apply(batch, honour_kinds=case.rowkind_field)
            expected[snapshot_id] = model.expected()
        versions: list[dict[str, Any]] = [{}] + [{"snapshot": s} for s in snapshot_ids] + [{"tag": TAG}]
        reads = pypaimon.read_many(warehouse, case.identifier, versions)
        cache[case.name] = PypaimonTable(
            case,
            warehouse,
            batches,
            snapshot_ids,
            expected,
            reads[0],
            dict(zip(snapshot_ids, reads[1:-1])),
            reads[-1],
        )
        return cache[case.name]

    return get


def _engine_table(warehouse: Path | str, identifier: str) -> Any:
    from table_engine import Catalog

    return Catalog(str(warehouse)).get_table(identifier)


# ------------------------------------------------------------------------------------- pypaimon only (self-check)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_pypaimon_round_trip_matches_model(case: Case, pypaimon_tables: Callable[[Case], PypaimonTable]) -> None:
    """pypaimon writes, pypaimon reads: equals the dict model at every snapshot and at the tag."""
    t = pypaimon_tables(case)
    assert t.snapshot_ids == list(range(1, len(t.batches) + 1))
    assert t.pp_latest.num_rows == t.expected[t.snapshot_ids[-1]].num_rows > 1000
    assert_same_rows(t.pp_latest, t.expected[t.snapshot_ids[-1]], case.sort_keys, t.read_schema)
    for snapshot_id in t.snapshot_ids:
        assert_same_rows(t.pp_snapshots[snapshot_id], t.expected[snapshot_id], case.sort_keys, t.read_schema)
    assert_same_rows(t.pp_tag, t.expected[t.snapshot_ids[TAG_AFTER_COMMIT - 1]], case.sort_keys, t.read_schema)


# ------------------------------------------------------------------------------------------ engine reads pypaimon


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_engine_reads_pypaimon_table(case: Case, pypaimon_tables: Callable[[Case], PypaimonTable]) -> None:
    t = pypaimon_tables(case)
    result = _engine_table(t.warehouse, case.identifier).read()
    assert_same_rows(result, t.pp_latest, case.sort_keys, t.read_schema)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_engine_read_schema_matches_pypaimon(case: Case, pypaimon_tables: Callable[[Case], PypaimonTable]) -> None:
    """Strict Arrow types: our read of a pypaimon table has pypaimon's read types."""
    t = pypaimon_tables(case)
    result = _engine_table(t.warehouse, case.identifier).read()
    assert_same_types(result.schema, t.read_schema)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_engine_time_travel_on_pypaimon_table(case: Case, pypaimon_tables: Callable[[Case], PypaimonTable]) -> None:
    t = pypaimon_tables(case)
    table = _engine_table(t.warehouse, case.identifier)
    for snapshot_id in t.snapshot_ids:
        result = table.read(snapshot_id=snapshot_id)
        assert_same_rows(result, t.pp_snapshots[snapshot_id], case.sort_keys, t.read_schema)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_engine_reads_pypaimon_tag(case: Case, pypaimon_tables: Callable[[Case], PypaimonTable]) -> None:
    t = pypaimon_tables(case)
    result = _engine_table(t.warehouse, case.identifier).read(tag=TAG)
    assert_same_rows(result, t.pp_tag, case.sort_keys, t.read_schema)


@pytest.mark.parametrize("case", PK_CASES, ids=[c.name for c in PK_CASES])
def test_engine_commits_on_top_of_pypaimon_table(
    case: Case,
    pypaimon: PypaimonClient,
    pypaimon_tables: Callable[[Case], PypaimonTable],
    tmp_path: Path,
) -> None:
    """Mixed history: our engine adds a commit (with deletes) to a pypaimon table; both readers agree."""
    t = pypaimon_tables(case)
    warehouse = tmp_path / "wh"
    shutil.copytree(t.warehouse, warehouse)
    model = Model(case)
    for batch in t.batches:
        model.apply(batch, honour_kinds=case.rowkind_field)
    extra = make_batches(case, deletes=True, seed_tag="engine-on-top")[2]  # deletes, updates and new keys
    table = _engine_table(warehouse, case.identifier)
    if case.rowkind_field:
        snapshot_id = table.write(extra.data)
    else:
        snapshot_id = table.write(extra.data, row_kinds=extra.kinds)
    # with enough sorted runs in a bucket our writer also compacts it: an APPEND snapshot, then a COMPACT one
    kinds = [s.commit_kind for s in table.snapshots()[len(t.snapshot_ids):]]
    assert kinds in (["APPEND"], ["APPEND", "COMPACT"]) and snapshot_id == t.snapshot_ids[-1] + len(kinds)
    model.apply(extra)
    expected = model.expected()
    assert_same_rows(pypaimon.read(warehouse, case.identifier), expected, case.sort_keys, t.read_schema)
    assert_same_rows(_engine_table(warehouse, case.identifier).read(), expected, case.sort_keys, t.read_schema)
