"""The ``write`` job's file route (table_engine.spark.jobs.file_write, ADR 0036): tasks read the source files with
pyarrow and write through the engine, and the table reads back as the engine's own single write of the files in
order."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.core_options import CommitUser
from table_engine.errors import SchemaMismatchError
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.ops import Write
from table_engine.spark.jobs import file_write
from table_engine.spark.jobs.run import run_spark_job
from tests.budget import examples

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("p", pa.string(), nullable=False),
                    pa.field("v", pa.int64()), pa.field("s", pa.int64())])
ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")


def content(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.read().to_pylist())


def data_files(table: Any) -> list[Path]:
    return sorted(Path(table.path).rglob("data-*"))


def table_options(engine: str, bucket: int, seq_field: bool) -> dict[str, str]:
    opts = {"bucket": str(bucket), "merge-engine": engine}
    if engine == "aggregation":
        opts["fields.v.aggregate-function"] = "sum"
    if seq_field:
        opts["sequence.field"] = "s"
    return opts


def engine_write(table: Any, files: list[pa.Table]) -> None:
    """The reference: the engine's own single writer, the files in order."""
    writer = table.new_write()
    for f in files:
        writer.write(f)
    table.new_commit("reference").commit(writer.prepare_commit(), BATCH_COMMIT_IDENTIFIER)


def write_job(spark: Any, warehouse: str, name: str, source: Path | str, fmt: str = "parquet",
              **kw: Any) -> dict[str, Any]:
    return run_spark_job(Write(warehouse=warehouse, table=name, source=str(source), format=fmt, **kw), spark)


rows_st = st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["a", "b"]), st.one_of(st.none(), st.integers(-9, 9))),
                   min_size=1, max_size=14)


@settings(max_examples=examples(14), deadline=None, suppress_health_check=list(HealthCheck))
@given(files=st.lists(rows_st, min_size=2, max_size=4), engine=st.sampled_from(ENGINES), seq_field=st.booleans(),
       partitioned=st.booleans(), buckets=st.sampled_from(["fixed", "dynamic", "cross-partition"]),
       group=st.integers(2, 5), data=st.data())
def test_the_file_route_reads_back_as_the_engines_own_write(spark, caplog, files, engine, seq_field, partitioned,
                                                            buckets, group, data):
    """Fixed buckets (runs of splits), dynamic buckets and cross-partition upsert (every task reads every split and
    keeps its keys' rows), all through the file route: the table equals the engine's own single write."""
    if engine == "first-row" or buckets == "cross-partition":  # (Paimon forbids sequence.field with the latter)
        seq_field = False
    total = sum(len(f) for f in files)
    # sequence.field values: with ties (source order decides), distinct where a fixed-bucket table keeps the
    # DataFrame route (sequence.field with a merge engine that combines records)
    distinct = buckets == "fixed" and seq_field and engine != "deduplicate"
    seqs = data.draw(st.permutations(range(total))) if distinct else \
        data.draw(st.lists(st.integers(0, 3), min_size=total, max_size=total))
    tables, at = [], 0
    for f in files:
        tables.append(pa.table({"k": [r[0] for r in f], "p": [r[1] for r in f], "v": [r[2] for r in f],
                                "s": list(seqs[at:at + len(f)])}, schema=SCHEMA))
        at += len(f)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "src")
        src.mkdir()
        for i, t in enumerate(tables):
            pq.write_table(t, src / f"part-{i:02d}.parquet", row_group_size=group)
        catalog = Catalog(f"{tmp}/wh")
        keys = ["k", "p"] if partitioned and buckets != "cross-partition" else ["k"]
        parts = ["p"] if partitioned or buckets == "cross-partition" else []
        opts = table_options(engine, 2 if buckets == "fixed" else -1, seq_field)
        ref = catalog.create_table("db.ref", SCHEMA, primary_keys=keys, partition_keys=parts, options=opts)
        out = catalog.create_table("db.out", SCHEMA, primary_keys=keys, partition_keys=parts, options=opts)
        engine_write(ref, tables)
        caplog.clear()
        with caplog.at_level("INFO", logger="table_engine.spark"):
            write_job(spark, f"{tmp}/wh", "db.out", src, parallelism=3)
        assert content(out) == content(ref)
        if buckets != "fixed":
            assert "through Spark rows" not in caplog.text and "read by each of 3 tasks" in caplog.text


