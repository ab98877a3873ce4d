"""Spark benchmark: the ``paimon`` data source against Spark's own Parquet source, and distributed compaction.

Workload: ``--rows`` rows (default 2,000,000) of ``benchmarks/bench_write_read.py``'s schema (BIGINT key ``id``,
INT, DOUBLE, STRING, DATE, DECIMAL(10,2), TIMESTAMP(6), BOOLEAN), seeded.

read     the table's data files read through ``spark.read.format("paimon")`` vs ``spark.read.parquet`` of the very
         same files; both consumed by Spark's ``noop`` sink. Tables: an append table (no buckets) and a
         primary-key table with ``bucket`` = 4 written in one commit (no overlapping files: a read needs no merge).
write    a cached DataFrame written with ``df.write.format("paimon")`` (append table; and a fixed-bucket
         primary-key table through ``write_dataframe``, which routes rows by bucket) vs ``df.write.parquet``.
compact  a full compaction of a primary-key table (8 buckets, 4 overlapping commits of rows/2 rows each) with
         ``compact_table`` in Spark ``local[2]`` vs ``local[1]`` (separate processes; each run compacts a fresh
         copy of the same table; the time excludes Spark start-up).

Ratios are throughput ratios (> 1: faster than the reference). Best of ``--repeats`` runs (default 3). Targets:
read >= 0.9x, write >= 0.6x, compaction local[2]/local[1] >= 1.5x.

  python benchmarks/bench_spark.py [--rows 2000000] [--out .bench/spark.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.bench_write_read import SCHEMA, make_rows  # noqa: E402

TARGETS = {"read": 0.9, "write": 0.6, "compact": 1.5}


def spark_session(master: str) -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from table_engine.spark import register

    spark = (SparkSession.builder.master(master).appName("bench-spark")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "4g")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def best(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def data_files(table_path: str) -> list[str]:
    return sorted(str(p) for p in Path(table_path).rglob("data-*.parquet"))


# ---- read and write ---------------------------------------------------------------------------------------------
def bench_io(rows: int, repeats: int, work: Path) -> dict[str, Any]:
    from table_engine import Catalog
    from table_engine.spark import write_dataframe

    rng = np.random.default_rng(7)
    data = make_rows(rng, rng.permutation(rows).astype(np.int64))
    spark = spark_session("local[2]")
    catalog = Catalog(str(work / "warehouse"))
    out: dict[str, Any] = {"read": {}, "write": {}}

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    for name, pks, options in (("append", [], {}), ("pk_bucket4", ["id"], {"bucket": "4"})):
        table = catalog.create_table(f"bench.read_{name}", SCHEMA, primary_keys=pks, options=options)
        table.write(data)
        paimon_df = spark.read.format("paimon").option("warehouse", catalog.warehouse).load(table.identifier)
        files = data_files(table.path)
        parquet_df = spark.read.parquet(*files)
        paimon_s = best(lambda df=paimon_df: noop(df), repeats)
        parquet_s = best(lambda df=parquet_df: noop(df), repeats)
        out["read"][name] = {"paimon_s": paimon_s, "parquet_s": parquet_s, "ratio": parquet_s / paimon_s,
                             "files": len(files)}

    source = work / "source"
    spark.createDataFrame(data).write.parquet(str(source))
    df = spark.read.parquet(str(source)).cache()
    df.count()
    counter = iter(range(10**6))

    def parquet_write() -> None:
        df.write.mode("overwrite").parquet(str(work / f"out-{next(counter)}"))

    parquet_s = best(parquet_write, repeats)

    def paimon_append() -> None:
        ident = f"bench.write_append_{next(counter)}"
        catalog.create_table(ident, SCHEMA)
        df.write.format("paimon").mode("append").option("warehouse", catalog.warehouse).save(ident)

    def paimon_pk() -> None:
        ident = f"bench.write_pk_{next(counter)}"
        catalog.create_table(ident, SCHEMA, primary_keys=["id"], options={"bucket": "4"})
        write_dataframe(df, catalog.warehouse, ident, parallelism=2)

    for name, fn in (("append", paimon_append), ("pk_bucket4", paimon_pk)):
        paimon_s = best(fn, repeats)
        out["write"][name] = {"paimon_s": paimon_s, "parquet_s": parquet_s, "ratio": parquet_s / paimon_s}
    spark.stop()
    return out


# ---- compaction -------------------------------------------------------------------------------------------------
def prepare_compaction(rows: int, work: Path) -> str:
    from table_engine import Catalog

    catalog = Catalog(str(work / "compact-src"))
    table = catalog.create_table("bench.compact", SCHEMA, primary_keys=["id"], options={"bucket": "8"})
    rng = np.random.default_rng(11)
    for _ in range(4):
        table.write(make_rows(rng, rng.choice(rows, size=rows // 2, replace=False).astype(np.int64)))
    return table.path


def compact_run(master: str, table_path: str, repeats: int, work: Path) -> float:
    """Time a full compaction of a fresh copy of ``table_path`` in a Spark process with ``master``."""
    times = []
    for i in range(repeats):
        copy = work / f"compact-{master.replace('[', '').replace(']', '')}-{i}" / "bench.db" / "compact"
        shutil.copytree(table_path, copy)
        proc = subprocess.run([sys.executable, __file__, "--compact-child", master, str(copy)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"compaction run failed:\n{proc.stderr[-4000:]}")
        times.append(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])
        shutil.rmtree(copy.parent.parent, ignore_errors=True)
    return min(times)


def compact_child(master: str, table_path: str) -> None:
    from table_engine import open_table
    from table_engine.spark.jobs import compact_table

    spark = spark_session(master)
    spark.range(4).count()  # warm up executors
    table = open_table(table_path)
    start = time.perf_counter()
    sid = compact_table(spark, table, full=True)
    seconds = time.perf_counter() - start
    assert sid is not None
    spark.stop()
    print(json.dumps({"seconds": seconds}))


# ---- report -----------------------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    import pyarrow
    import pyspark

    return {"python": platform.python_version(), "pyspark": pyspark.__version__, "pyarrow": pyarrow.__version__,
            "cpus": os.cpu_count(), "platform": platform.platform(),
            "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Spark benchmark, {report['rows']:,} rows, {report['machine']['cpus']} CPUs, "
             f"PySpark {report['machine']['pyspark']}", "",
             "| phase | table | paimon s | reference s | ratio | target |", "|---|---|---|---|---|---|"]
    for phase in ("read", "write"):
        for table, r in report[phase].items():
            lines.append(f"| {phase} | {table} | {r['paimon_s']:.2f} | {r['parquet_s']:.2f} (parquet) | "
                         f"{r['ratio']:.2f}x | >= {TARGETS[phase]}x |")
    c = report.get("compact")
    if c:
        lines.append(f"| compact | pk bucket=8 | {c['local2_s']:.2f} (local[2]) | {c['local1_s']:.2f} (local[1]) | "
                     f"{c['ratio']:.2f}x | >= {TARGETS['compact']}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-compaction", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compact-child", nargs=2, metavar=("MASTER", "TABLE_PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compact_child:
        compact_child(*args.compact_child)
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    try:
        report: dict[str, Any] = {"rows": args.rows, "machine": machine(), **bench_io(args.rows, args.repeats, work)}
        if not args.skip_compaction:
            src = prepare_compaction(args.rows, work)
            local1 = compact_run("local[1]", src, args.repeats, work)
            local2 = compact_run("local[2]", src, args.repeats, work)
            report["compact"] = {"local1_s": local1, "local2_s": local2, "ratio": local1 / local2}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = markdown(report)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
