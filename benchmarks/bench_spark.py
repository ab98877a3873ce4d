"""Spark benchmark: the ``paimon`` data source against Spark's own Parquet source, and distributed compaction.

Workload: ``--rows`` rows (default 5,000,000) of ``benchmarks/bench_write_read.py``'s schema (BIGINT key ``id``,
INT, DOUBLE, STRING, DATE, DECIMAL(10,2), TIMESTAMP(6), BOOLEAN), seeded.

read     a table read through ``spark.read.format("paimon")`` vs ``spark.read.parquet`` of the very same data
         files; both consumed by Spark's ``noop`` sink. Tables: an append table (no buckets) and a primary-key table
         with ``bucket`` = 4, each written by one 2-task Spark job (no overlapping files: a read needs no merge).
write    a cached DataFrame written with ``df.write.format("paimon")`` (append table; and a fixed-bucket
         primary-key table through ``write_dataframe``, which routes rows by bucket) vs ``df.write.parquet``.
floor    both also run against a bare Python data source that only moves pyarrow batches from/to the same
         Parquet files (``BareParquetSource``): the best any Python data source can do, so "paimon vs bare"
         is the engine's own cost and "ratio" includes the cost of Spark's Python data source API.
compact  a full compaction of a primary-key table (8 buckets, 4 commits of all ``--rows`` keys each) with
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

from pyspark.sql.datasource import (  # noqa: E402
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from benchmarks import spark_read_paths  # noqa: E402
from benchmarks.bench_write_read import SCHEMA, make_rows  # noqa: E402
from benchmarks.spark_write_paths import markdown as write_paths_markdown  # noqa: E402
from benchmarks.spark_write_paths import write_paths  # noqa: E402

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
# The floor of the Python Data Source API: a bare source/sink that only moves pyarrow batches to/from files. The
# paimon source cannot be faster than this; comparing with it separates the engine's cost from Spark's.
class _BareReader(DataSourceReader):
    def __init__(self, files: list[str], schema: Any) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        self.files = files
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(f) for f in self.files]

    def read(self, partition: InputPartition) -> Any:
        import pyarrow.parquet as pq

        table = pq.read_table(partition.value, columns=self.arrow_schema.names)
        for batch in table.to_batches(262_144):
            yield batch.cast(self.arrow_schema)


class _BareWriter(DataSourceArrowWriter):
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def write(self, iterator: Any) -> WriterCommitMessage:
        import uuid

        import pyarrow.parquet as pq

        writer = None
        for batch in iterator:
            if writer is None:
                writer = pq.ParquetWriter(f"{self.directory}/{uuid.uuid4()}.parquet", batch.schema,
                                          compression="zstd")
            writer.write_batch(batch)
        if writer is not None:
            writer.close()
        return WriterCommitMessage()


class BareParquetSource(DataSource):
    """``format("bare-parquet")``: reads ``files`` (comma list) / writes into ``path``, nothing else."""

    @classmethod
    def name(cls) -> str:
        return "bare-parquet"

    def schema(self) -> str:
        return self.options["schema"]

    def reader(self, schema: Any) -> DataSourceReader:
        return _BareReader(self.options["files"].split(","), schema)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceArrowWriter:
        return _BareWriter(self.options["path"])


def bench_io(rows: int, repeats: int, work: Path) -> dict[str, Any]:
    from table_engine import Catalog
    from table_engine.spark import write_dataframe

    rng = np.random.default_rng(7)
    data = make_rows(rng, rng.permutation(rows).astype(np.int64))
    spark = spark_session("local[2]")
    spark.dataSource.register(BareParquetSource)
    catalog = Catalog(str(work / "warehouse"))
    out: dict[str, Any] = {"read": {}, "write": {}}
    source = work / "source"
    spark.createDataFrame(data).write.parquet(str(source))
    df = spark.read.parquet(str(source)).cache()
    df.count()
    ddl = df.schema.simpleString()[len("struct<"):-1].replace(":", " ")

    def noop(frame: Any) -> None:
        frame.write.format("noop").mode("overwrite").save()

    for name, pks, options in (("append", [], {}), ("pk_bucket4", ["id"], {"bucket": "4"})):
        table = catalog.create_table(f"bench.read_{name}", SCHEMA, primary_keys=pks, options=options)
        write_dataframe(df, catalog.warehouse, table.identifier, parallelism=2)   # as a Spark job writes it
        files = data_files(table.path)
        paimon_df = spark.read.format("paimon").option("warehouse", catalog.warehouse).load(table.identifier)
        bare_df = spark.read.format("bare-parquet").option("files", ",".join(files)).option("schema", ddl).load()
        parquet_df = spark.read.parquet(*files)
        paimon_s = best(lambda f=paimon_df: noop(f), repeats)
        parquet_s = best(lambda f=parquet_df: noop(f), repeats)
        bare_s = best(lambda f=bare_df: noop(f), repeats)
        out["read"][name] = {"paimon_s": paimon_s, "parquet_s": parquet_s, "ratio": parquet_s / paimon_s,
                             "bare_python_source_s": bare_s, "ratio_to_bare": bare_s / paimon_s,
                             "files": len(files)}

    counter = iter(range(10**6))

    def parquet_write() -> None:
        df.write.mode("overwrite").parquet(str(work / f"out-{next(counter)}"))

    def bare_write() -> None:
        target = work / f"bare-{next(counter)}"
        target.mkdir()
        df.write.format("bare-parquet").mode("append").save(str(target))

    def paimon_append() -> None:
        ident = f"bench.write_append_{next(counter)}"
        catalog.create_table(ident, SCHEMA)
        df.write.format("paimon").mode("append").option("warehouse", catalog.warehouse).save(ident)

    def paimon_pk() -> None:
        ident = f"bench.write_pk_{next(counter)}"
        catalog.create_table(ident, SCHEMA, primary_keys=["id"], options={"bucket": "4"})
        write_dataframe(df, catalog.warehouse, ident, parallelism=2)

    parquet_s = best(parquet_write, repeats)
    bare_s = best(bare_write, repeats)
    for name, fn in (("append", paimon_append), ("pk_bucket4", paimon_pk)):
        paimon_s = best(fn, repeats)
        out["write"][name] = {"paimon_s": paimon_s, "parquet_s": parquet_s, "ratio": parquet_s / paimon_s,
                              "bare_python_source_s": bare_s, "ratio_to_bare": bare_s / paimon_s}
    out["write_paths"] = write_paths(spark, df, str(work / "paths"), work, repeats)  # the write breakdown
    spark.stop()
    return out


def read_paths_section(rows: int, repeats: int, work: Path) -> dict[str, Any]:
    spark = spark_session("local[2]")
    try:
        return spark_read_paths.bench_read_paths(spark, rows, repeats, work, best,
                                                 lambda f: f.write.format("noop").mode("overwrite").save())
    finally:
        spark.stop()


# ---- compaction -------------------------------------------------------------------------------------------------
def prepare_compaction(rows: int, work: Path) -> str:
    from table_engine import Catalog

    catalog = Catalog(str(work / "compact-src"))
    table = catalog.create_table("bench.compact", SCHEMA, primary_keys=["id"], options={"bucket": "8"})
    rng = np.random.default_rng(11)
    for _ in range(4):
        table.write(make_rows(rng, rng.permutation(rows).astype(np.int64)))
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
    from table_engine.spark.jobs.run import compact_table

    spark = spark_session(master)
    # start the executors' Python workers and import the engine in them: the time is compaction, not start-up
    cores = spark.sparkContext.defaultParallelism
    spark.sparkContext.parallelize(range(cores), cores).map(
        lambda _: bool(__import__("table_engine.store.compaction.compact"))).collect()
    table = open_table(table_path)
    start = time.perf_counter()
    sid = compact_table(spark, table, full=True)
    seconds = time.perf_counter() - start
    assert sid is not None
    spark.stop()
    print(json.dumps({"seconds": seconds}))


# ---- report -----------------------------------------------------------------------------------------------------
def write_report(out: Path | None, report: dict[str, Any]) -> int:
    """The end of a Spark benchmark's ``main``: the report as JSON in ``out`` (``--out``), if given; exit status 0."""
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2))
    return 0


