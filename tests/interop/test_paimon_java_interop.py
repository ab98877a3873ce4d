"""Paimon Java 1.0 (the reference implementation) and our engine read each other's tables identically.

Paimon Java runs from the fat jar of the PyPI wheel ``paimon-python-ali`` through ``java/PaimonJavaDriver.java``,
compiled once per session; ONE JVM reads every table our engine wrote, and ONE JVM creates, writes and reads back
every table Paimon Java writes (see ``paimon_java.py``). Where Paimon Java and pypaimon disagree, Java is right.

* Java reads ours (``test_java_reads_engine_table``): every case of ``CASES`` (append unaware-bucket and a fixed-bucket
  append table, deduplicate with fixed bucket 4/1 and dynamic bucket, partitioned and not, deletes through row kinds
  and ``rowkind.field``) at an older snapshot and the latest; three of them also after a full compaction;
  ``deletion-vectors.enabled`` tables after writer compactions, a minor compaction that leaves vectors and a full
  one; an append table with a deletion vector; partial-update, aggregation and first-row tables, compacted and not;
  a table whose schema evolved (add column, rename, INT -> BIGINT) before and after compaction; cross-partition
  upsert tables (``bucket`` = -1, keys moving between partitions) of every merge engine after each commit; an
  append table before and after a minor and a full append compaction; the first-row table after each commit.
  Expected: a dict model where one applies, else our engine's own read of the same snapshot.
* We read Java's (``test_engine_reads_java_table``): Java creates the table and commits several batches with
  inserts, updates and deletes (append, deduplicate fixed bucket partitioned and not, a string key, deletion
  vectors, a writer that compacts as it goes, partial-update, aggregation, first-row, and a schema Java evolves
  between two commits); our read of the latest snapshot equals Java's own read (and the model where one applies),
  and our read of every Java commit's snapshot equals the model after that commit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.schema_change import AddColumn, RenameColumn, UpdateColumnType
from table_engine.table import Table
from tests.interop.conftest import CASES, Batch, Case, Model, assert_same_rows, make_batches
from tests.interop.paimon_java import JavaRows, PaimonJavaClient, decode_rows, paimon_type
from tests.interop.test_merge_engines_interop import TABLES as MERGE_TABLES
from tests.interop.test_merge_engines_interop import _batches as merge_batches
from tests.interop.test_merge_engines_interop import _canonical

pytestmark = pytest.mark.interop



@dataclass
class Version:
    """One snapshot to compare: read options for Java, our snapshot id, and the expected rows."""

    label: str
    snapshot_id: int
    expected: pa.Table


@dataclass
class Written:
    """A table one side wrote, and the snapshots the other side must read."""

    name: str
    warehouse: Path
    identifier: str
    schema: pa.Schema  # our engine's read schema
    sort_keys: list[str]
    versions: list[Version] = field(default_factory=list)
    canonical: bool = False  # compare through ``_canonical`` (maps / nested rows in unspecified order)


def _engine_write(table: Table, case: Case, batch: Batch) -> int:
    if case.rowkind_field or not case.is_pk:
        sid = table.write(batch.data)  # row kinds from rowkind.field, else all +I
    else:
        sid = table.write(batch.data, row_kinds=batch.kinds)
    assert sid is not None
    return int(sid)


def _create(warehouse: Path, case: Case, options: dict[str, str] | None = None) -> Table:
    return Catalog(str(warehouse)).create_table(case.identifier, schema=case.schema, primary_keys=case.primary_keys,
                                                partition_keys=case.partition_keys,
                                                options={**case.table_options, **(options or {})})


def _written(case: Case, warehouse: Path, table: Table, name: str | None = None) -> Written:
    return Written(name or case.name, warehouse, case.identifier, table.read().schema, case.sort_keys)


# --------------------------------------------------------------------------------------- tables our engine writes

COMPACTED = {"pk_bucket4", "pk_bucket4_part_rowkind", "pk_dynamic_part_rowkind"}
APPEND_BUCKETED = dataclasses.replace(CASES[[c.name for c in CASES].index("append")], name="append_bucket2",
                                      options={"bucket": "2", "bucket-key": "id"})
DV_CASES = [dataclasses.replace(c, name=f"{c.name}_dv", options={**c.options, "deletion-vectors.enabled": "true",
                                                                   "write-buffer-size": "64 kb"})
            for c in CASES if c.name in ("pk_bucket4", "pk_bucket4_part_rowkind", "pk_dynamic_part_rowkind")]


def _case_table(case: Case, root: Path) -> Written:
    """Four commits with the dict model; three cases also get a full compaction."""
    warehouse = root / case.name
    table = _create(warehouse, case)
    model = Model(case)
    sids = []
    for batch in make_batches(case, deletes=True, seed_tag="java"):
        sids.append(_engine_write(table, case, batch))
        model.apply(batch)
        if len(sids) == 2:
            commit2 = model.expected()
    out = _written(case, warehouse, table)
    out.versions = [Version("commit2", sids[1], commit2), Version("commit4", sids[-1], model.expected())]
    if case.name in COMPACTED:
        compacted = table.maintenance.compact(full=True)
        assert compacted is not None
        out.versions.append(Version("full-compaction", compacted, model.expected()))
    return out


def _dv_table(case: Case, root: Path) -> Written:
    """Writer compactions with vectors, a full compaction, write-only rows, a minor compaction, a full one."""
    warehouse = root / case.name
    table = _create(warehouse, case)
    model = Model(case)
    out = _written(case, warehouse, table)
    for number, batch in enumerate(make_batches(case, deletes=True, seed_tag="java-dv")):
        sid = _engine_write(table, case, batch)
        model.apply(batch)
        out.versions.append(Version(f"commit{number + 1}", sid, model.expected()))
    table.maintenance.compact(full=True)
    extra = make_batches(case, deletes=True, seed_tag="java-dv-more")[1]
    extra = Batch(extra.data.slice(0, 40), extra.kinds[:40])
    _engine_write(table.copy({"write-only": "true"}), case, extra)
    model.apply(extra)
    for label, full in (("minor-compaction", False), ("full-compaction", True)):
        compacted = table.maintenance.compact(full=full)
        assert compacted is not None
        out.versions.append(Version(label, compacted, model.expected()))
    return out


def _dv_append_table(root: Path) -> Written:
    from tests.table_engine.store.indexes.test_deletion_vectors import append_table_with_vector

    warehouse = root / "append_dv"
    table = append_table_with_vector(Catalog(str(warehouse)), [0, 3, 5, 9])
    expected = table.read()
    assert sorted(expected.column("id").to_pylist()) == [1, 2, 4, 6, 7, 8]
    sid = table.latest_snapshot_id()
    assert sid is not None
    return Written("append_dv", warehouse, "db.app", expected.schema, ["id"], [Version("vector", sid, expected)])


def _merge_engine_table(name: str, root: Path) -> Written:
    """Partial-update / aggregation: four commits, then a full compaction; expected is our own read."""
    spec = MERGE_TABLES[name]
    warehouse = root / name
    table = Catalog(str(warehouse)).create_table(f"mi.{name}", spec["schema"], primary_keys=["k"],
                                                 options=spec["options"])
    sids = [table.write(b) for b in merge_batches(spec["schema"], seed=7 + len(name))]
    compacted = table.maintenance.compact(full=True)
    assert compacted is not None and sids[-1] is not None
    out = Written(name, warehouse, f"mi.{name}", table.read().schema, ["k"], canonical=True)
    out.versions = [Version(label, sid, table.read(snapshot_id=sid)) for label, sid in
                    (("commit4", int(sids[-1])), ("full-compaction", compacted))]
    assert out.versions[0].expected.num_rows > 0
    return out


FIRST_ROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int32())])


def _first_row_batches(seed: int) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    batches = []
    for commit in range(3):
        ids = rng.integers(0, 60, 50)
        batches.append(pa.table({"id": pa.array(ids, pa.int64()),
                                 "v": [f"c{commit}-{i}" for i in range(50)],
                                 "n": pa.array(rng.integers(0, 100, 50), pa.int32())}, schema=FIRST_ROW_SCHEMA))
    return batches


def _first_row_expected(batches: list[pa.Table]) -> pa.Table:
    first: dict[int, dict[str, Any]] = {}
    for batch in batches:
        for row in batch.to_pylist():
            first.setdefault(row["id"], row)
    return pa.Table.from_pylist(sorted(first.values(), key=lambda r: r["id"]), schema=FIRST_ROW_SCHEMA)


def _first_row_table(root: Path) -> Written:
    warehouse = root / "first_row"
    table = Catalog(str(warehouse)).create_table("mi.first_row", FIRST_ROW_SCHEMA, primary_keys=["id"],
                                                 options={"merge-engine": "first-row", "bucket": "2"})
    batches = _first_row_batches(seed=11)
    sids = [table.write(b) for b in batches]
    assert all(sid is not None for sid in sids)
    out = Written("first_row", warehouse, "mi.first_row", table.read().schema, ["id"])
    out.versions = [Version(f"commit{i + 1}", int(sid), _first_row_expected(batches[:i + 1]))  # type: ignore[arg-type]
                    for i, sid in enumerate(sids)]
    return out


XPART_SCHEMA = pa.schema([("dt", pa.string()), pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
XPART_DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]


def _cross_partition_table(engine: str, root: Path) -> Written:
    """Cross-partition upsert (key without the partition field, ``bucket`` = -1): keys move between partitions over
    four commits. Expected, per commit, from a dict model: deduplicate moves a key to its newest partition with the
    newest value; partial-update and aggregation (sum) update the key in its first partition; first-row keeps the
    first row."""
    warehouse = root / f"xpart_{engine}"
    opts = {"merge-engine": engine, "dynamic-bucket.target-row-num": "40"}
    if engine == "aggregation":
        opts["fields.v.aggregate-function"] = "sum"
    table = Catalog(str(warehouse)).create_table("db.xp", XPART_SCHEMA, primary_keys=["id"], partition_keys=["dt"],
                                                 options=opts)
    rng = np.random.default_rng(23)
    model: dict[int, tuple[str, int]] = {}
    out = Written(f"xpart_{engine}", warehouse, "db.xp", XPART_SCHEMA, ["id"])
    for commit in range(4):
        ids = rng.choice(150, size=100, replace=False).astype(np.int64)
        days = rng.choice(XPART_DAYS, size=100)
        values = rng.integers(0, 1000, 100).astype(np.int64)
        for day, key, value in zip(days.tolist(), ids.tolist(), values.tolist()):
            old = model.get(key)
            if old is None or engine == "deduplicate":
                model[key] = (day, value)
            elif engine == "partial-update":
                model[key] = (old[0], value)
            elif engine == "aggregation":
                model[key] = (old[0], old[1] + value)
        sid = table.write(pa.table({"dt": days, "id": ids, "v": values}, schema=XPART_SCHEMA))
        assert sid is not None
        expected = pa.Table.from_pylist([{"dt": d, "id": k, "v": v} for k, (d, v) in sorted(model.items())],
                                        schema=XPART_SCHEMA)
        out.versions.append(Version(f"commit{commit + 1}", int(sid), expected))
    return out


APPEND_COMPACT_SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("s", pa.string())])


def _append_compacted_table(root: Path) -> Written:
    """An unaware-bucket append table with small files (write-only), then the dedicated append compaction: a
    minor one (``compaction.min.file-num``) and a full one; Java reads before and after, same rows."""
    warehouse = root / "append_compacted"
    table = Catalog(str(warehouse)).create_table(
        "db.ac", APPEND_COMPACT_SCHEMA, partition_keys=["dt"],
        options={"write-only": "true", "compaction.min.file-num": "3"})
    def write(i: int) -> None:
        ids = np.arange(i * 50, (i + 1) * 50, dtype=np.int64)
        table.write(pa.table({"dt": ["2024-01-01" if i % 2 else "2024-01-02"] * 50, "id": ids,
                              "s": [f"r{k}" for k in ids.tolist()]}, schema=APPEND_COMPACT_SCHEMA))

    for i in range(6):
        write(i)
    before = table.latest_snapshot_id()
    expected = table.read()
    assert before is not None and expected.num_rows == 300
    minor = table.maintenance.compact()
    for i in range(6, 8):  # one more small file per partition: the full compaction has work again
        write(i)
    full = table.maintenance.compact(full=True)
    assert minor is not None and full is not None
    out = Written("append_compacted", warehouse, "db.ac", APPEND_COMPACT_SCHEMA, ["id"])
    out.versions = [Version("small-files", before, expected), Version("minor-compaction", minor, expected),
                    Version("full-compaction", full, table.read())]
    assert out.versions[-1].expected.num_rows == 400
    return out


EVOLVE_V1 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int32()), ("b", pa.string()),
                       ("d", pa.decimal128(10, 2))])
EVOLVE_V2 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int64()), ("b2", pa.string()),
                       ("d", pa.decimal128(10, 2)), ("c", pa.float64())])


def _evolution_batches() -> tuple[pa.Table, pa.Table]:
    """A commit under ``EVOLVE_V1`` and one under ``EVOLVE_V2`` (half of its keys update the first's)."""
    first = pa.table({"id": pa.array(range(100), pa.int64()), "a": pa.array(range(100), pa.int32()),
                      "b": [f"b{i}" if i % 7 else None for i in range(100)],
                      "d": [Decimal(i) / 4 for i in range(100)]}, schema=EVOLVE_V1)
    ids = list(range(50, 150))
    second = pa.table({"id": pa.array(ids, pa.int64()), "a": pa.array([3_000_000_000 + i for i in ids], pa.int64()),
                       "b2": [f"new{i}" for i in ids], "d": [None] * 100,
                       "c": [i / 3 if i % 5 else None for i in ids]}, schema=EVOLVE_V2)
    return first, second


def _evolved_expected(first: pa.Table, second: pa.Table) -> pa.Table:
    rows = {r["id"]: {**r, "b2": r.pop("b"), "c": None} for r in first.to_pylist()}
    rows.update({r["id"]: r for r in second.to_pylist()})
    return pa.Table.from_pylist([rows[k] for k in sorted(rows)], schema=EVOLVE_V2)


def _evolved_table(root: Path) -> Written:
    """Commit under schema 0; add column ``c``, rename ``b`` to ``b2``, widen ``a`` to BIGINT; upsert; compact."""
    warehouse = root / "evolved"
    table = Catalog(str(warehouse)).create_table("db.evolved", EVOLVE_V1, primary_keys=["id"],
                                                 options={"bucket": "2"})
    first, second = _evolution_batches()
    table.write(first)
    table.alter(AddColumn("c", pa.float64()), RenameColumn("b", "b2"), UpdateColumnType("a", pa.int64()))
    table = Catalog(str(warehouse)).get_table("db.evolved")
    sid = table.write(second)
    assert sid is not None
    expected = _evolved_expected(first, second)
    compacted = table.maintenance.compact(full=True)
    assert compacted is not None
    out = Written("evolved", warehouse, "db.evolved", table.read().schema, ["id"])
    out.versions = [Version("evolved", int(sid), expected), Version("full-compaction", compacted, expected)]
    return out


ENGINE_TABLES: dict[str, Callable[[Path], Written]] = {
    **{c.name: (lambda root, c=c: _case_table(c, root)) for c in [*CASES, APPEND_BUCKETED]},  # type: ignore[misc]
    **{c.name: (lambda root, c=c: _dv_table(c, root)) for c in DV_CASES},  # type: ignore[misc]
    "append_dv": _dv_append_table,
    "partial": lambda root: _merge_engine_table("partial", root),
    "aggregation": lambda root: _merge_engine_table("aggregation", root),
    "first_row": _first_row_table,
    "evolved": _evolved_table,
    **{f"xpart_{e}": (lambda root, e=e: _cross_partition_table(e, root))  # type: ignore[misc]
       for e in ("deduplicate", "partial-update", "aggregation", "first-row")},
    "append_compacted": _append_compacted_table,
}


@dataclass
class JavaRead:
    written: Written
    results: dict[str, JavaRows | str]  # label -> Java's rows, or its error message


@pytest.fixture(scope="session")
def java_reads_engine_tables(paimon_java: PaimonJavaClient,
                             tmp_path_factory: pytest.TempPathFactory) -> dict[str, JavaRead]:
    """Our engine writes every table of ``ENGINE_TABLES``; ONE JVM reads every version of all of them."""
    root = tmp_path_factory.mktemp("engine-for-java")
    written = {name: build(root) for name, build in ENGINE_TABLES.items()}
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    for name, w in written.items():
        for v in w.versions:
            options = {"scan.snapshot-id": str(v.snapshot_id)}
            jobs.append((name, v.label, paimon_java.read_job(w.warehouse, w.identifier, options)))
    results = paimon_java.run([job for _, _, job in jobs])
    reads = {name: JavaRead(w, {}) for name, w in written.items()}
    for (name, label, job), result in zip(jobs, results):
        if "error" in result:
            reads[name].results[label] = str(result["error"])
        else:
            reads[name].results[label] = decode_rows(Path(job["out"]), written[name].schema)
    return reads


def _scalar_type_mismatches(rows: JavaRows, schema: pa.Schema) -> dict[str, tuple[str, str]]:
    """Java's SQL type per scalar column vs the Arrow type we read (nullability ignored)."""
    out = {}
    for (name, java_type), f in zip(rows.fields, schema):
        if pa.types.is_nested(f.type):
            continue
        ours = str(paimon_type(f.type))
        if java_type.removesuffix(" NOT NULL") != ours:
            out[name] = (java_type, ours)
    return out


def _assert_rows(actual: pa.Table, expected: pa.Table, w: Written) -> None:
    if w.canonical:
        assert _canonical(actual, w.schema) == _canonical(expected, w.schema)
    else:
        assert_same_rows(actual, expected, w.sort_keys, w.schema)


ENGINE_PARAMS = list(ENGINE_TABLES)


@pytest.mark.parametrize("name", ENGINE_PARAMS)
def test_java_reads_engine_table(java_reads_engine_tables: dict[str, JavaRead], name: str) -> None:
    read = java_reads_engine_tables[name]
    w = read.written
    table = Catalog(str(w.warehouse)).get_table(w.identifier)
    for version in w.versions:
        _assert_rows(table.read(snapshot_id=version.snapshot_id), version.expected, w)  # our own read agrees
        rows = read.results[version.label]
        assert not isinstance(rows, str), f"Paimon Java failed to read {name} at {version.label}: {rows}"
        assert not _scalar_type_mismatches(rows, w.schema), f"{version.label}: (java, ours) types differ"
        assert set(rows.kinds) <= {"+I", "+U"}, f"{version.label}: row kinds {sorted(set(rows.kinds))}"
        assert version.expected.num_rows > 0
        _assert_rows(rows.table, version.expected, w)


# ------------------------------------------------------------------------------------------ tables Java writes

JAVA_CASES = [c for c in CASES if c.name in ("pk_bucket4", "pk_bucket4_part_rowkind", "pk_bucket1_part2",
                                                "pk_bucket4_string_key", "append", "append_part")]
JAVA_DV_CASE = dataclasses.replace(CASES[0], name="pk_bucket4_dv", options={"bucket": "4",
                                                                               "deletion-vectors.enabled": "true"})
# Paimon Java compacts as it writes (a sorted run per commit triggers a compaction every other commit)
JAVA_COMPACTING_CASE = dataclasses.replace(CASES[1], name="pk_bucket4_part_rowkind_compacting",
                                           options={**CASES[1].options, "num-sorted-run.compaction-trigger": "2"})


@dataclass
class JavaTable:
    """A table Paimon Java created and wrote: its commits' snapshot ids, models, and Java's own final read."""

    name: str
    warehouse: Path
    identifier: str
    schema: pa.Schema
    sort_keys: list[str]
    models: list[pa.Table | None]  # expected rows after each commit (None: no model, Java's read is the reference)
    canonical: bool = False
    snapshot_ids: list[int] = field(default_factory=list)
    java_read: JavaRows | None = None
    error: str | None = None


@pytest.fixture(scope="session")
def java_written_tables(paimon_java: PaimonJavaClient,
                        tmp_path_factory: pytest.TempPathFactory) -> dict[str, JavaTable]:
    """ONE JVM creates, writes (several commits each) and reads back every table below."""
    root = tmp_path_factory.mktemp("java-written")
    tables: dict[str, JavaTable] = {}
    jobs: list[tuple[str, dict[str, Any]]] = []

    def add(name: str, identifier: str, schema: pa.Schema, pks: list[str], parts: list[str],
            options: dict[str, str], commits: list[tuple[pa.Table, list[str] | None]],
            models: list[pa.Table | None], sort_keys: list[str], canonical: bool = False) -> None:
        warehouse = root / name
        tables[name] = JavaTable(name, warehouse, identifier, schema, sort_keys, models, canonical)
        jobs.append((name, paimon_java.create_job(warehouse, identifier, schema, pks, parts, options)))
        jobs.append((name, paimon_java.write_job(warehouse, identifier, commits)))
        jobs.append((name, paimon_java.read_job(warehouse, identifier)))

    for case in [*JAVA_CASES, JAVA_DV_CASE, JAVA_COMPACTING_CASE]:
        model = Model(case)
        batches = make_batches(case, deletes=True, seed_tag="written-by-java")
        models: list[pa.Table | None] = []
        for batch in batches:
            model.apply(batch)
            models.append(model.expected())
        commits: list[tuple[pa.Table, list[str] | None]] = [(b.data, b.kinds) for b in batches]
        add(case.name, case.identifier, case.schema, case.primary_keys, case.partition_keys, case.table_options,
            commits, models, case.sort_keys)
    for name in ("partial", "aggregation"):
        spec = MERGE_TABLES[name]
        batches_ = merge_batches(spec["schema"], seed=31 + len(name))
        add(name, f"mi.{name}", spec["schema"], ["k"], [], spec["options"], [(b, None) for b in batches_],
            [None] * len(batches_), ["k"], canonical=True)
    first_row = _first_row_batches(seed=13)
    add("first_row", "mi.first_row", FIRST_ROW_SCHEMA, ["id"], [], {"merge-engine": "first-row", "bucket": "2"},
        [(b, None) for b in first_row], [_first_row_expected(first_row[: i + 1]) for i in range(len(first_row))],
        ["id"])

    # schema evolution by Java between two commits (add column, rename, INT -> BIGINT), as in ``_evolved_table``
    evolved_commits = _evolution_batches()
    warehouse = root / "evolved"
    tables["evolved"] = JavaTable("evolved", warehouse, "db.evolved", EVOLVE_V2, ["id"],
                                  [None, _evolved_expected(*evolved_commits)])
    changes = [{"add": "c", "type": "DOUBLE"}, {"rename": "b", "to": "b2"}, {"retype": "a", "type": "BIGINT"}]
    jobs += [("evolved", paimon_java.create_job(warehouse, "db.evolved", EVOLVE_V1, ["id"], [], {"bucket": "2"})),
             ("evolved", paimon_java.write_job(warehouse, "db.evolved", [(evolved_commits[0], None)])),
             ("evolved", {"op": "alter", "warehouse": str(warehouse), "table": "db.evolved", "changes": changes}),
             ("evolved", paimon_java.write_job(warehouse, "db.evolved", [(evolved_commits[1], None)])),
             ("evolved", paimon_java.read_job(warehouse, "db.evolved"))]

    results = paimon_java.run([job for _, job in jobs])
    for (name, job), result in zip(jobs, results):
        t = tables[name]
        if "error" in result:
            t.error = t.error or f"{job['op']}: {result['error']}"
        elif job["op"] == "write":
            t.snapshot_ids += [int(s) for s in result["ok"]["snapshots"]]
        elif job["op"] == "read":
            t.java_read = decode_rows(Path(job["out"]), t.schema)
    return tables


@pytest.mark.parametrize("name", [*(c.name for c in JAVA_CASES), JAVA_DV_CASE.name, JAVA_COMPACTING_CASE.name,
                                  "partial", "aggregation", "first_row", "evolved"])
def test_engine_reads_java_table(java_written_tables: dict[str, JavaTable], name: str) -> None:
    t = java_written_tables[name]
    assert t.error is None, f"Paimon Java failed on {name}: {t.error}"
    assert t.java_read is not None and t.java_read.table.num_rows > 0
    w = Written(name, t.warehouse, t.identifier, t.schema, t.sort_keys, canonical=t.canonical)
    table = Catalog(str(t.warehouse)).get_table(t.identifier)
    ours = table.read()
    assert ours.column_names == t.schema.names
    if t.models[-1] is not None:  # Java itself agrees with the model (the model is checked against the reference)
        _assert_rows(t.java_read.table, t.models[-1], w)
    _assert_rows(ours, t.java_read.table, w)
    assert len(t.snapshot_ids) == len(t.models)
    for sid, model in zip(t.snapshot_ids, t.models):
        if model is not None:
            assert_same_rows(table.read(snapshot_id=sid), model, t.sort_keys, t.schema)
