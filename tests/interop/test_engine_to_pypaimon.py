"""Tables written by our engine are read by pypaimon 2.1.0 as exactly the rows the dict model expects.

For every case of ``CASES`` our engine creates the table and writes four commits (inserts; upserts of half existing,
half new keys; deletes of existing and never-existing keys plus updates; re-inserts, ``-U`` retractions and keys
repeated inside one batch). Deletes go through ``row_kinds=[...]`` on cases without ``rowkind.field`` and through
the ``rk`` column on the others; the first commit always uses the default (+I) path. Append tables get three commits.

Time travel: pypaimon reading every older snapshot id equals our ``read(snapshot_id=...)`` and the model; a tag
our engine creates after commit 2 reads in pypaimon as that commit's rows.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
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

# These cases open the warehouse through a file:// URI instead of a plain path.
FILE_URI_CASES = {"pk_bucket4_part_rowkind", "append_part"}
TAG = "t1"
TAG_AFTER_COMMIT = 2  # our engine tags the snapshot of commit 2


@dataclass
class EngineTable:
    case: Case
    warehouse: Path
    batches: list[Batch]
    snapshot_ids: list[int]
    expected: dict[int, pa.Table]  # snapshot id -> model contents after that commit

    @property
    def latest(self) -> pa.Table:
        return self.expected[self.snapshot_ids[-1]]


_LTZ = re.compile(r"TIMESTAMP\((\d+)\) WITH LOCAL TIME ZONE")


def _canonical_fields(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Schema fields with the two SQL spellings of TIMESTAMP_LTZ unified (see the spelling test below)."""
    return [{**f, "type": _LTZ.sub(r"TIMESTAMP_LTZ(\1)", f["type"])} for f in fields]


def _catalog(warehouse: Path, case: Case) -> Any:
    from table_engine import Catalog

    return Catalog(warehouse.as_uri() if case.name in FILE_URI_CASES else str(warehouse))


def _engine_write(table: Any, case: Case, batch: Batch, first: bool) -> int:
    if case.rowkind_field or not case.is_pk or (first and not batch.has_retractions and set(batch.kinds) == {"+I"}):
        return int(table.write(batch.data))  # row kinds from rowkind.field, else all +I
    return int(table.write(batch.data, row_kinds=batch.kinds))


@pytest.fixture(scope="session")
def engine_tables(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Case], EngineTable]:
    """Lazily writes (once per session) each case with our engine."""
    cache: dict[str, EngineTable] = {}

    def get(case: Case) -> EngineTable:
        if case.name in cache:
            return cache[case.name]
        warehouse = tmp_path_factory.mktemp(f"engine-{case.name}")
        batches = make_batches(case, deletes=True, seed_tag="engine")
        table = _catalog(warehouse, case).create_table(
            case.identifier,
            schema=case.schema,
            primary_keys=case.primary_keys,
            partition_keys=case.partition_keys,
            options=case.table_options,
        )
        model = Model(case)
        snapshot_ids = []
        expected = {}
        for number, batch in enumerate(batches):
            snapshot_id = _engine_write(table, case, batch, first=number == 0)
            model.apply(batch)
            snapshot_ids.append(snapshot_id)
            expected[snapshot_id] = model.expected()
        table.create_tag(TAG, snapshot_id=snapshot_ids[TAG_AFTER_COMMIT - 1])
        cache[case.name] = EngineTable(case, warehouse, batches, snapshot_ids, expected)
        return cache[case.name]

    return get


@pytest.fixture(scope="session")
def pypaimon_reference(
    pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[Case], tuple[dict[str, Any], pa.Schema]]:
    """pypaimon's schema JSON and Arrow read schema of each case, from an empty table pypaimon created itself."""
    cache: dict[str, tuple[dict[str, Any], pa.Schema]] = {}

    def get(case: Case) -> tuple[dict[str, Any], pa.Schema]:
        if case.name not in cache:
            warehouse = tmp_path_factory.mktemp(f"pypaimon-reference-{case.name}")
            pypaimon.write(
                warehouse, case.identifier, case.schema, case.primary_keys, case.partition_keys, case.table_options, []
            )
            cache[case.name] = pypaimon.schema(warehouse, case.identifier)
        return cache[case.name]

    return get


