"""Where a Spark write of a Paimon table spends its time (issue 15): a breakdown by stage, against df.write.parquet.

For each table kind (a fixed-bucket primary-key table, a dynamic-bucket primary-key table, an append table), the
same cached DataFrame goes through growing prefixes of the write, each into a sink that does nothing more:

parquet          ``df.write.parquet`` (Spark's default codec, snappy) and with ``compression=zstd`` (Paimon's
                 default ``file.compression``: the like-for-like reference)
rows shuffle     ``prepare_write`` (rows routed by a repartition, the bucket a Spark expression) into Spark's
                 ``noop`` sink
rows to python   the same, then the shuffled rows as Arrow batches into a ``mapInArrow`` task that only drains them
packed to python the rows packed by writer task in Python (``table_engine.spark.packed``), the packed streams
                 shuffled, then unpacked and drained in a ``mapInArrow`` task
engine task      the packed rows into a task that writes them with the engine (``TableWrite``): inside the task,
                 time waiting for input, ``write()`` (conform, partition and bucket, buffer) and ``prepare_commit()``
                 (sequence, sort by key, merge, Parquet); sum over tasks
datasource       the whole write through the ``paimon`` Python data source (``df.write.format("paimon")`` after
                 ``prepare_write``): the route before issue 15
rows route       ``prepare_write``, then ``mapInArrow`` writer tasks and a driver commit: the route of main at
                 baf9348 (shuffled rows)
write_dataframe  the whole write through ``write_dataframe`` now (packed rows, ``mapInArrow`` writer tasks, driver
                 commit)

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
    """Write the packed rows with the engine, timing input, write() and prepare_commit(); the files are deleted
    after."""
    import pyarrow as pa

    from table_engine.spark.jobs import task_arrow_threads
    from table_engine.spark.packed import unpack
    from table_engine.spark.writer import ROUTING_COLUMNS, _coalesced
    from table_engine.store.writing.write import TableWrite

    task_arrow_threads()
    writer: TableWrite = table.new_write()
    t_input = t_write = 0.0
    it = iter(_coalesced(unpack(batches)))
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


def _drain_packed(batches: Iterator[Any]) -> Iterator[Any]:
    from table_engine.spark.packed import unpack

    yield from _drain(unpack(batches))


def _rows_route(df: Any, table: Any, parallelism: int) -> None:
    """The write route of main at baf9348: rows routed by ``prepare_write``, ``mapInArrow`` writer tasks, driver
    commit (private pieces of table_engine.spark.map_write, kept for this comparison)."""
    import functools

    from table_engine.spark.map_write import _RESULT_SCHEMA, _ListParam, _write_partition
    from table_engine.spark.writer import PaimonCommitMessage, _TableWriter, prepare_write

    routed, extra = prepare_write(df, table, parallelism)
    writer = _TableWriter(table, routed.schema, False, "bench-rows-route", extra)
    written = routed.sparkSession.sparkContext.accumulator([], _ListParam())
    rows = routed.mapInArrow(functools.partial(_write_partition, writer, written, False), _RESULT_SCHEMA).collect()
    import pickle

    writer.commit_job([PaimonCommitMessage(pickle.loads(r[0])) for r in rows], 1, None)


def _noop(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


def write_paths(spark: Any, df: Any, warehouse: str, work: Path, repeats: int, parallelism: int = 2,
                breakdown: bool = True) -> dict[str, Any]:
    """The breakdown for every table kind of :data:`TABLES` (``df`` cached, columns of bench_write_read.SCHEMA)."""
    import functools

    from benchmarks.bench_write_read import SCHEMA
    from table_engine import Catalog
    from table_engine.spark import write_dataframe
    from table_engine.spark.writer import prepare_write

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
            from table_engine.spark.packed import pack, routing

            unsorted, _ = prepare_write(df, probe, parallelism)
            plan = routing(probe, parallelism)
            assert plan is not None
            packed, _, _ = pack(df, probe, plan)
            stages["shuffle_s"] = note(f"{kind} rows shuffle", _best(lambda r=unsorted: _noop(r), repeats)[0])
            stages["to_python_s"] = note(f"{kind} rows to python", _best(
                lambda r=unsorted: r.mapInArrow(_drain, "rows long").collect(), repeats)[0])
            stages["packed_to_python_s"] = note(f"{kind} packed to python", _best(
                lambda p=packed: p.mapInArrow(_drain_packed, "rows long").collect(), repeats)[0])
            seconds, rows = _best(lambda p=packed, t=probe: p.mapInArrow(
                functools.partial(_engine_task, t, parallelism), _TIMED).collect(), repeats)
            stages["engine_task_s"] = note(f"{kind} engine task (packed input)", seconds)
            stages["engine_task_parts_s"] = parts = {
                k: sum(float(r[k]) for r in rows) for k in ("input", "write", "prepare_commit")}
            print(f"[write paths]   summed over tasks: {parts}", flush=True)

        def datasource(kind: str = kind, pks: list[str] = pks, options: dict[str, str] = options) -> None:
            t = catalog.create_table(f"paths.{kind}_ds_{next(counter)}", SCHEMA, primary_keys=pks, options=options)
            r, x = prepare_write(df, t, parallelism)   # as on main before issue 15
            r.write.format("paimon").mode("append").option("warehouse", warehouse).options(**x).save(t.identifier)

        def fast(kind: str = kind, pks: list[str] = pks, options: dict[str, str] = options) -> None:
            t = catalog.create_table(f"paths.{kind}_mw_{next(counter)}", SCHEMA, primary_keys=pks, options=options)
            write_dataframe(df, warehouse, t.identifier, parallelism=parallelism)

        def rows_route(kind: str = kind, pks: list[str] = pks, options: dict[str, str] = options) -> None:
            t = catalog.create_table(f"paths.{kind}_rr_{next(counter)}", SCHEMA, primary_keys=pks, options=options)
            _rows_route(df, t, parallelism)

        stages["datasource_s"] = note(f"{kind} datasource (before)", _best(datasource, repeats)[0])
        stages["rows_route_s"] = note(f"{kind} rows route (baf9348)", _best(rows_route, repeats)[0])
        stages["map_write_s"] = note(f"{kind} write_dataframe (after)", _best(fast, repeats)[0])
        stages["ratio_datasource"] = out["parquet_s"] / stages["datasource_s"]
        stages["ratio_rows_route"] = out["parquet_s"] / stages["rows_route_s"]
        stages["ratio_map_write"] = out["parquet_s"] / stages["map_write_s"]
        stages["ratio_map_write_zstd"] = out["parquet_zstd_s"] / stages["map_write_s"]
        out[kind] = stages
    return out


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Spark write paths, {report['rows']:,} rows: df.write.parquet {report['parquet_s']:.2f} s (snappy), "
             f"{report['parquet_zstd_s']:.2f} s (zstd)", ""]
    b = report["pk_bucket4"]
    if "shuffle_s" in b:
        lines.append(f"pk_bucket4 breakdown: rows shuffle {b['shuffle_s']:.2f} s, rows to python "
                     f"{b['to_python_s']:.2f} s, packed to python {b['packed_to_python_s']:.2f} s, engine task on "
                     f"packed input {b['engine_task_s']:.2f} s {b['engine_task_parts_s']}")
        lines.append("")
    lines += ["| table | datasource s | rows route s | write_dataframe s | ratio datasource | ratio rows route | "
              "ratio write_dataframe (snappy / zstd) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for kind in TABLES:
        s = report[kind]
        lines.append(f"| {kind} | {s['datasource_s']:.2f} | {s['rows_route_s']:.2f} | {s['map_write_s']:.2f} | "
                     f"{s['ratio_datasource']:.2f}x | {s['ratio_rows_route']:.2f}x | "
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
