"""A small Spark job with ``spark.paimon.driver-job.max-input-size`` in the connection's Spark conf and a local
master runs with the engine in the task's process (ADR 0042; rendered as ``python -m
table_engine.spark.jobs.driver_jobs``, which runs with ``env_vars``), not spark-submit, and returns the same result
line."""

from __future__ import annotations

import pathlib

import example_lake as sample
import pytest
from paimon_provider.hooks.spark import PaimonSparkHook
from paimon_provider.utils.job_spec import DRIVER_JOBS_MODULE, SparkJobSpec

from table_engine import Catalog
from table_engine.ops import Compact, Write
from tests import airflow_env
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

pytestmark = pytest.mark.timeout(300)


def test_a_small_write_runs_with_the_engine_here(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        warehouse, spark_conf=sample.LAPTOP_SPARK_CONF))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[*]"))
    table = Catalog(warehouse).create_table(sample.ODS.name, sample.order_events(1).schema,
                                            partition_keys=sample.ODS.partition_keys, options=sample.ODS.options)
    spec = SparkJobSpec(command=Write(warehouse=warehouse, table=sample.ODS.name,
                                      source=sample.write_batch(str(tmp_path / "landing"), 1), format="parquet",
                                      commit_user="job-1"))
    hook = PaimonSparkHook()
    sub = hook.build_submission(spec)
    assert sub.route == "driver" and sub.argv[1:3] == ["-m", DRIVER_JOBS_MODULE]
    assert sub.local and sub.application == DRIVER_JOBS_MODULE
    result = hook.submit(spec)
    assert result is not None and result["status"] == "ok" and result["snapshot_id"] == 1
    assert result["rows"] == len(sample.order_event_rows(1)) and result["created"] is False
    assert table.read().num_rows == len(sample.order_event_rows(1))
    again = hook.submit(spec)  # the same commit user: committed already, nothing new
    assert again is not None and again["snapshot_id"] == 1 and again["already_committed"] is True


def test_a_small_write_that_creates_its_table(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        warehouse, spark_conf=sample.LAPTOP_SPARK_CONF))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[*]"))
    spec = SparkJobSpec(command=Write(warehouse=warehouse, table=sample.ODS.name,
                                      source=sample.write_batch(str(tmp_path / "landing"), 1), format="parquet",
                                      create_if_missing=True, partition_keys=tuple(sample.ODS.partition_keys),
                                      options=sample.ODS.options))
    hook = PaimonSparkHook()
    assert hook.build_submission(spec).application == DRIVER_JOBS_MODULE
    result = hook.submit(spec)
    assert result is not None and result["status"] == "ok" and result["created"] is True
    table = Catalog(warehouse).get_table(sample.ODS.name)
    assert table.partition_keys == sample.ODS.partition_keys and table.options.bucket() == -1
    assert all(f.type.nullable for f in table.schema.fields)  # as Spark reads the source: every column nullable
    assert table.read().num_rows == len(sample.order_event_rows(1))


def test_a_small_job_on_s3_is_sized_with_the_connections_credentials(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, s3_server: S3Server, s3_warehouse: str,
        s3_options: dict[str, str]) -> None:
    """The sizing lists the S3 table in the worker with the connection's credentials (the worker's environment has
    none), so a small compaction runs with the engine here; the command line still carries no credential."""
    airflow_env.without_aws_environment(monkeypatch)
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_s3_connection(
        s3_warehouse, s3_server.endpoint, spark_conf=sample.LAPTOP_SPARK_CONF))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[*]"))
    table = Catalog(s3_warehouse, s3_options).create_table(sample.ODS.name, sample.order_events(1).schema,
                                                           partition_keys=sample.ODS.partition_keys,
                                                           options=sample.ODS.options)
    for batch in (1, 2):
        table.write(sample.order_events(batch))
    spec = SparkJobSpec(command=Compact(warehouse=s3_warehouse, table=sample.ODS.name, full=True))
    hook = PaimonSparkHook()
    sub = hook.build_submission(spec)
    assert sub.route == "driver" and sub.application == DRIVER_JOBS_MODULE
    assert not any(secret in " ".join(sub.argv) for secret in (ACCESS_KEY, SECRET_KEY))
    result = hook.submit(spec)
    assert result is not None and result["status"] == "ok" and result["snapshot_id"] == 3
