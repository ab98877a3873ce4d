"""Write-audit-publish end to end in ``dag.test()`` (docs/wap.md), the jobs run by the engine on the worker
(``LAPTOP_SPARK_CONF``): ``paimon_wap`` publishes a good batch (main has its rows, the branch and its tag are gone,
one Asset event on main from the fast-forward); a bad batch (duplicate keys, null ids) is stopped by the checks with
main byte-for-byte unchanged, the branch kept with the bad rows and the run failed naming the failed checks; a
commit on main after the branch was made stops the publication unless ``allow_main_moved``; a fast-forward whose
task is lost after it succeeded converges on its retry."""

from __future__ import annotations

import datetime
import os
import pathlib
from collections.abc import Callable
from typing import Any

import example_lake as sample
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowException
from paimon_provider.operators import PaimonFastForwardOperator
from paimon_provider.utils import wap
from paimon_streaming_lake import ODS_CHECKS

from tests import airflow_env
from tests.dags.test_lake_dags import asset_events
from tests.dags.test_s3_credentials import sync_to_db
from tests.table_engine.test_bad_input import warehouse_state

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(900)]

ODS = sample.ODS.name
ODS_URI = "paimon://paimon_default/ods/order_events"
CHECKS: list[dict[str, Any]] = [{"check": "row_count", "min": 1},
                                {"check": "no_duplicate_keys", "columns": ["order_id", "dt"]},
                                {"check": "null_fraction", "column": "order_id", "max": 0}]


@pytest.fixture
def laptop_lake(lake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        lake["warehouse"], spark_conf=sample.LAPTOP_SPARK_CONF))
    return lake


def states(dr: Any) -> dict[str, str]:
    return {ti.task_id.rsplit(".", 1)[-1]: str(ti.state) for ti in dr.get_task_instances()}


def main_state(warehouse: str) -> dict[str, str]:
    """The metadata of ods.order_events' main line: its snapshots, schemas, tags (data files and manifests are in
    directories the branches share: a branch's new ones are there too). Files only: the tag the branch was made
    from, deleted from main right after, leaves an empty ``tag/`` directory where there was none."""
    root = os.path.join(warehouse, "ods.db", "order_events")
    return {p: h for p, h in warehouse_state(root).items()
            if h != "dir" and p[len(root):].split(os.sep)[1] in ("snapshot", "schema", "tag", "consumer", "changelog")}


def main_unchanged(warehouse: str, before: dict[str, str], files_before: dict[str, str]) -> None:
    assert main_state(warehouse) == before
    now = warehouse_state(os.path.join(warehouse, "ods.db", "order_events"))
    assert all(now.get(p) == h for p, h in files_before.items())  # no file deleted or rewritten


def factory_dag(dag_id: str, tmp_path: pathlib.Path, source: str, *, allow_main_moved: bool = False,
                between: Callable[[], None] | None = None, checks: list[dict[str, Any]] = CHECKS,
                check_scope: str = "batch") -> Any:
    """A DAG of :func:`paimon_provider.utils.wap.write_audit_publish` on ods.order_events from ``source``; ``between``
    runs as a task after the checks, before the publication (another writer on main)."""
    from airflow.sdk import DAG, task

    with DAG(dag_id, schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False,
             default_args={"retries": 1, "retry_delay": datetime.timedelta(seconds=0)}) as dag:
        group = wap.write_audit_publish(ODS, source=source, checks=checks, allow_main_moved=allow_main_moved,
                                        check_scope=check_scope)
        if between is not None:
            other = task(task_id="another_writer")(between)()
            group.children[f"{group.group_id}.check_batch"] >> other >> group.children[f"{group.group_id}.publish"]
    sync_to_db(dag, tmp_path / "no-dags")
    return dag


def land(tmp_path: pathlib.Path, name: str, table: pa.Table) -> str:
    directory = tmp_path / name
    directory.mkdir()
    pq.write_table(table, directory / "part-0.parquet")
    return str(directory)


