"""Spark writes from files (issue 29): the application's ``write`` job and ``consume-changelog`` into a target table,
against ``spark.read.parquet(src).write.parquet(dst)`` (zstd) of the same files, side by side in one SparkSession.

Source: ``--rows`` rows of 4 columns (id bigint, a int, b double, s string; ids a permutation) in 8 Parquet files.
Jobs, each into a fresh table, median of ``--repeats`` (default 5), each round running the reference and the jobs
in turn:

append              ``write`` into an append table (the file route: tasks read the files with pyarrow)
pk_bucket4          ``write`` into a primary-key table with 4 buckets (the file route)
pk_dynamic          ``write`` into a dynamic-bucket primary-key table (the file route: every task reads every file and
                    keeps the rows of its keys)
*_dataframe         the same tables through the DataFrame route (``write_dataframe`` of ``spark.read.parquet``): the
                    route the job took before
consume             ``consume-changelog`` of ``--changes`` changes of a primary-key table into a primary-key target,
                    against ``spark.read.parquet`` of the same changes then ``write.parquet``

Ratios: reference time / job time (> 1: the job is faster).

  python benchmarks/bench_file_write.py [--quick] [--out .bench/file_write.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

TABLES: dict[str, tuple[list[str], dict[str, str]]] = {
    "append": ([], {}),
    "pk_bucket4": (["id"], {"bucket": "4"}),
    "pk_dynamic": (["id"], {"bucket": "-1"}),
}
GOALS = {"append": 1.0, "pk_bucket4": 0.7, "pk_dynamic": 0.5, "consume": 0.6}
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("a", pa.int32()), pa.field("b", pa.float64()),
                    pa.field("s", pa.string())])


def rows(rng: np.random.Generator, ids: np.ndarray) -> pa.Table:
    n = len(ids)
    words = np.array([f"word-{i:05d}" for i in range(1000)], dtype=object)
    return pa.table({"id": ids, "a": rng.integers(-(2**31), 2**31, n, dtype=np.int32),
                     "b": rng.standard_normal(n), "s": pa.array(words[rng.integers(0, 1000, n)], pa.string())},
                    schema=SCHEMA)


def interleaved(fns: dict[str, Callable[[int], Any]], repeats: int) -> dict[str, list[float]]:
    """Each function's times over ``repeats`` rounds, the functions taking turns within a round (load drifts hit
    the job and its reference alike); the files of the run before are synced to disk before each run starts."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(repeats):
        for name, fn in fns.items():
            os.sync()
            start = time.perf_counter()
            fn(i)
            times[name].append(time.perf_counter() - start)
    return times


def result(times: list[float], reference: list[float]) -> dict[str, Any]:
    t, ref = statistics.median(times), statistics.median(reference)
    return {"seconds": t, "reference_seconds": ref, "ratio": ref / t, "runs_s": [round(x, 3) for x in times],
            "reference_runs_s": [round(x, 3) for x in reference]}


def main(argv: list[str] | None = None) -> int:
    from benchmarks.bench_spark import machine, spark_session, write_report
    from table_engine import Catalog
    from table_engine.ops import ConsumeChangelog, Write
    from table_engine.spark import write_dataframe
    from table_engine.spark.jobs.run import run_spark_job

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--changes", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="500,000 rows, 200,000 changes, 1 repeat")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.changes, args.repeats = 500_000, 200_000, 1
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="bench-file-write-"))
    rng = np.random.default_rng(29)
    src = work / "src"
    src.mkdir()
    ids = rng.permutation(args.rows).astype(np.int64)
    step = -(-args.rows // 8)
    for i in range(8):
        pq.write_table(rows(rng, ids[i * step:(i + 1) * step]), src / f"part-{i}.parquet")
    spark = spark_session("local[2]")
    warehouse = str(work / "wh")
    catalog = Catalog(warehouse)

    def copy(i: int, source: Path = src) -> None:
        spark.read.parquet(str(source)).write.mode("overwrite").option("compression", "zstd") \
            .parquet(str(work / f"copy-{i}"))

    def job(kind: str, dataframe: bool) -> Callable[[int], Any]:
        keys, opts = TABLES[kind]

        def run(i: int) -> None:
            name = f"db.{kind}_{'df' if dataframe else 'f'}_{i}"
            catalog.create_table(name, SCHEMA, primary_keys=keys, options=opts)
            if dataframe:
                write_dataframe(spark.read.parquet(str(src)), warehouse, name)
            else:
                run_spark_job(Write(warehouse=warehouse, table=name, source=str(src)), spark)
        return run

    copy(-1)  # warm-up: the JVM's first Parquet job and the Python workers
    job("append", False)(-1)
    results: dict[str, dict[str, float]] = {}
    for kind in TABLES:
        times = interleaved({"reference": copy, "file": job(kind, False), "dataframe": job(kind, True)},
                            args.repeats)
        results[kind] = result(times["file"], times["reference"])
        results[f"{kind}_dataframe"] = result(times["dataframe"], times["reference"])
        print(kind, results[kind], flush=True)

    # consume-changelog: one snapshot of changes of a primary-key table, into a primary-key target
    source = catalog.create_table("db.changes", SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    change_rows = rows(rng, rng.permutation(args.changes).astype(np.int64))
    writer = source.new_write()
    writer.write(change_rows)
    source.new_commit("bench").commit(writer.prepare_commit())
    changes_dir = work / "changes"
    changes_dir.mkdir()
    for i in range(4):
        part = change_rows.slice(i * (args.changes // 4), args.changes // 4)
        pq.write_table(part.append_column("rowkind", pa.array(["+I"] * part.num_rows)), changes_dir / f"c{i}.parquet")

    def consume(i: int) -> None:
        target = f"db.target_{i}"
        catalog.create_table(target, SCHEMA, primary_keys=["id"], options={"bucket": "4"})
        out = run_spark_job(ConsumeChangelog(warehouse=warehouse, table="db.changes", consumer_id=f"c{i}",
                                             target_table=target), spark)
        assert out["rows"] == args.changes, out  # every change applied

    times = interleaved({"reference": lambda i: copy(i, changes_dir), "consume": consume}, args.repeats)
    results["consume"] = result(times["consume"], times["reference"])
    spark.stop()
    report = {"machine": {**machine(), "load_avg": load_start, "load_avg_end": os.getloadavg()}, "rows": args.rows,
              "changes": args.changes, "repeats": args.repeats, "results": results}
    print(markdown(report))
    print(json.dumps(report))
    shutil.rmtree(work, ignore_errors=True)
    return write_report(args.out, report)


def markdown(report: dict[str, Any]) -> str:
    lines = [f"{report['rows']:,} rows in 8 Parquet files, {report['changes']:,} changes, local[2], median of "
             f"{report['repeats']}; load average {report['machine']['load_avg']} (start), "
             f"{report['machine']['load_avg_end']} (end)", "",
             "| job | seconds | reference seconds | ratio | goal | runs s | reference runs s |",
             "|---|---:|---:|---:|---:|---|---|"]
    for name, r in report["results"].items():
        goal = GOALS.get(name)
        lines.append(f"| {name} | {r['seconds']:.2f} | {r['reference_seconds']:.2f} | {r['ratio']:.2f}x | "
                     f"{'' if goal is None else f'>= {goal}x'} | {r['runs_s']} | {r['reference_runs_s']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
