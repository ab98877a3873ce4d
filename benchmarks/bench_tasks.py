"""Airflow task latency (issue 16): operator start -> success of a small write, compaction and expiry task.

Each task is the provider's operator (``PaimonWriteOperator``, ``PaimonCompactOperator``,
``PaimonExpireSnapshotsOperator``) run in-process with ``execute`` (the connections as environment variables, as in
``make demo``: Spark ``local[*]`` and ``LAPTOP_SPARK_CONF``), so a sample is the time from the operator's start
to its result and Asset event: building the spark-submit, the JVM and SparkSession, the Python workers, planning,
writing, committing, the result line. Airflow's own per-task overhead (a task-runner process, the DB) is not in it;
``--demo`` adds the wall time of ``make demo`` (``python -m scripts.airflow_demo run``) for that.

* write: 8 rows (one ODS sample batch, a Parquet file) appended to an ODS-like append table (partitioned, bucket -1);
  the table exists (as after the first batch), so these are small jobs run with the engine on the worker
  (``spark.paimon.driver-job.max-input-size`` of ``LAPTOP_SPARK_CONF``);
* compact: full compaction of a DWD-like primary-key table (2 buckets, partitioned) after one more 8-row commit;
* expire: expire snapshots of the write table (the engine's CLI, no Spark);
* write-spark, compact-spark: the same with ``spark.paimon.driver-job.max-input-size=0``, i.e. as Spark jobs
  (``--spark-runs`` samples, default ``--runs``): what every such task cost before.
* write-connect (``--connect``): the same write as a Spark job on a local Spark Connect server
  (``spark={"connect": ...}``, route ``connect``: the operator's process is the Connect client), the server
  (``local[*]``) started once before the samples and one untimed write run first (the server is long-lived: its
  Python workers are warm in steady state).

``python benchmarks/bench_tasks.py [--runs 5] [--demo] [--out .bench/tasks.json]``: medians (and min/max) in
seconds, the machine and its load average.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "dags"))  # the example lake, as Airflow puts the DAG folder on sys.path


def _configure_airflow(home: pathlib.Path, warehouse: str) -> None:
    from example_lake import LAPTOP_SPARK_CONF

    bin_dir = os.path.dirname(sys.executable)
    os.environ.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps({"conn_type": "paimon", "extra": {
            "warehouse": warehouse, "spark_conn_id": "spark_default", "spark_conf": LAPTOP_SPARK_CONF}}),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[*]"}),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
    })


def _context(task_id: str, run: int) -> dict[str, Any]:
    from airflow.sdk.execution_time.context import OutletEventAccessors  # noqa: TID251 (the provider's operators)

    ti = SimpleNamespace(dag_id="bench_tasks", task_id=task_id, run_id=f"manual__{run}", map_index=-1)
    return {"ti": ti, "outlet_events": OutletEventAccessors()}


def _timed(op: Any, task_id: str, run: int) -> tuple[float, dict[str, Any] | None]:
    started = time.monotonic()
    result = op.execute(_context(task_id, run))
    return time.monotonic() - started, result


def bench(runs: int, work: pathlib.Path, spark_runs: int, connect: str | None = None) -> dict[str, list[float]]:
    """``runs`` samples of each task; seconds per task kind."""
    import logging

    logging.basicConfig(level=logging.WARNING)
    from example_lake import DWD, ODS, order_events, write_batch
    from paimon_provider.operators import PaimonCompactOperator, PaimonExpireSnapshotsOperator, PaimonWriteOperator

    from table_engine.catalog import Catalog

    warehouse = str(work / "warehouse")
    _configure_airflow(work / "airflow", warehouse)
    catalog = Catalog(warehouse)
    catalog.create_table(DWD.name, order_events(1).schema, primary_keys=DWD.primary_keys,
                         partition_keys=DWD.partition_keys, options=DWD.options)
    dwd = catalog.get_table(DWD.name)
    # the ODS table exists, as after the first batch: the layer's steady state
    catalog.create_table(ODS.name, order_events(1).schema, partition_keys=ODS.partition_keys, options=ODS.options)
    landing = write_batch(str(work / "landing"), 1)
    out: dict[str, list[float]] = {"write": [], "compact": [], "expire": [], "write-spark": [], "compact-spark": [],
                                   "write-connect": []}
    as_spark_job = {"conf": {"spark.paimon.driver-job.max-input-size": "0"}}
    over_connect = {"connect": connect} if connect else None
    writes: list[tuple[str, dict[str, Any] | None]] = [("write", None), ("write-spark", as_spark_job)]
    if over_connect is not None:
        writes.append(("write-connect", over_connect))
        PaimonWriteOperator(task_id="warm_up", table=ODS.name, source=landing, source_format="parquet",
                            spark=over_connect).execute(_context("warm_up", 0))
    for run in range(max(runs, spark_runs)):
        for kind, spark in writes:
            if run >= (spark_runs if spark is as_spark_job else runs):
                continue
            write = PaimonWriteOperator(task_id="append_ods", table=ODS.name, source=landing, source_format="parquet",
                                        partition_keys=ODS.partition_keys, table_options=ODS.options, spark=spark)
            seconds, result = _timed(write, f"append_ods_{kind}", run)
            assert result is not None and result.get("snapshot_id") is not None, result
            out[kind].append(seconds)

        for kind, spark in (("compact", None), ("compact-spark", as_spark_job)):
            if run >= (runs if spark is None else spark_runs):
                continue
            dwd.write(order_events(1 + run % 3))  # something to compact (not timed)
            compact = PaimonCompactOperator(task_id="compact_dwd", table=DWD.name, full=True, spark=spark)
            seconds, result = _timed(compact, f"compact_dwd_{kind}", run)
            assert result is not None and result.get("snapshot_id") is not None, result
            out[kind].append(seconds)

        if run < runs:
            expire = PaimonExpireSnapshotsOperator(task_id="expire_ods", table=ODS.name, retain_min=1, retain_max=3)
            seconds, result = _timed(expire, "expire_ods", run)
            assert result is not None and result.get("status") == "ok", result
            out["expire"].append(seconds)
        print(f"run {run + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in out.items() if len(v) > run),
              flush=True)
    return out


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def demo_wall_time(work: pathlib.Path) -> float:
    """Seconds of ``python -m scripts.airflow_demo run`` in a fresh Airflow home and lake."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "scripts.airflow_demo", "run", "--home", str(work / "demo-home"),
                    "--lake", str(work / "demo-lake")], cwd=REPO, check=True, timeout=3600)
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--spark-runs", type=int, help="samples of the Spark-job variants (default: --runs)")
    parser.add_argument("--demo", action="store_true",
                        help="also time `make demo` (python -m scripts.airflow_demo run)")
    parser.add_argument("--connect", action="store_true",
                        help="also time the write as a Spark job on a local Spark Connect server (started here)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-tasks-") as tmp:
        work = pathlib.Path(tmp)
        spark_runs = args.runs if args.spark_runs is None else args.spark_runs
        if args.connect:
            from table_engine.spark import connect_server

            try:
                url = connect_server.start(work / "connect", _free_port(), conf={"spark.ui.enabled": "false"})
                samples = bench(args.runs, work, spark_runs, url)
            finally:
                connect_server.stop(work / "connect")
        else:
            samples = bench(args.runs, work, spark_runs)
        demo = demo_wall_time(work) if args.demo else None
    summary: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
                   f"{platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "runs": args.runs,
        "tasks": {k: {"median_s": round(statistics.median(v), 2), "min_s": round(min(v), 2),
                      "max_s": round(max(v), 2), "samples_s": [round(x, 2) for x in v]}
                  for k, v in samples.items() if v},
    }
    if demo is not None:
        summary["make_demo_s"] = round(demo, 1)
    print(json.dumps(summary, indent=2))
    for kind, stats in summary["tasks"].items():
        print(f"{kind:<13} median {stats['median_s']:6.2f} s  (min {stats['min_s']:.2f}, max {stats['max_s']:.2f})")
    if demo is not None:
        print(f"make demo: {demo:.0f} s")
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