def test_good_batch_published_bad_batch_stopped(dagbag: Any, airflow_db: None, laptop_lake: dict[str, str],
                                                tmp_path: pathlib.Path, capfd: pytest.CaptureFixture[str],
                                                caplog: pytest.LogCaptureFixture) -> None:
    from table_engine import Catalog

    warehouse = laptop_lake["warehouse"]
    before = len(asset_events("paimon_wap"))
    dr = dagbag.dags["paimon_wap"].test(run_conf={"batch": 1, "landing_dir": laptop_lake["landing"]})
    assert str(dr.state) == "success", states(dr)
    ods = Catalog(warehouse).get_table(ODS)
    assert ods.read().num_rows == len(sample.order_event_rows(1))
    assert ods.list_branches() == [] and ods.tags() == []  # the audit branch and its tag are gone
    events = asset_events("paimon_wap")[before:]
    assert [uri for uri, _ in events] == [ODS_URI]
    extra = events[0][1]
    assert extra["command"] == "fast-forward" and extra["commit_kind"] == "APPEND"
    assert extra["snapshot_id"] == ods.latest_snapshot_id() and extra["added_rows"] == ods.read().num_rows

    # a bad batch: an order twice, an event without order id
    rows = sample.order_events(3).to_pylist()
    bad = pa.Table.from_pylist([*rows, rows[0], {**rows[1], "order_id": None}], schema=sample.order_events(3).schema)
    unchanged, files = main_state(warehouse), warehouse_state(os.path.join(warehouse, "ods.db", "order_events"))
    dag = factory_dag("paimon_wap_bad_batch", tmp_path, land(tmp_path, "bad", bad))
    capfd.readouterr()
    dr = dag.test()
    out = capfd.readouterr()
    assert str(dr.state) == "failed"
    assert states(dr) == {"open_audit_branch": "success", "write_batch": "success", "check_batch": "failed",
                          "publish": "upstream_failed", "delete_audit_branch": "upstream_failed",
                          "drop_audit_tag": "upstream_failed"}
    main_unchanged(warehouse, unchanged, files)
    branch = wap.audit_branch_name(dr.run_id)
    ods = Catalog(warehouse).get_table(ODS)
    assert ods.list_branches() == [branch]
    kept = ods.branch_table(branch).read()
    assert kept.num_rows == len(sample.order_event_rows(1)) + len(bad)
    assert kept.column("order_id").null_count == 1
    log = out.out + out.err
    assert "2 of 3 checks failed" in log and "no_duplicate_keys" in log and "null_fraction(order_id)" in log
    # check_batch's own log names the kept branch, right above the failure's two lines (not in a collapsed group)
    kept = f"write-audit-publish: main of {ODS} is unchanged and branch {branch} is kept for inspection"
    assert kept in log and log.index(kept) < log.index("2 of 3 checks failed")