@pytest.mark.parametrize("fmt", ["csv", "json", "orc"])
def test_csv_json_and_orc_sources(spark, warehouse, tmp_path, fmt):
    from pyarrow import csv, orc

    tables = [pa.table({"k": [1, 2, 1], "p": ["a", "b", "a"], "v": [1, None, 3], "s": [0, 0, 0]}, schema=SCHEMA),
              pa.table({"k": [2, 3], "p": ["b", "a"], "v": [5, 6], "s": [0, 0]}, schema=SCHEMA)]
    src = tmp_path / "src"
    src.mkdir()
    for i, t in enumerate(tables):
        path = src / f"f{i}.{fmt}"
        if fmt == "csv":
            csv.write_csv(t, path)
        elif fmt == "orc":
            orc.write_table(t, path)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in t.to_pylist()))
    catalog = Catalog(warehouse)
    opts = table_options("partial-update", 2, False)
    ref = catalog.create_table("db.ref", SCHEMA, primary_keys=["k"], options=opts)
    out = catalog.create_table("db.out", SCHEMA, primary_keys=["k"], options=opts)
    engine_write(ref, tables)
    write_job(spark, warehouse, "db.out", src, fmt, parallelism=2)
    assert content(out) == content(ref) == [(1, "a", 3, 0), (2, "b", 5, 0), (3, "a", 6, 0)]


def test_an_s3_source(spark, warehouse, s3_bucket, s3_options):
    from table_engine.io.file_io import file_io_for

    src = f"s3://{s3_bucket}/filewrite-src"
    fio = file_io_for(src, s3_options)
    for i in range(3):
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table({"k": [i, i + 1], "p": ["a", "a"], "v": [i, i], "s": [0, 0]}, schema=SCHEMA), sink)
        fio.write_bytes(f"{src}/part-{i}.parquet", sink.getvalue().to_pybytes())
    out = Catalog(warehouse).create_table("db.out", SCHEMA, primary_keys=["k"], options={"bucket": "2"})
    res = write_job(spark, warehouse, "db.out", src, catalog_options=s3_options)
    assert content(out) == [(0, "a", 0, 0), (1, "a", 1, 0), (2, "a", 2, 0), (3, "a", 2, 0)]
    assert res["snapshot_id"] == 1


def test_a_repeated_job_commits_nothing_new_and_an_append_table_gets_every_row(spark, warehouse, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    t = pa.table({"k": list(range(40)), "p": ["a"] * 40, "v": list(range(40)), "s": [0] * 40}, schema=SCHEMA)
    for i in range(4):
        pq.write_table(t.slice(10 * i, 10), src / f"part-{i}.parquet", row_group_size=3)
    out = Catalog(warehouse).create_table("db.app", SCHEMA)
    first = write_job(spark, warehouse, "db.app", src, commit_user="job-1")
    again = write_job(spark, warehouse, "db.app", src, commit_user="job-1")
    assert again["already_committed"] and again["snapshot_id"] == first["snapshot_id"]
    assert out.latest_snapshot_id() == first["snapshot_id"]
    assert content(out) == sorted(tuple(r.values()) for r in t.to_pylist())


def test_a_failing_task_leaves_the_table_unchanged(spark, warehouse, tmp_path):
    """The second task fails on a null key near the end of its file (found in the task, not by the driver's look
    at the footers), after the first task has written its file: the driver deletes it, nothing is committed."""
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"k": [1], "p": ["a"], "v": [1], "s": [0]}, schema=SCHEMA), src / "a.parquet")
    n = 300_000
    keys = pa.array([*range(n - 1), None], pa.int64())
    pq.write_table(pa.table({"k": keys, "p": pa.array(["a"] * n), "v": keys, "s": keys}), src / "b.parquet",
                   row_group_size=50_000)
    out = Catalog(warehouse).create_table("db.out", SCHEMA, primary_keys=["k"], options={"bucket": "2"})
    runs = ((file_write.FileSplit(str(src / "a.parquet"), (0,), 1),),
            (file_write.FileSplit(str(src / "b.parquet"), tuple(range(6)), n),))
    plan = file_write.FileWritePlan("parquet", {}, runs, (0, 1), SCHEMA)
    with pytest.raises(Exception, match="null"):
        file_write.write_files(spark, out, plan, overwrite=False, commit_user=CommitUser("u"),
                               identifier=BATCH_COMMIT_IDENTIFIER)
    assert out.latest_snapshot_id() is None and data_files(out) == []


