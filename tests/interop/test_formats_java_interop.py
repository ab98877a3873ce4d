"""ORC and Avro data files between Paimon Java 1.0 and our engine (issue 22).

Two JVM starts for the whole module:

1. Paimon Java creates primary-key (bucket 4, updates and deletes) and append tables with ``file.format`` = ``orc``
   and ``avro`` and commits four batches to each, then reads them back.
2. Our engine reads each of those tables (equal to the dict model and to Java's read, at every Java snapshot),
   writes one more commit and fully compacts it; it also creates its own ORC and Avro tables (four commits, then a
   full compaction). Paimon Java then reads all of them, and must see the model.

ORC tables hold no TIMESTAMP before 1970 with sub-millisecond digits: the engine refuses to write those to ORC
(see ``table_engine/format/orc_file.py``), so the generated values are floored to the millisecond there.

Every data file of the result is checked to carry its format's extension, and to really be ORC / Avro (magic bytes).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from table_engine import Catalog
from table_engine.table import Table
from tests.interop.conftest import CASES, Batch, Case, Model, assert_same_rows, make_batches
from tests.interop.paimon_java import JavaRows, PaimonJavaClient, decode_rows

pytestmark = pytest.mark.interop

FORMATS = ("orc", "avro")
MAGIC = {"orc": b"ORC", "avro": b"Obj\x01"}
_BY_NAME = {c.name: c for c in CASES}
BASES = {"pk": _BY_NAME["pk_bucket4"], "part": _BY_NAME["pk_bucket1_part2"], "append": _BY_NAME["append"]}


@dataclass
class Lake:
    """One table of one format: who wrote it first, its expected rows and what each side saw."""

    name: str
    fmt: str
    case: Case
    warehouse: Path
    java_first: bool
    models: list[pa.Table] = field(default_factory=list)
    snapshot_ids: list[int] = field(default_factory=list)
    java_first_read: JavaRows | None = None
    engine_reads: list[pa.Table] = field(default_factory=list)  # engine's read of each Java snapshot
    engine_latest: pa.Table | None = None
    java_final_read: JavaRows | None = None
    error: str | None = None


def _case(base: str, fmt: str, who: str) -> Case:
    c = BASES[base]
    return dataclasses.replace(c, name=f"{who}_{base}_{fmt}", options={**c.options, "file.format": fmt})


def _write(table: Table, case: Case, batch: Batch) -> int:
    sid = table.write(batch.data, row_kinds=batch.kinds) if case.is_pk else table.write(batch.data)
    assert sid is not None
    return int(sid)


def _orc_safe(batch: Batch) -> Batch:
    """``batch`` with sub-millisecond timestamps before 1970 floored to the millisecond."""
    cols = []
    for col in batch.data.columns:
        t = col.type
        if pa.types.is_timestamp(t) and t.unit == "us":
            v = col.cast(pa.int64())
            floored = pc.multiply(pc.floor(pc.divide(v.cast(pa.float64()), 1000)).cast(pa.int64()), 1000)
            col = pc.if_else(pc.less(v, 0), floored, v).cast(t)
        cols.append(col)
    return dataclasses.replace(batch, data=pa.Table.from_arrays(cols, schema=batch.data.schema))


def _batches(case: Case, fmt: str, seed_tag: str) -> list[Batch]:
    batches = make_batches(case, deletes=True, seed_tag=seed_tag)
    return [_orc_safe(b) for b in batches] if fmt == "orc" else batches


def _extra_batch(case: Case, fmt: str) -> Batch:
    return _batches(case, fmt, "formats-extra")[1]


def _run(java: PaimonJavaClient, lakes: dict[str, Lake], jobs: list[tuple[str, dict[str, Any]]],
         on_read: str) -> None:
    results = java.run([job for _, job in jobs])
    for (name, job), result in zip(jobs, results):
        lake = lakes[name]
        if "error" in result:
            lake.error = lake.error or f"Java {job['op']}: {result['error']}"
        elif job["op"] == "write":
            lake.snapshot_ids += [int(s) for s in result["ok"]["snapshots"]]
        elif job["op"] == "read":
            setattr(lake, on_read, decode_rows(Path(job["out"]), lake.case.schema))


@pytest.fixture(scope="module")
def lakes(paimon_java: PaimonJavaClient, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Lake]:
    root = tmp_path_factory.mktemp("formats-java")
    out: dict[str, Lake] = {}
    jobs: list[tuple[str, dict[str, Any]]] = []
    for fmt in FORMATS:
        for base in BASES:
            for who in ("java", "engine"):
                case = _case(base, fmt, who)
                lake = Lake(case.name, fmt, case, root / case.name, who == "java")
                out[case.name] = lake
                model = Model(case)
                batches = _batches(case, fmt, f"formats-{who}")
                for b in batches:
                    model.apply(b)
                    lake.models.append(model.expected())
                if lake.java_first:
                    jobs.append((case.name, paimon_java.create_job(lake.warehouse, case.identifier, case.schema,
                                                                   case.primary_keys, case.partition_keys,
                                                                   case.table_options)))
                    jobs.append((case.name, paimon_java.write_job(lake.warehouse, case.identifier,
                                                                  [(b.data, b.kinds) for b in batches])))
                    jobs.append((case.name, paimon_java.read_job(lake.warehouse, case.identifier)))
                else:
                    table = Catalog(str(lake.warehouse)).create_table(
                        case.identifier, schema=case.schema, primary_keys=case.primary_keys,
                        partition_keys=case.partition_keys, options=case.table_options)
                    lake.snapshot_ids = [_write(table, case, b) for b in batches]
                    table.maintenance.compact(full=True)
    _run(paimon_java, out, jobs, "java_first_read")

    # our engine on Java's tables: read every snapshot, write one more commit, compact fully
    final_jobs: list[tuple[str, dict[str, Any]]] = []
    for lake in out.values():
        if lake.java_first and lake.error is None:
            try:
                table = Catalog(str(lake.warehouse)).get_table(lake.case.identifier)
                lake.engine_reads = [table.read(snapshot_id=s) for s in lake.snapshot_ids]
                model = Model(lake.case)
                for b in _batches(lake.case, lake.fmt, "formats-java"):
                    model.apply(b)
                extra = _extra_batch(lake.case, lake.fmt)
                model.apply(extra)
                _write(table, lake.case, extra)
                table.maintenance.compact(full=True)
                lake.models.append(model.expected())
                lake.engine_latest = Catalog(str(lake.warehouse)).get_table(lake.case.identifier).read()
            except Exception as e:  # reported by the test of this table
                lake.error = f"engine: {type(e).__name__}: {e}"
                continue
        if lake.error is None:
            final_jobs.append((lake.name, paimon_java.read_job(lake.warehouse, lake.case.identifier)))
    _run(paimon_java, out, final_jobs, "java_final_read")
    return out


def _data_files(lake: Lake) -> list[Path]:
    return sorted(p for p in lake.warehouse.rglob("*") if p.is_file() and p.name.startswith("data-"))


@pytest.mark.parametrize("name", [f"java_{b}_{f}" for f in FORMATS for b in BASES])
def test_engine_reads_writes_and_compacts_java_table(lakes: dict[str, Lake], name: str) -> None:
    lake = lakes[name]
    assert lake.error is None, lake.error
    case = lake.case
    assert lake.java_first_read is not None
    assert_same_rows(lake.java_first_read.table, lake.models[len(lake.snapshot_ids) - 1], case.sort_keys,
                     case.schema)
    assert len(lake.engine_reads) == len(lake.snapshot_ids)
    for got, model in zip(lake.engine_reads, lake.models):
        assert_same_rows(got.select(case.schema.names), model, case.sort_keys, case.schema)
    assert lake.engine_latest is not None and lake.java_final_read is not None
    assert_same_rows(lake.engine_latest.select(case.schema.names), lake.models[-1], case.sort_keys, case.schema)
    assert_same_rows(lake.java_final_read.table, lake.models[-1], case.sort_keys, case.schema)
    files = _data_files(lake)
    assert files and all(p.suffix == f".{lake.fmt}" for p in files)


@pytest.mark.parametrize("name", [f"engine_{b}_{f}" for f in FORMATS for b in BASES])
def test_java_reads_engine_table(lakes: dict[str, Lake], name: str) -> None:
    lake = lakes[name]
    assert lake.error is None, lake.error
    assert lake.java_final_read is not None
    assert_same_rows(lake.java_final_read.table, lake.models[-1], lake.case.sort_keys, lake.case.schema)
    files = _data_files(lake)
    assert files and all(p.suffix == f".{lake.fmt}" for p in files)
    assert all(p.read_bytes()[: len(MAGIC[lake.fmt])] == MAGIC[lake.fmt] for p in files)


# ------------------------------------------------------------------------------------------ nested types, both ways

NESTED = pa.schema([pa.field("id", pa.int64(), nullable=False), ("arr", pa.list_(pa.int32())),
                    ("m", pa.map_(pa.string(), pa.int64())), ("mi", pa.map_(pa.int32(), pa.string())),
                    ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
                    ("ts", pa.timestamp("ms")), ("d", pa.decimal128(20, 4))])


def _nested_commit(ids: range, tag: str, fmt: str) -> pa.Table:
    """Rows of every nested shape; a null ROW only in Avro (ORC refuses them: see ``orc_file.py``)."""
    return pa.Table.from_pylist([{
        "id": i, "arr": None if i % 5 == 0 else [i, None, -i][: i % 4],
        "m": None if i % 7 == 0 else {f"{tag}{j}": i * j for j in range(i % 3)},
        "mi": {i: f"{tag}{i}", -i - 1: None} if i % 2 else {},
        "st": None if fmt == "avro" and i % 6 == 0 else {"x": None if i % 4 == 0 else i, "y": f"{tag}-{i}"},
        "ts": i * 86_400_123, "d": None if i % 9 == 0 else f"{i}.{i % 10000:04d}",
    } for i in ids], schema=NESTED.remove(NESTED.get_field_index("d")).append(pa.field("d", pa.string()))
    ).set_column(6, "d", pa.array([None if i % 9 == 0 else f"{i}.{i % 10000:04d}" for i in ids]).cast(
        pa.decimal128(20, 4)))


def _canonical(t: pa.Table) -> list[dict[str, Any]]:
    rows = t.select(NESTED.names).cast(NESTED).to_pylist()
    for r in rows:
        for name in ("m", "mi"):
            if r[name] is not None:
                r[name] = sorted(r[name], key=str)
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture(scope="module")
def nested(paimon_java: PaimonJavaClient, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Java writes nested ORC/Avro tables (two commits), the engine reads, updates and compacts them; the engine
    writes its own; Java reads all four at the end (two JVMs)."""
    root = tmp_path_factory.mktemp("formats-nested")
    commits = {f: [_nested_commit(range(40), "a", f), _nested_commit(range(20, 60, 2), "b", f)] for f in FORMATS}
    extra = {f: _nested_commit(range(50, 70), "c", f) for f in FORMATS}
    out: dict[str, Any] = {}
    jobs = []
    for fmt in FORMATS:
        wh = root / f"java_{fmt}"
        jobs += [paimon_java.create_job(wh, "db.n", NESTED, ["id"], [], {"bucket": "2", "file.format": fmt}),
                 paimon_java.write_job(wh, "db.n", [(c, None) for c in commits[fmt]])]
        t = Catalog(str(root / f"engine_{fmt}")).create_table("db.n", NESTED, primary_keys=["id"],
                                                             options={"bucket": "2", "file.format": fmt})
        for c in [*commits[fmt], extra[fmt]]:
            t.write(c)
        t.maintenance.compact(full=True)
    paimon_java.run_checked(jobs)
    reads = []
    for fmt in FORMATS:
        t = Catalog(str(root / f"java_{fmt}")).get_table("db.n")
        out[f"engine reads java_{fmt}"] = t.read()
        t.write(extra[fmt])
        t.maintenance.compact(full=True)
        for who in ("java", "engine"):
            reads.append((f"{who}_{fmt}", paimon_java.read_job(root / f"{who}_{fmt}", "db.n")))
    paimon_java.run_checked([job for _, job in reads])
    for name, job in reads:
        out[f"java reads {name}"] = decode_rows(Path(job["out"]), NESTED).table
        out[f"files {name}"] = sorted(p.suffix for p in (root / name).rglob("data-*"))
    for fmt in FORMATS:
        by_id: dict[int, dict[str, Any]] = {}
        for c in commits[fmt]:
            by_id.update({r["id"]: r for r in c.to_pylist()})
        out[f"model2 {fmt}"] = pa.Table.from_pylist(list(by_id.values()), schema=NESTED)
        by_id.update({r["id"]: r for r in extra[fmt].to_pylist()})
        out[f"model3 {fmt}"] = pa.Table.from_pylist(list(by_id.values()), schema=NESTED)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_types_both_ways(nested: dict[str, Any], fmt: str) -> None:
    assert _canonical(nested[f"engine reads java_{fmt}"]) == _canonical(nested[f"model2 {fmt}"])
    for who in ("java", "engine"):
        assert _canonical(nested[f"java reads {who}_{fmt}"]) == _canonical(nested[f"model3 {fmt}"]), who
        assert set(nested[f"files {who}_{fmt}"]) == {f".{fmt}"}