def test_main_moved_refused_unless_allowed_and_a_lost_fast_forward_converges(
        airflow_db: None, laptop_lake: dict[str, str], tmp_path: pathlib.Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from table_engine import Catalog

    warehouse = laptop_lake["warehouse"]
    catalog = Catalog(warehouse)
    catalog.create_table(ODS, sample.order_events(1).schema, partition_keys=sample.ODS.partition_keys,
                         options=sample.ODS.options)
    catalog.get_table(ODS).write(sample.order_events(1))
    source = land(tmp_path, "batch2", sample.order_events(2))

    def another_writer() -> None:
        Catalog(warehouse).get_table(ODS).write(sample.order_events(3))

    dr = factory_dag("paimon_wap_main_moved", tmp_path, source, between=another_writer, checks=ODS_CHECKS).test()
    assert str(dr.state) == "failed" and states(dr)["publish"] == "failed", states(dr)
    ods = catalog.get_table(ODS)
    assert ods.read().num_rows == len(sample.order_event_rows(1)) + len(sample.order_event_rows(3))  # not lost
    assert ods.list_branches() == [wap.audit_branch_name(dr.run_id)]

    dr = factory_dag("paimon_wap_main_moved_allowed", tmp_path, source, allow_main_moved=True,
                     between=another_writer, checks=ODS_CHECKS).test()
    assert str(dr.state) == "success", states(dr)
    ods = catalog.get_table(ODS)  # as Paimon does: main is the branch, the other writer's commit is discarded
    assert ods.read().num_rows == len(sample.order_event_rows(1)) + len(sample.order_event_rows(2)) + \
        len(sample.order_event_rows(3))  # the first run's commit of batch 3 was before this branch was made

    class LostAfterFastForward(PaimonFastForwardOperator):
        def execute(self, context: Any) -> Any:
            result = super().execute(context)
            if context["ti"].try_number == 1:
                raise AirflowException(f"worker lost after the fast-forward {result}")
            return result

    monkeypatch.setattr(wap, "PaimonFastForwardOperator", LostAfterFastForward)
    rows_before = ods.read().num_rows
    before = len(asset_events("paimon_wap_retry"))
    dr = factory_dag("paimon_wap_retry", tmp_path, source, checks=ODS_CHECKS).test()
    assert str(dr.state) == "success", states(dr)
    publish = next(ti for ti in dr.get_task_instances() if ti.task_id.endswith(".publish"))
    assert publish.try_number == 2
    ods = catalog.get_table(ODS)
    assert ods.read().num_rows == rows_before + len(sample.order_event_rows(2))
    assert wap.audit_branch_name(dr.run_id) not in ods.list_branches()
    events = asset_events("paimon_wap_retry")[before:]
    assert [uri for uri, _ in events] == [ODS_URI] and events[0][1]["snapshot_id"] == ods.latest_snapshot_id()


def test_checks_see_the_batch_not_main_and_kept_branches_are_listed_and_deleted(
        dagbag: Any, airflow_db: None, laptop_lake: dict[str, str], tmp_path: pathlib.Path) -> None:
    """A bad row already in main does not block a good batch (the checks see the rows the batch adds), unless the
    table-wide scope is chosen; an empty batch on top of good data is stopped; ``paimon_audit_branches`` lists the
    kept branches and deletes them when asked, main unchanged."""
    from table_engine import Catalog

    warehouse = laptop_lake["warehouse"]
    catalog = Catalog(warehouse)
    catalog.create_table(ODS, sample.order_events(1).schema, partition_keys=sample.ODS.partition_keys,
                         options=sample.ODS.options)
    rows = sample.order_events(1).to_pylist()
    catalog.get_table(ODS).write(pa.Table.from_pylist([*rows, {**rows[0], "order_id": None}],
                                                      schema=sample.order_events(1).schema))
    good = land(tmp_path, "good", sample.order_events(2))

    dr = factory_dag("paimon_wap_batch_scope", tmp_path, good, checks=ODS_CHECKS).test()
    assert str(dr.state) == "success", states(dr)
    published = catalog.get_table(ODS).read().num_rows
    assert published == len(rows) + 1 + len(sample.order_event_rows(2))

    unchanged, files = main_state(warehouse), warehouse_state(os.path.join(warehouse, "ods.db", "order_events"))
    dr = factory_dag("paimon_wap_table_scope", tmp_path, land(tmp_path, "good3", sample.order_events(3)),
                     checks=ODS_CHECKS, check_scope="table").test()
    assert str(dr.state) == "failed" and states(dr)["check_batch"] == "failed", states(dr)
    kept = [wap.audit_branch_name(dr.run_id)]
    empty = land(tmp_path, "empty", sample.order_events(3).slice(0, 0))
    dr = factory_dag("paimon_wap_empty_batch", tmp_path, empty, checks=ODS_CHECKS).test()
    assert str(dr.state) == "failed" and states(dr)["check_batch"] == "failed", states(dr)
    kept.append(wap.audit_branch_name(dr.run_id))
    main_unchanged(warehouse, unchanged, files)
    assert sorted(catalog.get_table(ODS).list_branches()) == sorted(kept)

    listed = _audit_branches(dagbag, {"table": ODS, "older_than": None, "delete": False})
    assert sorted(b["branch"] for b in listed) == sorted(kept) and not any(b["deleted"] for b in listed)
    assert _audit_branches(dagbag, {"table": ODS, "older_than": "2000-01-01T00:00:00"}) == []
    assert sorted(catalog.get_table(ODS).list_branches()) == sorted(kept)
    deleted = _audit_branches(dagbag, {"table": ODS, "older_than": None, "delete": True})
    assert all(b["deleted"] for b in deleted) and len(deleted) == 2
    assert catalog.get_table(ODS).list_branches() == []
    main_unchanged(warehouse, unchanged, files)


def _audit_branches(dagbag: Any, conf: dict[str, Any]) -> list[dict[str, Any]]:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    dr = dagbag.dags["paimon_audit_branches"].test(run_conf=conf)
    assert str(dr.state) == "success", states(dr)
    with create_session() as session:
        (row,) = session.query(XComModel).filter(XComModel.dag_id == dr.dag_id, XComModel.run_id == dr.run_id,
                                                 XComModel.key == "return_value").all()
        result: list[dict[str, Any]] = XComModel.deserialize_value(row)
    return result


@pytest.mark.spark
@pytest.mark.slow  # the writes run as Spark jobs on S3 (~2 min): the driver-job sizing cannot list S3 objects
def test_on_s3(airflow_db: None, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, s3_server: Any,
               s3_warehouse: str, s3_options: dict[str, str]) -> None:
    """The same on the session's S3 server: a good batch published, a bad one stopped with main unchanged (its
    snapshot, schema and tag objects byte for byte) and the branch kept."""
    from table_engine import Catalog
    from table_engine.io.file_io import FileIO

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_s3_connection(
        s3_warehouse, s3_server.endpoint, spark_conf=sample.LAPTOP_SPARK_CONF))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    airflow_env.without_aws_environment(monkeypatch)
    catalog = Catalog(s3_warehouse, s3_options)
    catalog.create_table(ODS, sample.order_events(1).schema, partition_keys=sample.ODS.partition_keys,
                         options=sample.ODS.options)
    catalog.get_table(ODS).write(sample.order_events(1))

    dr = factory_dag("paimon_wap_s3_good", tmp_path, land(tmp_path, "good", sample.order_events(3)),
                     checks=ODS_CHECKS).test()
    assert str(dr.state) == "success", states(dr)
    ods = catalog.get_table(ODS)
    assert ods.read().num_rows == len(sample.order_event_rows(1)) + len(sample.order_event_rows(3))
    assert ods.list_branches() == [] and ods.tags() == []

    def main_objects() -> dict[str, bytes]:
        io: FileIO = ods.file_io
        return {st.path: io.read_bytes(st.path) for sub in ("snapshot", "schema", "tag")
                if io.exists(f"{ods.path}/{sub}") for st in io.list_status(f"{ods.path}/{sub}") if not st.is_dir}

    before, rows = main_objects(), ods.read()
    rows3 = sample.order_events(3).to_pylist()
    bad = pa.Table.from_pylist([*rows3, rows3[0], {**rows3[1], "order_id": None}],
                               schema=sample.order_events(3).schema)
    dr = factory_dag("paimon_wap_s3_bad", tmp_path, land(tmp_path, "bad", bad)).test()
    assert str(dr.state) == "failed" and states(dr)["check_batch"] == "failed", states(dr)
    ods = catalog.get_table(ODS)
    assert main_objects() == before and ods.read().equals(rows)
    assert ods.list_branches() == [wap.audit_branch_name(dr.run_id)]
    assert ods.branch_table(ods.list_branches()[0]).read().num_rows == rows.num_rows + bad.num_rows
