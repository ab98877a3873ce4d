"""Spark Connect as an execution mode (``spark={"connect": "sc://..."}``): one local Connect server per test session
(:mod:`table_engine.spark.connect_server`, loopback only); jobs run in the test's process as its clients.

An operator's write then a read-side job (tag, health) through Connect in a ``dag.test()`` run; the write's result
equals the spark-submit route's; a bad URL fails with one line naming it; an S3 job over Connect gets the
connection's credentials in memory: they appear in no argv and no log line (task log or server log)."""

from __future__ import annotations

import datetime
import logging
import pathlib
import socket
from collections.abc import Iterator
from typing import Any

import example_lake as sample
import pytest
from paimon_provider.hooks.spark import PaimonSparkHook
from paimon_provider.operators import PaimonCreateTagOperator, PaimonTableHealthOperator, PaimonWriteOperator
from paimon_provider.utils.job_spec import CONNECT_MODULE, SparkJobSpec

from table_engine import Catalog
from table_engine.ops import Write
from table_engine.spark import connect_server
from tests import airflow_env
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

_IGNORED = {"seconds"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def connect_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pathlib.Path]:
    home = tmp_path_factory.mktemp("spark-connect")
    try:
        yield home
    finally:
        connect_server.stop(home)


@pytest.fixture(scope="session")
def connect_url(connect_home: pathlib.Path) -> str:
    """One Spark Connect server for the test session (stopped at its end, even after a failure)."""
    return connect_server.start(connect_home, _free_port(), master="local[2]", timeout=120,
                                conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})


def write_command(warehouse: str, landing: pathlib.Path, **kw: Any) -> Write:
    return Write(warehouse=warehouse, table=sample.ODS.name, source=sample.write_batch(str(landing), 1),
                 format="parquet", create_if_missing=True, partition_keys=tuple(sample.ODS.partition_keys),
                 options=sample.ODS.options, commit_user="job-1", **kw)


def test_a_write_over_connect_equals_the_spark_submit_route(connect_url: str, paimon_conn: str,
                                                            tmp_path: pathlib.Path) -> None:
    hook = PaimonSparkHook()
    spec = SparkJobSpec(command=write_command(paimon_conn, tmp_path / "landing"), connect=connect_url)
    sub = hook.build_submission(spec)
    assert sub.route == "connect" and sub.argv == [] and sub.application == CONNECT_MODULE and sub.local
    over_connect = hook.submit(spec)
    other = str(tmp_path / "other")
    submitted = hook.submit(SparkJobSpec(command=write_command(other, tmp_path / "landing"),
                                         conf=sample.SMALL_LOCAL_SPARK_CONF))
    assert over_connect is not None and submitted is not None and over_connect["status"] == "ok"
    strip = {"added_bytes"}  # the files' bytes hold the write's own commit times
    assert ({k: v for k, v in over_connect.items() if k not in _IGNORED | {"commit"}}
            == {k: v for k, v in submitted.items() if k not in _IGNORED | {"commit"}})
    assert ({k: v for k, v in over_connect["commit"].items() if k not in strip}
            == {k: v for k, v in submitted["commit"].items() if k not in strip})
    rows = Catalog(paimon_conn).get_table(sample.ODS.name).read().sort_by("order_id")
    assert rows.equals(Catalog(other).get_table(sample.ODS.name).read().sort_by("order_id"))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Airflow's DAG folder scan (pathspec), as tests/dags
def test_an_operator_run_writes_then_tags_and_reads_over_connect(
        airflow_db: None, connect_url: str, paimon_conn: str, tmp_path: pathlib.Path,
        caplog: pytest.LogCaptureFixture) -> None:
    from airflow.sdk import DAG

    from tests.dags.test_s3_credentials import sync_to_db

    spark = {"connect": connect_url}
    with DAG("paimon_connect_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        write = PaimonWriteOperator(task_id="load", table=sample.ODS.name, spark=spark,
                                    source=sample.write_batch(str(tmp_path / "landing"), 1),
                                    partition_keys=list(sample.ODS.partition_keys), table_options=sample.ODS.options)
        tag = PaimonCreateTagOperator(task_id="tag", table=sample.ODS.name, tag="t1", spark={**spark,
                                                                                             "runner": "spark"})
        health = PaimonTableHealthOperator(task_id="health", table=sample.ODS.name, spark=spark)
        write >> tag >> health
    sync_to_db(dag, tmp_path / "no-dags")
    with caplog.at_level(logging.INFO):
        dr = dag.test()
    assert {ti.task_id: str(ti.state) for ti in dr.get_task_instances()} == {
        "load": "success", "tag": "success", "health": "success"}
    table = Catalog(paimon_conn).get_table(sample.ODS.name)
    assert table.read().num_rows == len(sample.order_event_rows(1)) and "t1" in table.list_tags()
    assert "write ods.order_events: starting on Spark Connect server sc://127.0.0.1:" in caplog.text


