"""With real Spark (local mode): on_kill ends spark-submit's whole process tree (JVM, Python driver, Python workers)
mid-job, leaving no snapshot. (That the application's result line comes back through the hook with real Spark is
shown by tests/dags/test_lake_dags.py: each write's Asset event carries the snapshot id of its result line.)"""

from __future__ import annotations

import pathlib
import threading
import time

import example_lake as sample
import pytest
from paimon_provider.hooks.spark import PaimonSparkHook
from paimon_provider.utils.job_spec import SparkJobSpec

from table_engine.ops import Write

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def write_spec(warehouse: str, landing: str) -> SparkJobSpec:
    return SparkJobSpec(command=Write(warehouse=warehouse, table="ods.order_events",
                                      source=sample.write_batch(landing, 1), format="parquet", mode="append",
                                      create_if_missing=True, partition_keys=("dt",)),
                        conf=sample.SMALL_LOCAL_SPARK_CONF)


def test_on_kill_ends_the_spark_process_tree(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    hook = PaimonSparkHook()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            hook.submit(write_spec(paimon_conn, str(tmp_path / "landing")))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 300
    while True:  # wait for the JVM and the Python driver it starts
        process = hook._process
        members = group_members(process.pid) if process is not None else []
        if len(members) >= 2:
            break
        assert time.monotonic() < deadline and worker.is_alive(), "spark-submit did not start"
        time.sleep(0.2)
    assert process is not None
    hook.on_kill()
    worker.join(timeout=60)
    assert not worker.is_alive() and errors and "was killed" in str(errors[0])
    deadline = time.monotonic() + 15
    while group_members(process.pid):
        assert time.monotonic() < deadline, f"left running: {group_members(process.pid)}"
        time.sleep(0.2)
    snapshot_dir = pathlib.Path(paimon_conn) / "ods.db" / "order_events" / "snapshot"
    assert not snapshot_dir.exists() or not any(p.name.startswith("snapshot-") for p in snapshot_dir.iterdir())