@pytest.fixture(scope="session")
def pypaimon_read_schema(
    pypaimon_reference: Callable[[Case], tuple[dict[str, Any], pa.Schema]],
) -> Callable[[Case], pa.Schema]:
    """pypaimon's Arrow read schema of each case (the schema results are cast to before comparing)."""
    return lambda case: pypaimon_reference(case)[1]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_pypaimon_reads_engine_table(
    case: Case,
    pypaimon: PypaimonClient,
    engine_tables: Callable[[Case], EngineTable],
    pypaimon_read_schema: Callable[[Case], pa.Schema],
) -> None:
    t = engine_tables(case)
    result = pypaimon.read(t.warehouse, case.identifier)
    assert result.num_rows > 1000
    assert_same_rows(result, t.latest, case.sort_keys, pypaimon_read_schema(case))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_engine_reads_own_table(
    case: Case, engine_tables: Callable[[Case], EngineTable], pypaimon_read_schema: Callable[[Case], pa.Schema]
) -> None:
    """Sanity check next to the interop one: our own read of the same table equals the model."""
    t = engine_tables(case)
    result = _catalog(t.warehouse, case).get_table(case.identifier).read()
    assert_same_rows(result, t.latest, case.sort_keys, pypaimon_read_schema(case))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_pypaimon_sees_engine_schema(
    case: Case,
    pypaimon: PypaimonClient,
    engine_tables: Callable[[Case], EngineTable],
    pypaimon_reference: Callable[[Case], tuple[dict[str, Any], pa.Schema]],
) -> None:
    """pypaimon parses our schema file into the fields, keys and options (no defaults materialised) and the Arrow
    read types it gives a table it created itself from the same arguments."""
    t = engine_tables(case)
    info, arrow_schema = pypaimon.schema(t.warehouse, case.identifier)
    reference, reference_arrow = pypaimon_reference(case)
    assert _canonical_fields(info["fields"]) == _canonical_fields(reference["fields"])
    assert info["primary_keys"] == reference["primary_keys"] == case.primary_keys
    assert info["partition_keys"] == reference["partition_keys"] == case.partition_keys
    assert info["options"] == reference["options"] == case.table_options
    assert_same_types(arrow_schema, reference_arrow)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_schema_type_spelling_matches_pypaimon(
    case: Case,
    pypaimon: PypaimonClient,
    engine_tables: Callable[[Case], EngineTable],
    pypaimon_reference: Callable[[Case], tuple[dict[str, Any], pa.Schema]],
) -> None:
    """The schema file's type strings equal pypaimon's, except that we write Java Paimon's canonical
    ``TIMESTAMP(p) WITH LOCAL TIME ZONE`` where pypaimon writes its alias ``TIMESTAMP_LTZ(p)`` (Java and pypaimon
    parse both; the test above checks pypaimon reads ours as the same type)."""
    t = engine_tables(case)
    info, _ = pypaimon.schema(t.warehouse, case.identifier)
    reference, _ = pypaimon_reference(case)
    ours = {f["name"]: f["type"] for f in info["fields"]}
    theirs = {f["name"]: f["type"] for f in reference["fields"]}

    def java_spelling(type_json: Any) -> Any:
        if isinstance(type_json, str):
            return re.sub(r"^TIMESTAMP_LTZ\((\d+)\)", r"TIMESTAMP(\1) WITH LOCAL TIME ZONE", type_json)
        return type_json

    assert not any(isinstance(v, str) and "TIMESTAMP_LTZ" in v for v in ours.values())
    assert ours == {k: java_spelling(v) for k, v in theirs.items()}


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_engine_read_types_match_pypaimon(
    case: Case, engine_tables: Callable[[Case], EngineTable], pypaimon_read_schema: Callable[[Case], pa.Schema]
) -> None:
    """Strict Arrow types: our read returns the types pypaimon returns for the same table."""
    t = engine_tables(case)
    result = _catalog(t.warehouse, case).get_table(case.identifier).read()
    assert_same_types(result.schema, pypaimon_read_schema(case))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_time_travel_pypaimon_vs_engine(
    case: Case,
    pypaimon: PypaimonClient,
    engine_tables: Callable[[Case], EngineTable],
    pypaimon_read_schema: Callable[[Case], pa.Schema],
) -> None:
    t = engine_tables(case)
    assert t.snapshot_ids == list(range(1, len(t.batches) + 1))
    schema = pypaimon_read_schema(case)
    reads = pypaimon.read_many(t.warehouse, case.identifier, [{"snapshot": s} for s in t.snapshot_ids])
    table = _catalog(t.warehouse, case).get_table(case.identifier)
    for snapshot_id, pp_result in zip(t.snapshot_ids, reads):
        ours = table.read(snapshot_id=snapshot_id)
        assert_same_rows(pp_result, t.expected[snapshot_id], case.sort_keys, schema)
        assert_same_rows(ours, pp_result, case.sort_keys, schema)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_pypaimon_reads_engine_tag(
    case: Case,
    pypaimon: PypaimonClient,
    engine_tables: Callable[[Case], EngineTable],
    pypaimon_read_schema: Callable[[Case], pa.Schema],
) -> None:
    """A tag created by our engine (``Table.create_tag``) is readable by pypaimon (``scan.tag-name``)."""
    t = engine_tables(case)
    result = pypaimon.read(t.warehouse, case.identifier, tag=TAG)
    expected = t.expected[t.snapshot_ids[TAG_AFTER_COMMIT - 1]]
    assert_same_rows(result, expected, case.sort_keys, pypaimon_read_schema(case))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_pypaimon_sees_engine_snapshots(
    case: Case, pypaimon: PypaimonClient, engine_tables: Callable[[Case], EngineTable]
) -> None:
    t = engine_tables(case)
    info = pypaimon.snapshots(t.warehouse, case.identifier)
    assert info["latest"] == t.snapshot_ids[-1]
    assert [s["id"] for s in info["snapshots"]] == t.snapshot_ids
    assert all(s["commitKind"] == "APPEND" for s in info["snapshots"])
    # Paimon counts physical rows of added files; at least the live rows must be there.
    assert info["snapshots"][-1]["totalRecordCount"] >= t.latest.num_rows


