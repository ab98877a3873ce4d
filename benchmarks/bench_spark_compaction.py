"""Spark compaction scaling (issue 29): the Spark compaction job on ``local[2]`` against ``local[1]``.

Workload: a primary-key table with ``bucket`` = 16 holding ``--rows`` keys (default 4,000,000) of
``benchmarks/bench_write_read.py``'s schema, written in ``--commits`` commits (default 4) of disjoint key ranges
(shuffled), ``write-only`` so that every bucket keeps that many level-0 files. Each run is a full compaction
(``compact_table(spark, table, full=True)``) of a fresh copy of the table in its own Spark process (a new
SparkSession per run; its Python workers are started and a small compaction run in each before the clock starts);
the time is the job alone (plan, tasks, commit). Two cases: the session's first compaction (what a spark-submit per
task pays) and its second, after an untimed compaction of another copy (what a long-lived session pays: Spark
Connect, the demo's default route). Median of ``--repeats`` runs (default 5), the runs alternating so that load
drifts hit all alike; the copies are synced to disk before each run. Goal: local[2] / local[1] <= 0.6.

Each case runs with two driver JVMs: Spark's default, and the JVM options this project gives local-mode Spark
(``SMALL_LOCAL_SPARK_CONF`` of ``dags/example_lake.py``: the JIT's first tier only, serial GC). On ``local[N]`` the
driver's JVM shares the N cores with the Python tasks, and its optimizing JIT compiles Spark's planning code in
every job (ADR 0038): CPU the tasks of ``local[2]`` on two cores need, and ``local[1]`` leaves idle.

``--cluster``: also one run on a standalone cluster of two 1-core workers on 127.0.0.1 (started and stopped here).

  python benchmarks/bench_spark_compaction.py [--quick] [--rows 4000000] [--out .bench/spark_compaction.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.bench_write_read import SCHEMA, make_rows  # noqa: E402

GOAL = 0.6
BUCKETS = 16


SECOND = "second job"
LOCAL_JVM = "local-mode JVM"


def local_jvm_options() -> str:
    """The driver JVM options of this project's local-mode Spark conf (``dags/example_lake.py``)."""
    sys.path.insert(0, str(REPO_ROOT / "dags"))
    from example_lake import SMALL_LOCAL_SPARK_CONF

    return SMALL_LOCAL_SPARK_CONF["spark.driver.extraJavaOptions"]


KINDS = tuple(f"{master}{jvm}{job}" for jvm in ("", f" {LOCAL_JVM}") for job in ("", f" {SECOND}")
              for master in ("local[1]", "local[2]"))
"""The runs: the first compaction of a fresh session (spark-submit's case) and a session's second (a long-lived
session's: Spark Connect, the demo's default), each with Spark's default driver JVM and with the local-mode one."""


def prepare(rows: int, commits: int, work: Path) -> str:
    """The table to compact: ``commits`` level-0 files per bucket."""
    from table_engine import Catalog

    table = Catalog(str(work / "src")).create_table(
        "bench.compact", SCHEMA, primary_keys=["id"], options={"bucket": str(BUCKETS), "write-only": "true"})
    rng = np.random.default_rng(29)
    keys = rng.permutation(rows).astype(np.int64)
    for part in np.array_split(keys, commits):
        table.write(make_rows(rng, part))
    return table.path


def spark_session(master: str, java_options: str = "") -> Any:
    """A SparkSession on ``master`` (this interpreter for the Python workers; ``java_options`` for the driver)."""
    for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ.setdefault(k, sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName("bench-spark-compaction")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "2g").config("spark.sql.session.timeZone", "UTC"))
    if java_options:
        builder = builder.config("spark.driver.extraJavaOptions", java_options)
    if master.startswith("spark://"):
        builder = builder.config("spark.executor.memory", "1g").config("spark.cores.max", "2")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def child(master: str, java_options: str, table_path: str, earlier: str | None = None) -> None:
    """One timed compaction in this process; prints its seconds and the executors its tasks ran on, as JSON.
    ``earlier``: a copy of the table compacted first, untimed (the timed job is then a session's second)."""
    from table_engine import open_table
    from table_engine.spark.jobs.compact_job import run_compaction, warm_up

    spark = spark_session(master, java_options)
    warm_up(spark)  # the Python workers started and a small compaction run in each: the time is the job's
    if earlier:
        run_compaction(spark, open_table(earlier), full=True)
    table = open_table(table_path)
    start = time.perf_counter()
    report = run_compaction(spark, table, full=True)
    seconds = time.perf_counter() - start
    assert report.snapshot_id is not None
    spark.stop()
    print(json.dumps({"seconds": seconds, "executors": sorted(report.executors), "tasks": len(report.tasks),
                      "task_seconds": [round(t.seconds, 3) for t in report.tasks],
                      "task_cpu_seconds": [round(t.cpu_seconds, 3) for t in report.tasks],
                      "phases": {k: round(v, 3) for k, v in report.seconds.items()}}))