def test_a_bad_url_fails_in_one_line_naming_it(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    from airflow.sdk.exceptions import AirflowException

    hook = PaimonSparkHook()
    closed = f"sc://127.0.0.1:{_free_port()}"
    with pytest.raises(AirflowException) as e:
        hook.submit(SparkJobSpec(command=write_command(paimon_conn, tmp_path / "landing"), connect=closed))
    assert e.value.__class__.__name__ == "JobFailedError"
    reason = getattr(e.value, "reason", "")
    assert closed in reason and "not reachable" in reason and "\n" not in reason
    with pytest.raises(ValueError, match="'http://x:1' is not sc://host"):
        hook.build_submission(SparkJobSpec(command=write_command(paimon_conn, tmp_path / "l"), connect="http://x:1"))


def test_an_s3_job_over_connect_keeps_its_credentials_out_of_argv_and_logs(
        monkeypatch: pytest.MonkeyPatch, connect_url: str, connect_home: pathlib.Path, tmp_path: pathlib.Path,
        s3_server: S3Server, s3_warehouse: str, s3_options: dict[str, str],
        caplog: pytest.LogCaptureFixture) -> None:
    airflow_env.without_aws_environment(monkeypatch)
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_s3_connection(s3_warehouse,
                                                                                       s3_server.endpoint))
    hook = PaimonSparkHook()
    spec = SparkJobSpec(command=write_command(s3_warehouse, tmp_path / "landing"), connect=connect_url)
    sub = hook.build_submission(spec)
    assert sub.route == "connect"
    assert not any(secret in f"{sub.argv} {sub.command.to_json()} {sub.conf}" for secret in (ACCESS_KEY, SECRET_KEY))
    with caplog.at_level(logging.DEBUG):
        result = hook.submit(spec)
    assert result is not None and result["status"] == "ok" and result["snapshot_id"] == 1
    assert Catalog(s3_warehouse, s3_options).get_table(sample.ODS.name).read().num_rows == len(
        sample.order_event_rows(1))
    server_log = "".join(p.read_text(errors="replace") for p in connect_server.log_dir(connect_home).iterdir())
    for secret in (SECRET_KEY, ACCESS_KEY):
        assert secret not in caplog.text and secret not in server_log


def test_the_server_listens_on_loopback_and_a_second_start_reuses_it(connect_url: str,
                                                                     connect_home: pathlib.Path) -> None:
    pid = connect_server.running_pid(connect_home)
    port = int(connect_url.rsplit(":", 1)[1])
    assert pid is not None and connect_server.answers(port)
    assert connect_server.start(connect_home, port, master="local[2]", timeout=5) == connect_url
    assert connect_server.running_pid(connect_home) == pid
    assert connect_server.start(connect_home, timeout=5) == connect_url  # the home's recorded port
    listening = [line.split() for name in ("tcp", "tcp6")
                 for line in pathlib.Path(f"/proc/net/{name}").read_text().splitlines()[1:]]
    addresses = {f[1].split(":")[0] for f in listening if f[3] == "0A" and f[1].endswith(f":{port:04X}")}  # LISTEN
    loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
    assert addresses and addresses <= loopback, addresses


def test_jobs_of_one_url_share_a_server_session_unless_the_url_names_one() -> None:
    import uuid

    from table_engine.spark.app import shared_session_url

    shared = shared_session_url("sc://127.0.0.1:15002")
    assert shared == shared_session_url("sc://127.0.0.1:15002/") != shared_session_url("sc://127.0.0.1:15003")
    assert uuid.UUID(shared.split("session_id=")[1]).version == 4
    assert shared_session_url("sc://h:1/;token=t").startswith("sc://h:1/;token=t;session_id=")
    assert shared_session_url("sc://h:1/;session_id=x") == "sc://h:1/;session_id=x"


def test_a_spark_connect_connection_routes_jobs_and_passes_the_test_button(
        monkeypatch: pytest.MonkeyPatch, connect_url: str, paimon_conn: str, tmp_path: pathlib.Path) -> None:
    import json

    from paimon_provider.hooks.table import PaimonTableHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark_connect", "host": connect_url,
                                                                 "password": "tok3n"}))
    sub = PaimonSparkHook().build_submission(SparkJobSpec(command=write_command(paimon_conn, tmp_path / "l")))
    assert sub.route == "connect" and sub.master == connect_url and "tok3n" in str(sub.connect_url)
    assert "tok3n" not in repr(sub)
    pathlib.Path(paimon_conn).mkdir(parents=True)
    ok, message = PaimonTableHook().test_connection()
    assert ok and f"{connect_url} (a Spark Connect server, answering)" in message and "tok3n" not in message, message


@pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")
def test_a_partition_sorted_in_ranges_over_connect(connect_url: str, tmp_path: pathlib.Path) -> None:
    """The range-partitioned sort (a Spark range repartition, the Arrow batch size set for the job and restored)
    runs on a Connect session as on a classic one."""
    import os

    import pyarrow as pa

    from table_engine.spark.app import connect_session
    from table_engine.spark.compat import CONNECT_CLIENT_ENV
    from table_engine.spark.jobs import compact_job
    from table_engine.store.compaction.sort_compact import SortOrder

    schema = pa.schema([("a", pa.int64()), ("b", pa.int64())])
    table = Catalog(str(tmp_path / "wh")).create_table("db.t", schema, options={
        "bucket": "-1", "write-only": "true", "target-file-size": "8 kb"})
    for i in range(4):
        table.write(pa.table({"a": [(j * 7919 + i) % 5003 for j in range(1500)], "b": list(range(1500))},
                             schema=schema))
    before = sorted(table.read().to_pylist(), key=lambda r: (r["a"], r["b"]))
    saved = {name: os.environ.get(name) for name in CONNECT_CLIENT_ENV}
    spark = connect_session(connect_url, "range-sort-test")
    try:
        report = compact_job.run_compaction(spark, table, order=SortOrder.parse("order", "a"), parallelism=2,
                                            range_bytes=1)
        assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "10000"
    finally:
        spark.stop()
        for name, value in saved.items():  # PySpark marks the process a Connect client: the later tests' classic
            if value is None:              # session must not take itself for one
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    assert report.snapshot_id == table.latest_snapshot().id and len(report.tasks) == 2
    rows = table.read().to_pylist()
    assert [r["a"] for r in rows] == sorted(r["a"] for r in rows)
    assert sorted(rows, key=lambda r: (r["a"], r["b"])) == before