def machine() -> dict[str, Any]:
    import pyarrow
    import pyspark

    return {"python": platform.python_version(), "pyspark": pyspark.__version__, "pyarrow": pyarrow.__version__,
            "cpus": os.cpu_count(), "platform": platform.platform(),
            "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Spark benchmark, {report['rows']:,} rows, {report['machine']['cpus']} CPUs, "
             f"PySpark {report['machine']['pyspark']}, load average {report['machine']['load_avg']} at the start, "
             f"{report['machine'].get('load_avg_end')} at the end", "",
             "| phase | table | paimon s | reference s | ratio | target | bare Python source s | paimon vs bare |",
             "|---|---|---|---|---|---|---|---|"]
    for phase in ("read", "write"):
        for table, r in report[phase].items():
            lines.append(f"| {phase} | {table} | {r['paimon_s']:.2f} | {r['parquet_s']:.2f} (parquet) | "
                         f"{r['ratio']:.2f}x | >= {TARGETS[phase]}x | {r['bare_python_source_s']:.2f} | "
                         f"{r['ratio_to_bare']:.2f}x |")
    c = report.get("compact")
    if c:
        lines.append(f"| compact | pk bucket=8 | {c['local2_s']:.2f} (local[2]) | {c['local1_s']:.2f} (local[1]) | "
                     f"{c['ratio']:.2f}x | >= {TARGETS['compact']}x | | |")
    if "write_paths" in report:
        lines += ["", write_paths_markdown(report["write_paths"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-compaction", action="store_true")
    parser.add_argument("--read-paths-rows", type=int, default=5_000_000, help="rows of the read-paths section")
    parser.add_argument("--only-read-paths", action="store_true", help="run only the read-paths section")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compact-child", nargs=2, metavar=("MASTER", "TABLE_PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compact_child:
        compact_child(*args.compact_child)
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    try:
        report: dict[str, Any] = {"rows": args.rows, "machine": machine(), "read": {}, "write": {}}
        if not args.only_read_paths:
            report.update(bench_io(args.rows, args.repeats, work))
        report["read_paths"] = read_paths_section(args.read_paths_rows, args.repeats, work)
        if not args.skip_compaction and not args.only_read_paths:
            src = prepare_compaction(args.rows, work)
            local1 = compact_run("local[1]", src, args.repeats, work)
            local2 = compact_run("local[2]", src, args.repeats, work)
            report["compact"] = {"local1_s": local1, "local2_s": local2, "ratio": local1 / local2}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["machine"]["load_avg_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    text = "\n".join([markdown(report), "", f"Read paths, {args.read_paths_rows:,} rows:", "",
                      *spark_read_paths.markdown(report["read_paths"])])
    print(text)
    return write_report(args.out, report)


if __name__ == "__main__":
    sys.exit(main())
