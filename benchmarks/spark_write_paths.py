"""Where a Spark write of a Paimon table spends its time (issue 15): a breakdown by stage, against df.write.parquet.

For each table kind (a fixed-bucket primary-key table, a dynamic-bucket primary-key table, an append table), the
same cached DataFrame goes through growing prefixes of the write, each into a sink that does nothing more:

parquet        ``df.write.parquet`` (Spark's default codec, snappy) and with ``compression=zstd`` (Paimon's default
               ``file.compression``: the like-for-like reference)
unrouted       the input rows as Arrow batches into a ``mapInArrow`` task that only drains them, no shuffle: the
               floor of any writer in Python, however it routes
shuffle        ``prepare_write`` (the routing repartition) into Spark's ``noop`` sink
shuffle+sort   the same, plus ``sortWithinPartitions`` by (partition, bucket, key) in the JVM (fixed bucket)
to python      the routed rows as Arrow batches into a ``mapInArrow`` Python task that only drains them
engine task    the routed rows into a task that writes them with the engine (``TableWrite``): inside the task,
               time waiting for input, ``write()`` (conform, partition and bucket, buffer) and ``prepare_commit()``
               (sequence, sort by key, merge, Parquet); sum over tasks
datasource     the whole write through the ``paimon`` Python data source (``df.write.format("paimon")``)
map_write      the whole write through ``write_dataframe`` (``mapInArrow`` tasks, driver commit): the fast path

Ratios are throughput ratios against ``df.write.parquet`` (> 1: faster). Best of ``repeats``.

  python benchmarks/spark_write_paths.py [--rows 5000000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

TABLES: dict[str, tuple[list[str], dict[str, str]]] = {
    "pk_bucket4": (["id"], {"bucket": "4"}),
    "pk_dynamic": (["id"], {"bucket": "-1"}),
    "append": ([], {}),
}


_TIMED = "input double, write double, prepare_commit double"


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def _drain(batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    rows = sum(b.num_rows for b in batches)
    yield pa.RecordBatch.from_pydict({"rows": pa.array([rows], pa.int64())})


def _engine_task(table: Any, tasks: int, batches: Iterator[Any]) -> Iterator[Any]:
    """Write with the engine, timing input, write() and prepare_commit(); the files are deleted after."""
    import pyarrow as pa

    from table_engine.spark.datasource.writer import ROUTING_COLUMNS, is_dynamic_bucket
    from table_engine.spark.jobs.run import task_arrow_threads
    from table_engine.store.writing.bucket_assign import Assigner
    from table_engine.store.writing.write import TableWrite

    task_arrow_threads()
    from pyspark import TaskContext

    ctx = TaskContext.get()
    writer: TableWrite = table.new_write()
    if is_dynamic_bucket(table) and ctx is not None:
        writer.assigner = Assigner(ctx.partitionId(), tasks)
    t_input = t_write = 0.0
    it = iter(batches)
    while True:
        start = time.perf_counter()
        batch = next(it, None)
        t_input += time.perf_counter() - start
        if batch is None:
            break
        drop = [c for c in ROUTING_COLUMNS if c in batch.schema.names]
        start = time.perf_counter()
        writer.write(batch.drop_columns(drop) if drop else batch)
        t_write += time.perf_counter() - start
    start = time.perf_counter()
    writer.prepare_commit()
    t_commit = time.perf_counter() - start
    writer.abort()
    yield pa.RecordBatch.from_pydict({"input": [t_input], "write": [t_write], "prepare_commit": [t_commit]})


def _noop(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


def write_paths(spark: Any, df: Any, warehouse: str, work: Path, repeats: int, parallelism: int = 2,
                breakdown: bool = True) -> dict[str, Any]:
    """The breakdown for every table kind of :data:`TABLES` (``df`` cached, columns of bench_write_read.SCHEMA)."""
    import functools

    from benchmarks.bench_write_read import SCHEMA
    from table_engine import Catalog
    from table_engine.spark import write_dataframe
    from table_engine.spark.datasource.writer import prepare_write

    catalog = Catalog(warehouse)
    counter = iter(range(10**6))
    out: dict[str, Any] = {"rows": df.count()}

    def parquet(codec: str | None) -> None:
        w = df.write.mode("overwrite")
        if codec:
            w = w.option("compression", codec)
        w.parquet(str(work / f"parquet-{next(counter)}"))

    def note(label: str, value: float) -> float:
        print(f"[write paths] {label}: {value:.2f} s", flush=True)
        return value

    out["parquet_s"] = note("parquet", _best(lambda: parquet(None), repeats)[0])
    out["parquet_zstd_s"] = note("parquet zstd", _best(lambda: parquet("zstd"), repeats)[0])
    for kind, (pks, options) in TABLES.items():
        stages: dict[str, Any] = {}
        probe = catalog.create_table(f"paths.{kind}_probe", SCHEMA, primary_keys=pks, options=options)
        if breakdown and kind == "pk_bucket4":
            unsorted, _ = prepare_write(df, probe, parallelism)
            routed, _ = prepare_write(df, probe, parallelism, sort=True)
            stages["shuffle_s"] = note(f"{kind} shuffle", _best(lambda r=unsorted: _noop(r), repeats)[0])
            stages["shuffle_sort_s"] = note(f"{kind} shuffle+sort", _best(lambda r=routed: _noop(r), repeats)[0])
            stages["unrouted_to_python_s"] = note(f"{kind} unrouted to python (no shuffle)", _best(
                lambda: df.mapInArrow(_drain, "rows long").collect(), repeats)[0])
            stages["to_python_s"] = note(f"{kind} to python", _best(
                lambda r=unsorted: r.mapInArrow(_drain, "rows long").collect(), repeats)[0])
            for label, frame in (("unsorted", unsorted), ("sorted", routed)):
                seconds, rows = _best(lambda r=frame, t=probe: r.mapInArrow(
                    functools.partial(_engine_task, t, parallelism), _TIMED).collect(), repeats)
                stages[f"engine_task_{label}_s"] = note(f"{kind} engine task ({label} input)", seconds)
                stages[f"engine_task_{label}_parts_s"] = parts = {
                    k: sum(float(r[k]) for r in rows) for k in ("input", "write", "prepare_commit")}
                print(f"[write paths]   summed over tasks: {parts}", flush=True)

        def datasource(kind: str = kind, pks: list[str] = pks, options: dict[str, str] = options) -> None:
            t = catalog.create_table(f"paths.{kind}_ds_{next(counter)}", SCHEMA, primary_keys=pks, options=options)
            r, x = prepare_write(df, t, parallelism)   # as on main before issue 15
            r.write.format("paimon").mode("append").option("warehouse", warehouse).options(**x).save(t.identifier)

        def fast(kind: str = kind, pks: list[str] = pks, options: dict[str, str] = options) -> None:
            t = catalog.create_table(f"paths.{kind}_mw_{next(counter)}", SCHEMA, primary_keys=pks, options=options)
            write_dataframe(df, warehouse, t.identifier, parallelism=parallelism)

        stages["datasource_s"] = note(f"{kind} datasource (before)", _best(datasource, repeats)[0])
        stages["map_write_s"] = note(f"{kind} write_dataframe (after)", _best(fast, repeats)[0])
        stages["ratio_datasource"] = out["parquet_s"] / stages["datasource_s"]
        stages["ratio_map_write"] = out["parquet_s"] / stages["map_write_s"]
        stages["ratio_map_write_zstd"] = out["parquet_zstd_s"] / stages["map_write_s"]
        out[kind] = stages
    return out


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Spark write paths, {report['rows']:,} rows: df.write.parquet {report['parquet_s']:.2f} s (snappy), "
             f"{report['parquet_zstd_s']:.2f} s (zstd)", ""]
    b = report["pk_bucket4"]
    if "shuffle_s" in b:
        lines.append(f"pk_bucket4 breakdown: shuffle {b['shuffle_s']:.2f} s, "
                     f"shuffle+JVM sort {b['shuffle_sort_s']:.2f} s, "
                     f"unrouted rows to python (no shuffle) {b['unrouted_to_python_s']:.2f} s, "
                     f"to python {b['to_python_s']:.2f} s, engine task on unsorted input "
                     f"{b['engine_task_unsorted_s']:.2f} s {b['engine_task_unsorted_parts_s']}, on sorted input "
                     f"{b['engine_task_sorted_s']:.2f} s {b['engine_task_sorted_parts_s']}")
        lines.append("")
    lines += ["| table | datasource (before) s | write_dataframe (after) s | ratio before | ratio after "
              "(snappy / zstd) |",
              "|---|---:|---:|---:|---:|"]
    for kind in TABLES:
        s = report[kind]
        lines.append(f"| {kind} | {s['datasource_s']:.2f} | {s['map_write_s']:.2f} | {s['ratio_datasource']:.2f}x | "
                     f"{s['ratio_map_write']:.2f}x / {s['ratio_map_write_zstd']:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.bench_spark import machine, spark_session, write_report
    from benchmarks.bench_write_read import make_rows

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-breakdown", action="store_true", help="only the whole writes, before and after")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-spark-write-"))
    spark = spark_session("local[2]")
    rng = np.random.default_rng(7)
    source = work / "source"
    import pyarrow.parquet as pq

    source.mkdir()
    step = 1_000_000
    ids = rng.permutation(args.rows).astype(np.int64)
    for i in range(0, args.rows, step):
        pq.write_table(make_rows(rng, ids[i:i + step]), source / f"part-{i // step}.parquet")
    df = spark.read.parquet(str(source)).cache()
    df.count()
    report = {"machine": machine(), **write_paths(spark, df, str(work / "warehouse"), work, args.repeats,
                                                        breakdown=not args.no_breakdown)}
    report["machine"]["load_avg_end"] = os.getloadavg()
    spark.stop()
    print(markdown(report))
    print(json.dumps(report))
    return write_report(args.out, report)


if __name__ == "__main__":
    sys.exit(main())
