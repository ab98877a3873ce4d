"""The application on a real standalone Spark cluster on 127.0.0.1: a master and a worker started with
``spark-class`` (the wheel has no sbin scripts), stopped by PID at the end."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from tests.spark.conftest import BIN, spark_env, spark_submit

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _free_port(preferred: int | None = None) -> int:
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError("no free port")


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except OSError:
        return 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:<port>`` (7077 when free) with one 2-core worker."""
    work = tmp_path_factory.mktemp("cluster")
    port, ui, worker_ui = _free_port(7077), _free_port(), _free_port()
    env = spark_env({"SPARK_WORKER_DIR": str(work / "work"), "SPARK_LOG_DIR": str(work)})
    spark_class = str(BIN / "spark-class")
    procs = []
    try:
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(ui)], env=env, stdout=open(work / "master.log", "wb"), stderr=subprocess.STDOUT))
        url = f"spark://127.0.0.1:{port}"
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2",
             "--memory", "2g", "--work-dir", str(work / "work"), "--webui-port", str(worker_ui), url],
            env=env, stdout=open(work / "worker.log", "wb"), stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 90
        while _alive_workers(ui) < 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                logs = "".join(Path(work, f).read_text()[-3000:] for f in ("master.log", "worker.log"))
                pytest.fail(f"the standalone cluster did not come up:\n{logs}")
            time.sleep(0.5)
        yield url
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def test_write_and_compaction_jobs_on_a_standalone_cluster(cluster, warehouse, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for part in range(2):
        ids = range(part * 5000, (part + 1) * 5000)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids],
                                 "dt": [f"d{i % 3}" for i in ids]}), source / f"part-{part}.parquet")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                        pa.field("dt", pa.string(), nullable=False)])
    table = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "2"})
    table.write(pq.read_table(source / "part-0.parquet").cast(schema))       # a first level-0 run per bucket
    conf = {"spark.pyspark.python": sys.executable, "spark.executor.memory": "1g", "spark.cores.max": "2"}
    args = ["--warehouse", warehouse, "--table", "db.t"]
    out = spark_submit(["write", *args, "--source", str(source)], master=cluster, conf=conf).ok()
    assert out["snapshot_id"] == 2 and out["rows"] == 10000 and out["files"] == 6   # routed: one file per bucket
    out = spark_submit(["compact", *args, "--full"], master=cluster, conf=conf).ok()
    assert out["snapshot_id"] == 3 and out["files_before"] == 12 and out["files_after"] == 6
    assert table.latest_snapshot().commit_kind == "COMPACT"
    rows = table.read()
    assert rows.num_rows == 10000 and sorted(rows["id"].to_pylist()) == list(range(10000))