def test_a_source_column_the_table_lacks_is_a_one_line_error(spark, warehouse, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"k": [1], "p": ["a"], "v": [1], "s": [0], "extra": [1]}), src / "a.parquet")
    out = Catalog(warehouse).create_table("db.out", SCHEMA, primary_keys=["k"], options={"bucket": "2"})
    with pytest.raises(SchemaMismatchError) as e:
        write_job(spark, warehouse, "db.out", src)
    assert "\n" not in str(e.value) and "a.parquet" in str(e.value) and "extra" in str(e.value)
    assert out.latest_snapshot_id() is None and data_files(out) == []


def test_runs_are_contiguous_and_their_sequence_ranges_disjoint(warehouse, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        pq.write_table(pa.table({"k": list(range(10)), "p": ["a"] * 10, "v": [i] * 10, "s": [0] * 10},
                                schema=SCHEMA), src / f"part-{i}.parquet", row_group_size=4)
    table = Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "2"})
    plan = file_write.plan_file_write(table, "parquet", str(src), {}, 4)
    assert plan is not None and plan.rows == 30 and len(plan.runs) == 4
    order = [(s.path, g) for run in plan.runs for s in run for g in s.row_groups or ()]
    assert order == [(f"{src}/part-{i}.parquet", g) for i in range(3) for g in range(3)]
    sizes = [sum(s.rows for s in run) for run in plan.runs]
    assert list(plan.first_sequence) == [sum(sizes[:i]) for i in range(4)]
    assert file_write.refusal(table, "parquet", {}) is None
    assert "reader options" in str(file_write.refusal(table, "csv", {"sep": ";"}))


def test_a_dynamic_bucket_plan_has_every_task_read_every_split(warehouse, tmp_path):
    """Dynamic buckets: one run of all splits, read by each of N tasks (no sequence floors); each row is kept by
    exactly one task, the one its key routes to; changes into such a table keep the DataFrame route."""
    from table_engine.spark.datasource.writer import task_routes

    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        pq.write_table(pa.table({"k": list(range(10)), "p": ["a"] * 10, "v": [i] * 10, "s": [0] * 10},
                                schema=SCHEMA), src / f"part-{i}.parquet", row_group_size=4)
    catalog = Catalog(warehouse)
    for name, keys, parts in (("db.dyn", ["k", "p"], ["p"]), ("db.cross", ["k"], ["p"])):
        table = catalog.create_table(name, SCHEMA, primary_keys=keys, partition_keys=parts, options={"bucket": "-1"})
        assert file_write.refusal(table, "parquet", {}) is None
        assert "dynamic bucket" in str(file_write.refusal(table))
        plan = file_write.plan_file_write(table, "parquet", str(src), {}, 3)
        assert plan is not None and plan.route_tasks == 3 and plan.first_sequence == (0, 0, 0)
        assert len(plan.runs) == 1 and plan.rows == 30
        kept = [list(file_write._read_routed_run(plan, table.schema, i)) for i in range(3)]
        rows = sorted(r for task in kept for data, _ in task for r in zip(*data.to_pydict().values()))
        assert rows == sorted((k, "a", i, 0) for i in range(3) for k in range(10))
        for i, task in enumerate(kept):
            assert all((task_routes(table.schema, data, 3) == i).all() for data, _ in task)


