"""Spark read paths (issue 15): ``read_table`` (native Parquet reads of raw-convertible files) against
``spark.read.parquet`` of the same files and the ``paimon`` Python data source.

Tables (``--rows`` rows of ``bench_write_read``'s schema, written by the engine, ``bucket`` = 4 for primary keys):

* ``append``: an append table;
* ``pk_compacted``: a primary-key table after a full compaction (one sorted run per bucket: every file raw);
* ``pk_dv``: ``deletion-vectors.enabled``, then 10 % of the keys updated (their old rows deleted by vectors, the
  new ones compacted out of level 0 by the writer's lookup compaction): raw files, some with vectors;
* ``pk_dv_native_vectors``: ``pk_dv`` with ``native_deletion_vectors=True`` (the files with vectors read natively,
  anti-joined with their deleted row positions; by default they go through the Python source);
* ``pk_merge``: a primary-key table, then 10 % of the keys updated without compaction: overlapping files, read
  through the Python source (what needs a merge), the rest native.

Every read is consumed by Spark's ``noop`` sink, once untimed (warm-up), then in ``--repeats`` rounds that run
the reads one after the other (best of each); "parquet" reads the planned data files with ``spark.read.parquet``,
once inferring the schema and selecting the table's columns, once given the table's schema: the faster of the two is
the reference (for ``pk_dv`` and ``pk_merge`` it returns more rows than the table: it merges and deletes nothing, so
it is the floor, not an equal).
Ratios are throughput ratios against it (> 1: faster).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_write_read import SCHEMA, make_rows

READ_TARGET = 0.9
"""Goal for ``append`` and ``pk_compacted``: ``read_table`` at >= 0.9x ``spark.read.parquet``."""
TABLES = ("append", "pk_compacted", "pk_dv", "pk_merge")


def _build(catalog: Any, name: str, data: Any, rows: int) -> Any:
    pk = name != "append"
    options = {"bucket": "4"} if pk else {}
    if name == "pk_dv":
        options["deletion-vectors.enabled"] = "true"
    table = catalog.create_table(f"bench.paths_{name}", SCHEMA, primary_keys=["id"] if pk else [], options=options)
    step = 1_000_000
    for lo in range(0, rows, step):
        table.write(data.slice(lo, step))
    if name == "pk_compacted":
        table.maintenance.compact(full=True)
    if name in ("pk_dv", "pk_merge"):
        if name == "pk_dv":
            table.maintenance.compact(full=True)
        rng = np.random.default_rng(11)
        ids = np.sort(rng.choice(rows, rows // 10, replace=False)).astype(np.int64)
        table.write(make_rows(rng, ids))
    return table


def _files(table: Any) -> list[str]:
    from table_engine.store.paths import file_path_in

    return [file_path_in(table.path, table.schema, s.partition_values, s.bucket, f,
                         table.options.partition_default_name()) for s in table.plan() for f in s.files]


def bench_read_paths(spark: Any, rows: int, repeats: int, work: Path,
                     best: Any, noop: Any) -> dict[str, Any]:
    """One row per table: seconds of parquet / read_table / Python source, their ratios and what went native."""
    from table_engine import Catalog
    from table_engine.spark.datasource.native_read import read_table_planned

    rng = np.random.default_rng(7)
    data = make_rows(rng, rng.permutation(rows).astype(np.int64))
    catalog = Catalog(str(work / "paths-warehouse"))
    catalog.create_database("bench", ignore_if_exists=True)
    columns = list(SCHEMA.names)
    out: dict[str, Any] = {}
    for name in (*TABLES, "pk_dv_native_vectors"):
        vectors = name == "pk_dv_native_vectors"
        table = catalog.get_table("bench.paths_pk_dv") if vectors else _build(catalog, name, data, rows)
        files = _files(table)
        native_df, info = read_table_planned(spark, table.identifier, warehouse=catalog.warehouse,
                                             native_deletion_vectors=vectors)
        python_df = spark.read.format("paimon").option("warehouse", catalog.warehouse).load(table.identifier)
        parquet_inferred_df = spark.read.parquet(*files).select(*columns)
        # the same files with the table's schema given (no inference; Spark's reader then reads only those columns)
        parquet_df = spark.read.schema(native_df.schema).parquet(*files)
        # one untimed warm-up read of each (the JVM's first reads of a table were up to 3x slower), then rounds
        # that interleave the reads (best of each), so load swings hit them alike
        frames = (parquet_inferred_df, parquet_df, native_df, python_df)
        for f in frames:
            noop(f)
        runs = [tuple(best(lambda f=f: noop(f), 1) for f in frames) for _ in range(repeats)]
        inferred_s, given_s, native_s, python_s = (min(r[i] for r in runs) for i in range(4))
        parquet_s = min(inferred_s, given_s)  # the faster of the two is the reference
        out[name] = {"parquet_s": parquet_s, "parquet_inferred_schema_s": inferred_s,
                     "parquet_given_schema_s": given_s, "read_table_s": native_s, "python_source_s": python_s,
                     "read_table_ratio": parquet_s / native_s, "python_source_ratio": parquet_s / python_s,
                     "files": len(files), "native_files": info.native_files, "python_files": info.python_files}
        print(f"read paths: {name}: {out[name]}", flush=True)
    return out


def markdown(result: dict[str, Any]) -> list[str]:
    lines = ["| table | files (native / Python) | parquet s (inferred / given schema) | read_table s | ratio | "
             "Python source s | ratio | goal |", "|---|---|---|---|---|---|---|---|"]
    for name, r in result.items():
        goal = f">= {READ_TARGET}x" if name in ("append", "pk_compacted") else ""
        lines.append(f"| {name} | {r['files']} ({r['native_files']} / {r['python_files']}) | {r['parquet_s']:.2f} "
                     f"({r['parquet_inferred_schema_s']:.2f} / {r['parquet_given_schema_s']:.2f}) | "
                     f"{r['read_table_s']:.2f} | {r['read_table_ratio']:.2f}x | {r['python_source_s']:.2f} | "
                     f"{r['python_source_ratio']:.2f}x | {goal} |")
    return lines
