"""Paimon's commit metrics of a job, by Paimon's names, reach a real StatsD listener on 127.0.0.1 through Airflow's
metrics (as the task runner initializes them), and are in the job result's ``commit.metrics``."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.operators import PaimonCompactOperator, PaimonWriteOperator

from table_engine.ops.metrics import COMMIT_METRICS
from tests.provider.operators.conftest import context


@pytest.fixture
def statsd(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A StatsD listener (a UDP socket on 127.0.0.1) and Airflow's metrics sent to it, initialized as the task
    runner does; the metrics reset to none afterwards."""
    from airflow.sdk.observability.metrics import stats_utils
    from airflow.sdk.observability.stats import initialize

    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(5)
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_ON", "True")
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_HOST", "127.0.0.1")
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_PORT", str(listener.getsockname()[1]))
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_PREFIX", "airflow")
    initialize(factory=stats_utils.get_stats_factory(), export_legacy_names=False)
    try:
        yield listener
    finally:
        from airflow.sdk._shared.observability.metrics import stats
        from airflow.sdk._shared.observability.metrics.base_stats_logger import NoStatsLogger

        client = getattr(stats._get_backend(), "statsd", None)  # the StatsD client's UDP socket
        if client is not None and hasattr(client, "close"):
            client.close()
        initialize(factory=NoStatsLogger, export_legacy_names=False)
        listener.close()


def received(listener: socket.socket) -> dict[str, str]:
    """The packets received so far, as ``name -> value|type``."""
    out: dict[str, str] = {}
    listener.settimeout(0.5)
    try:
        while True:
            for line in listener.recv(65536).decode().splitlines():
                name, _, rest = line.partition(":")
                out[name] = rest
    except TimeoutError:
        return out


def test_a_write_and_a_compaction_report_paimons_commit_metrics(
        paimon_conn: str, statsd: socket.socket, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small jobs (the demo's laptop conf): the engine in the task's process."""
    import example_lake as sample

    from table_engine import Catalog
    from tests import airflow_env

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        paimon_conn, spark_conf=sample.LAPTOP_SPARK_CONF))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[*]"))

    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    table = Catalog(paimon_conn).create_table("db.m", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                              options={"bucket": "2"})
    table.write(pa.table({"id": [1, 2, 3], "dt": ["a", "a", "b"]}, schema=schema))
    source = tmp_path / "batch.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [4, 5], "dt": ["a", "b"]}, schema=schema), source)
    result = PaimonWriteOperator(task_id="w", table="db.m", source=str(source)).execute(context())
    metrics = result["commit"]["metrics"]
    assert set(metrics) == set(COMMIT_METRICS)
    assert metrics["lastGeneratedSnapshots"] == 1 and metrics["lastDeltaRecordsAppended"] == 2
    assert metrics["lastPartitionsWritten"] == 2 and metrics["lastTableFilesAppended"] == metrics[
        "lastTableFilesAdded"] >= 2 and metrics["lastTableFilesDeleted"] == 0
    sent = received(statsd)
    assert sent["airflow.paimon.table.db.m.commit.lastDeltaRecordsAppended"] == "2|g", sent
    assert sent["airflow.paimon.table.db.m.commit.lastPartitionsWritten"] == "2|g"
    assert sent["airflow.paimon.table.db.m.write.duration"].endswith("|ms")

    ctx = context()
    ctx["ti"].task_id = "c"  # another task than the write's: its own commit user
    compacted = PaimonCompactOperator(task_id="c", table="db.m", full=True).execute(ctx)
    m = compacted["commit"]["metrics"]
    assert m["lastTableFilesCommitCompacted"] == m["lastTableFilesAdded"] + m["lastTableFilesDeleted"] > 0
    assert m["lastCompactionInputFileSize"] > 0 and m["lastCompactionOutputFileSize"] > 0
    assert m["lastTableFilesAppended"] == 0 and m["lastDeltaRecordsAppended"] == 0
    sent = received(statsd)
    assert sent["airflow.paimon.table.db.m.commit.lastCompactionOutputFileSize"] == \
        f"{m['lastCompactionOutputFileSize']}|g", sent


def test_every_metric_is_documented() -> None:
    import pathlib

    doc = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "metrics.md").read_text()
    for name, what in COMMIT_METRICS.items():
        assert f"| `{name}` | gauge | {what} |" in doc, name
