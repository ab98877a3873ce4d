"""Spark jobs run in the shared session: distributed compaction, and the task-side Arrow thread pool."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError
from table_engine.spark.jobs.run import compact_table, task_arrow_threads

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def test_compaction_tasks_run_buckets_in_parallel_and_commit_once(spark, warehouse):
    table = Catalog(warehouse).create_table("db.c", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "4", "write-only": "true"})
    for k in range(3):
        ids = list(range(k * 50, k * 50 + 100))
        table.write(pa.table({"id": ids, "v": [f"w{k}"] * len(ids)}, schema=SCHEMA))
    expected = table.read().sort_by("id")
    before = table.latest_snapshot_id()
    sid = compact_table(spark, table, full=True)
    assert sid == before + 1 and str(table.snapshot(sid).commit_kind) == "COMPACT"
    assert table.read().sort_by("id").equals(expected)
    assert {f.level for s in table.plan() for f in s.files} == {table.options.num_levels() - 1}
    assert compact_table(spark, table, full=True) is None                # nothing left to compact


def test_compaction_job_takes_only_the_given_buckets(spark, warehouse):
    table = Catalog(warehouse).create_table("db.cb", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "4", "write-only": "true"})
    for k in range(2):
        ids = list(range(k * 50, k * 50 + 100))
        table.write(pa.table({"id": ids, "v": [f"w{k}"] * len(ids)}, schema=SCHEMA))
    before = table.latest_snapshot_id()
    with pytest.raises(CommandError, match=r"buckets '2-4': '2-4' is out of range \[0, 4\)"):
        compact_table(spark, table, full=True, buckets="2-4")
    assert table.latest_snapshot_id() == before
    assert compact_table(spark, table, full=True, buckets="1,3") is not None
    top = table.options.num_levels() - 1
    assert {s.bucket for s in table.plan() if {f.level for f in s.files} == {top}} == {1, 3}
    assert compact_table(spark, table, full=True, buckets="1,3") is None  # converged


def test_compaction_tasks_compact_append_tables_per_partition(spark, warehouse):
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    table = Catalog(warehouse).create_table("db.ods", schema, partition_keys=["dt"],
                                            options={"bucket": "-1", "write-only": "true"})
    for k in range(10):
        table.write(pa.table({"id": [k], "dt": ["a" if k % 2 else "b"]}, schema=schema))
    sid = compact_table(spark, table)                                    # 5 small files in each partition
    assert sid == 11 and str(table.snapshot(sid).commit_kind) == "COMPACT"
    assert sorted(len(s.files) for s in table.plan()) == [1, 1]
    assert sorted(table.read().column("id").to_pylist()) == list(range(10))
    assert compact_table(spark, table) is None


def test_tasks_size_arrows_pool_to_their_cores(spark):
    import pyarrow as pa

    driver = pa.cpu_count()
    in_tasks = spark.sparkContext.parallelize(range(2), 2).map(lambda _: task_arrow_threads()).collect()
    assert in_tasks == [1, 1]                                            # spark.task.cpus = 1
    assert task_arrow_threads() == driver == pa.cpu_count()              # outside a task: unchanged


def test_compaction_job_types_its_partition_specs(spark, warehouse):
    import datetime
    import hashlib
    import os
    import pathlib

    from table_engine.errors import PartitionSpecError

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("d", pa.date32(), nullable=False),
                        pa.field("v", pa.string())])
    table = Catalog(warehouse).create_table("db.p", schema, primary_keys=["id", "d"], partition_keys=["d"],
                                            options={"bucket": "2", "write-only": "true"})
    days = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)]
    for k in range(2):
        table.write(pa.table({"id": [1, 2, 3, 4], "d": [days[0], days[0], days[1], days[1]], "v": [f"w{k}"] * 4},
                             schema=schema))

    def digest() -> dict[str, str]:
        return {os.path.join(r, n): hashlib.sha256(pathlib.Path(r, n).read_bytes()).hexdigest()
                for r, _, names in os.walk(table.path) for n in names}

    before = digest()
    with pytest.raises(PartitionSpecError, match="'d'.*'notadate'"):
        compact_table(spark, table, full=True, partitions="d=notadate")
    with pytest.raises(PartitionSpecError, match="'d=2024-01-03' matches no partition"):
        compact_table(spark, table, full=True, partitions=[{"d": "2024-01-03"}])
    assert digest() == before
    assert compact_table(spark, table, full=True, partitions="d=2024-01-02") is not None
    top = table.options.num_levels() - 1
    assert {s.partition_values: {f.level for f in s.files} for s in table.plan()} == {
        (days[0],): {0}, (days[1],): {top}}


def test_the_spark_write_job_commits_as_commit_user_prefix_says(spark, warehouse, tmp_path):
    """``commit.user-prefix`` applies to the application's write (no ``--commit-user``): the one commit-user rule."""
    import pyarrow.parquet as pq

    from table_engine.ops import Write
    from table_engine.spark.jobs.run import run_spark_job

    Catalog(warehouse).create_table("db.w", SCHEMA, primary_keys=["id"],
                                    options={"bucket": "2", "commit.user-prefix": "nightly-"})
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA), src / "part-0.parquet")
    out = run_spark_job(Write(warehouse=warehouse, table="db.w", source=str(src)), spark)
    table = Catalog(warehouse).get_table("db.w")
    assert out["snapshot_id"] == 1 and out["rows"] == 3 and table.read().num_rows == 3
    assert table.snapshot(1).commit_user.startswith("nightly-")