def run(master: str, table_path: str, work: Path, tag: str, second: bool = False,
        java_options: str = "") -> dict[str, Any]:
    """One child process; ``second``: the timed job is the session's second compaction (of another copy)."""
    copy = work / tag / "bench.db" / "compact"
    shutil.copytree(table_path, copy)
    argv = [sys.executable, __file__, "--child", master, java_options, str(copy)]
    if second:
        earlier = work / tag / "earlier.db" / "compact"
        shutil.copytree(table_path, earlier)
        argv.append(str(earlier))
    os.sync()  # the copies on disk before the clock: the kernel's writeback of them is not the job's time
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO_ROOT)
        if proc.returncode != 0:
            raise RuntimeError(f"compaction run on {master} failed:\n{proc.stderr[-4000:]}")
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        return result
    finally:
        shutil.rmtree(work / tag, ignore_errors=True)


def cluster_run(table_path: str, work: Path) -> dict[str, Any]:
    """One compaction on a standalone master with two 1-core workers on 127.0.0.1."""
    from tests.spark.cluster import standalone_cluster

    with standalone_cluster(work / "cluster", workers=2, cores=1) as url:
        return run(url, table_path, work, "cluster")


def machine() -> dict[str, Any]:
    import pyspark

    return {"python": platform.python_version(), "pyspark": pyspark.__version__, "cpus": os.cpu_count(),
            "platform": platform.platform(), "load_avg": Path("/proc/loadavg").read_text().split()[:3]
            if Path("/proc/loadavg").exists() else None,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="500,000 rows, one run each, no cluster")
    parser.add_argument("--cluster", action="store_true", help="also one run on a 2-worker standalone cluster")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.quick:
        args.rows, args.repeats, args.cluster = 500_000, 1, False
    work = Path(tempfile.mkdtemp(prefix="bench-spark-compaction-"))
    try:
        report: dict[str, Any] = {"rows": args.rows, "buckets": BUCKETS, "commits": args.commits,
                                  "machine": machine()}
        src = prepare(args.rows, args.commits, work)
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
        options = local_jvm_options()
        report["local_jvm_options"] = options
        for i in range(args.repeats):
            for kind in runs:
                master, second = kind.split()[0], kind.endswith(SECOND)
                runs[kind].append(run(master, src, work, f"{master[6]}-{i}", second,
                                      options if LOCAL_JVM in kind else ""))
        for kind, rs in runs.items():
            report[kind] = {"median_s": statistics.median(r["seconds"] for r in rs),
                            "runs_s": [round(r["seconds"], 3) for r in rs], "tasks": rs[-1]["tasks"],
                            "executors": rs[-1]["executors"]}
        report["ratios"] = {
            f"{LOCAL_JVM if LOCAL_JVM in kind else 'default JVM'}, a session's "
            f"{'second' if kind.endswith(SECOND) else 'first'} job":
                report[kind.replace("local[1]", "local[2]")]["median_s"] / report[kind]["median_s"]
            for kind in KINDS if kind.startswith("local[1]")}
        if args.cluster:
            report["cluster"] = cluster_run(src, work)
        report["machine"]["load_avg_end"] = machine()["load_avg"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(markdown(report))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))
    return 0


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [f"Spark compaction, {report['rows']:,} rows, {report['buckets']} buckets x {report['commits']} "
             f"level-0 files, {m['cpus']} CPUs, PySpark {m['pyspark']}, {m['date']}, load average {m['load_avg']} "
             f"at the start, {m.get('load_avg_end')} at the end", "",
             "| run | median s | runs s | tasks | executors |", "|---|---|---|---|---|"]
    for kind in KINDS:
        r = report[kind]
        lines.append(f"| {kind} | {r['median_s']:.2f} | {r['runs_s']} | {r['tasks']} | {len(r['executors'])} |")
    if "cluster" in report:
        c = report["cluster"]
        lines.append(f"| standalone, 2 workers x 1 core | {c['seconds']:.2f} | | {c['tasks']} | "
                     f"{len(c['executors'])} |")
    lines += ["", f"{LOCAL_JVM}: `{report['local_jvm_options']}`", ""]
    for label, ratio in report["ratios"].items():
        ok = "PASS" if ratio <= GOAL else "FAIL"
        lines.append(f"* {label}: local[2] / local[1] = **{ratio:.2f}x** (goal <= {GOAL}x): {ok}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
