"""OpenLineage of the operators (paimon_provider.utils.lineage): dataset names, what each command reads and writes, the
facets after a run, the Spark hand-off of the parent run, and the ``paimon://`` Asset converter. The DAG runs that
emit real events are in tests/dags/test_lineage_dags.py."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import stat
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from paimon_provider.hooks import spark as spark_hook_module
from paimon_provider.utils import lineage
from paimon_provider.utils.lineage import LineageIO, PathRef, TableRef, command_io

from table_engine import ops

W = "s3://bucket/wh/"


def test_names_join_paimons_flink_lineage() -> None:
    assert lineage.dataset_namespace(W) == "s3://bucket/wh"
    assert lineage.dataset_name("dwd.orders") == "paimon.dwd.orders"
    assert lineage.dataset_name("orders") == "paimon.default.orders"
    assert lineage.dataset_name("dwd.orders$branch_audit") == "paimon.dwd.orders$branch_audit"
    assert lineage.table_path(W, "dwd.orders$branch_audit") == "s3://bucket/wh/dwd.db/orders"


@pytest.mark.parametrize(("uri", "expected"), [
    ("s3://bucket/wh/dwd.db/t", ("s3://bucket", "wh/dwd.db/t")),
    ("s3a://bucket/wh", ("s3://bucket", "wh")),
    ("hdfs://nn:8020/wh/t", ("hdfs://nn:8020", "/wh/t")),
    ("file:///data/wh", ("file", "/data/wh")),
    ("/data/wh", ("file", "/data/wh")),
])
def test_locations_follow_openlineages_naming(uri: str, expected: tuple[str, str]) -> None:
    assert lineage.location(uri) == expected


def sample_commands() -> dict[str, ops.Command]:
    """One command of each registered name (a new command must be given here, and so its lineage decided)."""
    base = {"warehouse": W, "table": "db.t"}
    return {c.name: c for c in (
        ops.Write(**base, source="s3://landing/b1", mode="overwrite"), ops.Compact(**base),
        ops.ExpireSnapshots(**base), ops.CreateTag(**base, tag="x"), ops.ExpireTags(**base),
        ops.ExpirePartitions(**base), ops.RemoveOrphanFiles(**base), ops.Rollback(**base, snapshot=2),
        ops.ConsumeChangelog(**base, consumer_id="c", target_table="db.u"), ops.DeleteTag(**base, tag="x"),
        ops.DropPartitions(**base, partitions=({"dt": "a"},)), ops.RewriteFileIndex(**base),
        ops.Rescale(**base, bucket_num=2), ops.CheckTable(**base, checks=({"check": "row_count", "min": 1},)),
        ops.CreateBranch(**base, branch="b", tag="x"), ops.DeleteBranch(**base, branch="b"),
        ops.RenameBranch(**base, branch="b", to="c"), ops.FastForward(**base, branch="b"), ops.Health(**base),
        ops.History(**base),
        ops.MarkPartitionDone(**base, partitions=({"dt": "a"},)), ops.ExpireChangelogs(**base),
        ops.ClearConsumers(**base), ops.ResetConsumer(**base, consumer_id="c"), ops.CompactManifest(**base),
        ops.RemoveUnexistingFiles(**base, remove=True), ops.Repair(**base), ops.Maintain(**base),
        ops.CompactDatabase(warehouse=W, table="db"), ops.RefreshObjectTable(**base),
        ops.Delete(**base, where=(("id", "=", 1),)), ops.Update(**base, set_values={"v": 1}),
        ops.MergeInto(**base, source_table="db.s", on=("id",), when_matched=({"action": "delete"},)),
        ops.AlterTable(**base, changes=({"action": "drop-column", "name": "c"},)),
        ops.Clone(**base, target_warehouse="/copy"), ops.MigrateTable(**base, source="/data/hive/t"),
        ops.MigrateDatabase(warehouse=W, table="db"))}


def names(refs: tuple[Any, ...]) -> list[str]:
    return [r.table if isinstance(r, TableRef) else r.uri for r in refs]


def test_every_command_says_what_it_reads_and_writes() -> None:
    samples = sample_commands()
    assert set(samples) == set(ops.REGISTRY)
    committed = {"snapshot_id": 7, "schema_id": 2,
                 "commit": {"added_rows": 3, "added_files": 1, "added_bytes": 100}}
    io = {name: command_io(cmd, committed) for name, cmd in samples.items()}
    assert {n: (names(i.inputs), names(i.outputs)) for n, i in io.items()} == {
        "write": (["s3://landing/b1"], ["db.t"]),
        "compact": ([], ["db.t"]), "expire-snapshots": ([], ["db.t"]), "create-tag": ([], ["db.t"]),
        "expire-tags": ([], ["db.t"]), "expire-partitions": ([], ["db.t"]), "remove-orphan-files": ([], ["db.t"]),
        "rollback": ([], ["db.t"]), "consume-changelog": (["db.t"], ["db.u"]), "delete-tag": ([], ["db.t"]),
        "drop-partitions": ([], ["db.t"]), "rewrite-file-index": ([], ["db.t"]), "rescale": ([], ["db.t"]),
        "check": (["db.t"], []), "create-branch": (["db.t"], ["db.t$branch_b"]),
        "delete-branch": ([], ["db.t$branch_b"]), "rename-branch": ([], ["db.t$branch_c"]),
        "fast-forward": (["db.t$branch_b"], ["db.t"]), "health": (["db.t"], []), "history": (["db.t"], []),
        "mark-partition-done": ([], ["db.t"]),
        "expire-changelogs": ([], ["db.t"]), "clear-consumers": ([], ["db.t"]), "reset-consumer": ([], ["db.t"]),
        "compact-manifest": ([], ["db.t"]), "remove-unexisting-files": ([], ["db.t"]), "repair": ([], ["db.t"]),
        "maintain": ([], ["db.t"]), "compact-database": ([], []), "refresh-object-table": ([], ["db.t"]),
        "delete": ([], ["db.t"]), "update": ([], ["db.t"]), "merge-into": (["db.s"], ["db.t"]),
        "alter-table": ([], ["db.t"]),
        "clone": (["db.t"], []), "migrate-table": (["/data/hive/t"], ["db.t"]),
        "migrate-database": ([], [])}
    lifecycles = {n: [r.lifecycle for r in i.outputs if isinstance(r, TableRef) and r.lifecycle]
                  for n, i in io.items()}
    assert {n: v[0] for n, v in lifecycles.items() if v} == {
        "write": "OVERWRITE", "expire-partitions": "TRUNCATE", "rollback": "OVERWRITE", "drop-partitions": "TRUNCATE",
        "create-branch": "CREATE", "delete-branch": "DROP", "rename-branch": "RENAME", "fast-forward": "OVERWRITE",
        "remove-unexisting-files": "TRUNCATE", "refresh-object-table": "OVERWRITE", "alter-table": "ALTER",
        "migrate-table": "CREATE"}
    renamed = io["rename-branch"].outputs[0]
    assert isinstance(renamed, TableRef) and renamed.previous == "db.t$branch_b"
    # nothing committed (a dry run, nothing expired): no lifecycle change; no result (start, failure): none either
    assert command_io(samples["expire-partitions"], {"snapshot_id": None}).outputs == (TableRef("db.t"),)
    assert command_io(samples["delete-branch"], None).outputs == (TableRef("db.t$branch_b"),)
    assert command_io(samples["alter-table"], {"schema_id": 3}).outputs == (TableRef("db.t", lifecycle="ALTER"),)
    consumed = command_io(samples["consume-changelog"], {"to_snapshot": 5, "target_snapshot_id": 9, "commit": {}})
    assert consumed == LineageIO((TableRef("db.t", 5),), (TableRef("db.u", 9, columns_from="db.t"),))
    to_files = command_io(ops.ConsumeChangelog(warehouse=W, table="db.t", consumer_id="c", output="/out"), None)
    assert to_files == LineageIO((TableRef("db.t"),), (PathRef("/out"),))
    # a database compaction: the tables it compacted (nothing to do: no snapshot)
    database = command_io(samples["compact-database"], {"snapshots": {"db.a": 4, "db.b": None}})
    assert database == LineageIO((), (TableRef("db.a", 4), TableRef("db.b")))


@pytest.fixture
def fake_spark_submit(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, paimon_conn: str) -> str:
    """A spark-submit on PATH answering with $FAKE_RESULT and its argv; ``db.t`` (two columns) exists."""
    import pyarrow as pa

    from table_engine import Catalog

    table = Catalog(paimon_conn).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    table.write(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    directory = tmp_path / "bin"
    directory.mkdir()
    script = directory / "spark-submit"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      "print(json.dumps({**json.loads(os.environ['FAKE_RESULT']), 'argv': sys.argv[1:]}))\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(spark_hook_module, "application_path", lambda: "/engine/app.py")
    return paimon_conn


def context() -> dict[str, Any]:
    from airflow.sdk.execution_time.context import OutletEventAccessors

    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    run = SimpleNamespace(conf={}, clear_number=0, logical_date=when, run_after=when)
    ti = SimpleNamespace(dag_id="d", task_id="t", run_id="manual__1", map_index=-1, try_number=1, logical_date=when,
                         dag_run=run, get_template_context=lambda: {"dag_run": run}, xcom_push=lambda **_: None)
    return {"ti": ti, "outlet_events": OutletEventAccessors()}


def test_operator_reports_start_and_complete(fake_spark_submit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_provider.operators import PaimonWriteOperator

    warehouse = fake_spark_submit
    facts = {"commit_kind": "APPEND", "added_rows": 2, "deleted_rows": 0, "added_files": 1, "added_bytes": 512}
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 1, "commit": facts}))
    op = PaimonWriteOperator(task_id="t", table="db.t", source="/landing/b1", openlineage_inject_parent_job_info=True)
    start = op.get_openlineage_facets_on_start()
    assert [(d.namespace, d.name) for d in start.inputs] == [("file", "/landing/b1")]
    (out,) = start.outputs
    assert (out.namespace, out.name) == (warehouse, "paimon.db.t")
    assert set(out.facets) == {"symlinks", "catalog"}  # before the run: nothing read from the warehouse
    assert out.facets["symlinks"].identifiers[0].name == f"{warehouse}/db.db/t"

    result = op.execute(context())  # type: ignore[arg-type]
    assert result is not None
    # the Spark hand-off: the job's conf names this task's OpenLineage run as its parent
    conf = dict(a.split("=", 1) for a, flag in zip(result["argv"][1:], result["argv"]) if flag == "--conf")
    assert conf["spark.openlineage.parentJobName"] == "d.t"
    assert {"spark.openlineage.parentRunId", "spark.openlineage.rootParentRunId",
            "spark.openlineage.rootParentJobName", "spark.openlineage.parentJobNamespace"} <= set(conf)

    (out,) = op.get_openlineage_facets_on_complete(None).outputs
    assert out.facets["version"].datasetVersion == "1"
    assert [(f.name, f.type) for f in out.facets["schema"].fields] == [("id", "BIGINT"), ("v", "STRING")]
    stats = out.outputFacets["outputStatistics"]
    assert (stats.rowCount, stats.fileCount, stats.size) == (2, 1, 512)
    assert "lifecycleStateChange" not in out.facets  # an append
    # a job that failed gave no result: the datasets, unread
    failed = PaimonWriteOperator(task_id="t", table="db.t", source="/x").get_openlineage_facets_on_failure(None)
    assert [d.name for d in failed.outputs] == ["paimon.db.t"] and "version" not in failed.outputs[0].facets


def test_failed_checks_report_their_assertions(fake_spark_submit: str) -> None:
    """The check job runs (the engine's CLI on the worker), two checks fail, the task fails: its FAIL event has the
    checked snapshot and each check as a data-quality assertion."""
    from airflow.sdk.exceptions import AirflowFailException
    from paimon_provider.operators import PaimonTableCheckOperator

    checks = [{"check": "row_count", "min": 1}, {"check": "row_count", "max": 1, "name": "at most one"},
              {"check": "values_in_set", "column": "v", "values": ["a"]}]
    op = PaimonTableCheckOperator(task_id="t", table="db.t", checks=checks)
    with pytest.raises(AirflowFailException, match="2 of 3 checks failed"):
        op.execute(context())  # type: ignore[arg-type]
    (checked,) = op.get_openlineage_facets_on_failure(None).inputs
    assert checked.name == "paimon.db.t" and checked.facets["version"].datasetVersion == "1"
    got = [(a.assertion, a.success, a.column, a.name) for a in checked.inputFacets["dataQualityAssertions"].assertions]
    assert got == [("row_count", True, None, "row_count"), ("row_count", False, None, "at most one"),
                   ("values_in_set", False, "v", "values_in_set(v)")]


def test_no_parent_info_unless_asked(fake_spark_submit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_provider.operators import PaimonCompactOperator

    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": None}))
    result = PaimonCompactOperator(task_id="t", table="db.t").execute(context())  # type: ignore[arg-type]
    assert result is not None and not any("spark.openlineage" in a for a in result["argv"])


def test_paimon_assets_convert_to_the_tables_dataset(paimon_conn: str) -> None:
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset
    from paimon_provider.utils.assets import table_asset

    dataset = translate_airflow_asset(table_asset("dwd.orders"), None)  # through the provider info's converter
    assert dataset is not None and (dataset.namespace, dataset.name) == (paimon_conn, "paimon.dwd.orders")
    assert set(dataset.facets) == {"symlinks", "catalog"}  # as a START event names a table: nothing read
    unknown = lineage.asset_to_openlineage(table_asset("dwd.orders", "no_such_conn"))
    assert (unknown.namespace, unknown.name) == ("paimon://no_such_conn", "paimon.dwd.orders")


def test_importing_the_provider_imports_no_openlineage() -> None:
    """Neither the OpenLineage client nor the provider's code beyond what Airflow itself loads (its provider
    info, read when Airflow starts)."""
    code = ("import sys, airflow.sdk\n"
            "before = {m for m in sys.modules if 'openlineage' in m}\n"
            "import paimon_provider.utils.lineage, paimon_provider.operators, paimon_provider.get_provider_info\n"
            "print(sorted(m for m in sys.modules if 'openlineage' in m and m not in before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_create_table_names_its_table_on_start_and_failure_as_on_complete(paimon_conn: str) -> None:
    from paimon_provider.operators import PaimonCreateTableOperator

    op = PaimonCreateTableOperator(task_id="c", table="dwd.orders", columns={"id": "BIGINT"})
    for lineage_of in (op.get_openlineage_facets_on_start, lambda: op.get_openlineage_facets_on_failure(None)):
        started = lineage_of()
        assert [(d.namespace, d.name) for d in started.outputs] == [(paimon_conn, "paimon.dwd.orders")]
        assert not started.inputs and "schema" not in started.outputs[0].facets  # the warehouse is not read
    op.execute(context())  # type: ignore[arg-type]
    done = op.get_openlineage_facets_on_complete(None)
    assert [(d.namespace, d.name) for d in done.outputs] == [(paimon_conn, "paimon.dwd.orders")]
    assert done.outputs[0].facets["lifecycleStateChange"].lifecycleStateChange.value == "CREATE"


def test_reading_through_the_table_hook_reports_the_table_to_hook_lineage(paimon_conn: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a ``@task`` reading a table names as its input (the OpenLineage provider's plugin turns the collector
    on; the lake's ADS task in tests/dags/test_lineage_dags.py shows it end to end)."""
    import pyarrow as pa
    from airflow.sdk import lineage as sdk_lineage
    from paimon_provider.hooks.table import PaimonTableHook

    from table_engine import Catalog

    collector = sdk_lineage.HookLineageCollector()
    monkeypatch.setattr(sdk_lineage, "get_hook_lineage_collector", lambda: collector)
    Catalog(paimon_conn).create_table("dws.user_daily", pa.schema([("id", pa.int64())]))
    PaimonTableHook().read("dws.user_daily")
    PaimonTableHook(warehouse=paimon_conn).read("dws.user_daily")  # an explicit warehouse: no Asset names it
    assert [i.asset.uri for i in collector.collected_assets.inputs] == ["paimon://paimon_default/dws/user_daily"]