def test_spark_compaction_and_writes_pass_the_capability_gate_before_any_task(spark, warehouse):
    """A table whose schema declares a feature the engine can read but not maintain (a bucket function other than the
    default, as Paimon 1.3+ writes it): the Spark compaction and write_dataframe refuse on the driver, and no file
    changes."""
    import json
    import pathlib

    from table_engine.errors import UnsupportedTableFeatureError
    from table_engine.spark.jobs.run import write_dataframe
    from tests.table_engine.test_cli_errors import state

    table = Catalog(warehouse).create_table("db.rt", SCHEMA, options={"bucket": "-1"})
    table.write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    table.write(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA))
    schema_file = pathlib.Path(table.path) / "schema" / "schema-0"
    data = json.loads(schema_file.read_text())
    data["options"]["bucket-function.type"] = "mod"
    schema_file.write_text(json.dumps(data))
    table = Catalog(warehouse).get_table("db.rt")
    before = state(warehouse)
    with pytest.raises(UnsupportedTableFeatureError, match="uses bucket-function.type .* for maintain"):
        compact_table(spark, table, full=True)
    with pytest.raises(UnsupportedTableFeatureError, match="uses bucket-function.type .* for write"):
        write_dataframe(spark.createDataFrame([(4, "d")], "id long, v string"), warehouse, "db.rt")
    assert state(warehouse) == before
    assert sorted(table.read().column("id").to_pylist()) == [1, 2, 3]  # reads stay right


def test_the_spark_write_and_compaction_jobs_work_on_a_branch(spark, warehouse, tmp_path):
    """``--table db.t$branch_b1``: the Spark write and compaction commit to the branch; main is unchanged."""
    import pyarrow.parquet as pq

    from table_engine.ops import Compact, Write
    from table_engine.spark.jobs.run import run_spark_job

    table = Catalog(warehouse).create_table("db.br", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    table.write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    table.create_tag("t1")
    table.create_branch("b1", "t1")
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [2, 3], "v": ["x", "y"]}, schema=SCHEMA), src / "part-0.parquet")
    out = run_spark_job(Write(warehouse=warehouse, table="db.br$branch_b1", source=str(src)), spark)
    assert out["snapshot_id"] == 2
    assert run_spark_job(Compact(warehouse=warehouse, table="db.br$branch_b1", full=True), spark)["snapshot_id"] == 3
    branch = Catalog(warehouse).get_table("db.br$branch_b1")
    assert sorted(branch.read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "x"}, {"id": 3, "v": "y"}]
    assert table.latest_snapshot_id() == 1 and table.read().num_rows == 2
    import pathlib

    assert not list(pathlib.Path(warehouse).rglob("branch-b1/bucket-*"))  # data files in the table directory


def test_the_spark_jobs_stamp_their_snapshots_with_the_snapshot_properties(spark, warehouse, tmp_path):
    """``--snapshot-property`` on the Spark application's route: the write's and the compaction's snapshots (both
    committed on the driver) carry the run's properties; the run identity reads back through ``metadata()``."""
    import pyarrow.parquet as pq

    from table_engine.ops import Compact, Write
    from table_engine.run_identity import RunIdentity
    from table_engine.spark.jobs.run import run_spark_job

    run = RunIdentity("d", "r", "t", map_index=0, try_number=3)
    table = Catalog(warehouse).create_table("db.sp", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA), src / "part-0.parquet")
    props = {**run.to_properties(), "team": "lake"}
    assert run_spark_job(Write(warehouse=warehouse, table="db.sp", source=str(src), snapshot_properties=props),
                         spark)["snapshot_id"] == 1
    run_spark_job(Write(warehouse=warehouse, table="db.sp", source=str(src)), spark)
    assert run_spark_job(Compact(warehouse=warehouse, table="db.sp", full=True, snapshot_properties=props),
                         spark)["snapshot_id"] == 3
    assert [table.snapshot(i).properties for i in (1, 2, 3)] == [props, None, props]
    assert [s.id for s in table.metadata().snapshots_of_run("r", dag_id="d")] == [1, 3]
    assert table.metadata().run_of(3) == run