@pytest.mark.parametrize("cross", [False, True])
def test_routed_writes_onto_existing_keys_equal_the_engines_writes(spark, warehouse, tmp_path, cross):
    """A second file-route write into a dynamic-bucket (or cross-partition upsert) table with committed keys
    (updates, keys moving partition, new keys; small buckets so that tasks share existing ones) equals the engine's
    own two writes."""
    rng = np.random.default_rng(7)
    keys, parts = (["k"], ["p"]) if cross else (["k", "p"], ["p"])
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "7", "merge-engine": "deduplicate"}
    catalog = Catalog(warehouse)
    ref = catalog.create_table("db.ref", SCHEMA, primary_keys=keys, partition_keys=parts, options=opts)
    out = catalog.create_table("db.out", SCHEMA, primary_keys=keys, partition_keys=parts, options=opts)
    for n in range(2):
        rows = 60 + 40 * n
        t = pa.table({"k": rng.integers(0, 70, rows), "p": rng.choice(["a", "b"], rows), "v": rng.integers(0, 9, rows),
                      "s": [n] * rows}, schema=SCHEMA)
        src = tmp_path / f"src{n}"
        src.mkdir()
        for i in range(3):
            pq.write_table(t.slice(i * rows // 3, rows // 3 + (rows if i == 2 else 0)), src / f"f{i}.parquet",
                           row_group_size=9)
        writer = ref.new_write()
        writer.write(t)
        ref.new_commit("reference").commit(writer.prepare_commit(), n + 1)
        write_job(spark, warehouse, "db.out", src, parallelism=3)
        assert content(out) == content(ref)


def test_consume_changelog_into_a_target_table_through_tasks(spark, warehouse, caplog):
    """The changes (inserts, updates, deletes over several snapshots) reach the target through tasks that read the
    change splits with the engine: the target ends equal to the source, run after run, nothing logged as routed
    through Spark rows."""
    from table_engine.ops import ConsumeChangelog

    catalog = Catalog(warehouse)
    src = catalog.create_table("db.src", SCHEMA, primary_keys=["k"], options={"bucket": "3"})
    dst = catalog.create_table("db.dst", SCHEMA, primary_keys=["k"], options={"bucket": "2"})

    def commit(rows: list[tuple[int, int]], kinds: list[str] | None = None) -> None:
        w = src.new_write()
        w.write(pa.table({"k": [r[0] for r in rows], "p": ["a"] * len(rows), "v": [r[1] for r in rows],
                          "s": [0] * len(rows)}, schema=SCHEMA), kinds)
        src.new_commit("src").commit(w.prepare_commit(), (src.latest_snapshot_id() or 0) + 1)

    commit([(i, i) for i in range(30)])
    commit([(i, -i) for i in range(0, 30, 3)])
    consume = ConsumeChangelog(warehouse=warehouse, table="db.src", consumer_id="c", target_table="db.dst")
    with caplog.at_level("INFO", logger="table_engine.spark.jobs.run"):
        out = run_spark_job(consume, spark)
    assert "through Spark rows" not in caplog.text
    assert out["to_snapshot"] == src.latest_snapshot_id() and content(dst) == content(src)
    commit([(i, 0) for i in range(5)], ["-D"] * 5)
    commit([(100, 1), (7, 70)])
    run_spark_job(consume, spark)
    assert content(dst) == content(src) and len(content(dst)) == 26