@pytest.mark.parametrize("case", PK_CASES, ids=[c.name for c in PK_CASES])
def test_pypaimon_commits_on_top_of_engine_table(
    case: Case,
    pypaimon: PypaimonClient,
    engine_tables: Callable[[Case], EngineTable],
    pypaimon_read_schema: Callable[[Case], pa.Schema],
    tmp_path: Path,
) -> None:
    """Mixed history: pypaimon adds a commit to our table (continuing sequence numbers and, for dynamic buckets,
    our hash index); pypaimon and our engine then read the same rows."""
    t = engine_tables(case)
    warehouse = tmp_path / "wh"
    shutil.copytree(t.warehouse, warehouse)
    model = Model(case)
    for batch in t.batches:
        model.apply(batch)
    extra = make_batches(case, deletes=case.rowkind_field, seed_tag="pypaimon-on-top")[2]
    snapshot_ids = pypaimon.write(
        warehouse,
        case.identifier,
        case.schema,
        case.primary_keys,
        case.partition_keys,
        case.table_options,
        [extra.data],
        create=False,
    )
    assert snapshot_ids == [t.snapshot_ids[-1] + 1]
    model.apply(extra, honour_kinds=case.rowkind_field)
    expected = model.expected()
    schema = pypaimon_read_schema(case)
    assert_same_rows(pypaimon.read(warehouse, case.identifier), expected, case.sort_keys, schema)
    assert_same_rows(_catalog(warehouse, case).get_table(case.identifier).read(), expected, case.sort_keys, schema)


def _key_to_bucket_dir(warehouse: Path, case: Case) -> dict[tuple[Any, ...], set[str]]:
    """Every key found in the table's data files -> the ``[partition/]bucket-N`` directories holding it."""
    table_dir = warehouse / f"{case.identifier.split('.')[0]}.db" / case.identifier.split(".")[1]
    layout: dict[tuple[Any, ...], set[str]] = {}
    for path in sorted(table_dir.rglob("data-*.parquet")):
        where = str(path.parent.relative_to(table_dir))
        for row in pq.read_table(path, columns=case.primary_keys).to_pylist():
            layout.setdefault(tuple(row.values()), set()).add(where)
    return layout


@pytest.mark.parametrize("case", PK_CASES, ids=[c.name for c in PK_CASES])
def test_bucket_layout_matches_pypaimon(
    case: Case, pypaimon: PypaimonClient, engine_tables: Callable[[Case], EngineTable], tmp_path: Path
) -> None:
    """The same commits written by pypaimon put every key into the same partition/bucket directory as ours
    (fixed buckets: the bucket hash; dynamic buckets: the key-to-bucket assignment and its hash index)."""
    t = engine_tables(case)
    warehouse = tmp_path / "pypaimon"
    pypaimon.write(
        warehouse,
        case.identifier,
        case.schema,
        case.primary_keys,
        case.partition_keys,
        case.table_options,
        [b.data for b in t.batches],
    )
    ours = _key_to_bucket_dir(t.warehouse, case)
    theirs = _key_to_bucket_dir(warehouse, case)
    assert ours.keys() == theirs.keys()
    assert all(len(dirs) == 1 for dirs in ours.values()), "a key landed in several buckets"
    differing = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not differing, f"{len(differing)} keys in other buckets, e.g. (ours, pypaimon) {list(differing.items())[:5]}"
    if case.options.get("bucket") not in (None, "1"):  # several buckets really got data
        assert len({d for dirs in ours.values() for d in dirs}) > 1
