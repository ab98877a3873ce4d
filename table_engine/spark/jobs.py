"""The Spark side of the application's commands, and DataFrame writes routed for the table.

``write`` reads its source with Spark and writes through the ``paimon`` data source (tasks write files, the job
commits once); ``compact`` plans the buckets on the driver, compacts groups of buckets in Spark tasks (one bucket
at a time per task: Spark's cores are the parallelism) and commits their results as one COMPACT snapshot from the
driver; ``consume-changelog`` reads the changes as an incremental audit-log read and writes them with Spark. The
other commands only touch metadata and run on the driver as the local CLI does.

S3 warehouses: the command's catalog options (``--catalog-option``) reach every catalog opened here and every read
or write of the ``paimon`` data source; the tables that Spark tasks receive carry the driver's AWS credentials when
the options have none (:func:`table_engine.spark.options.catalog_options`), so executors need no credentials of
their own.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField

from table_engine import clock
from table_engine.catalog import Catalog
from table_engine.core_options import default_commit_user
from table_engine.errors import CommandError, CommitConflictError
from table_engine.features import Op
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.ops import Command, Compact, ConsumeChangelog, Write
from table_engine.ops.base import entry, registers
from table_engine.ops.commands import snapshot_properties_of
from table_engine.ops.consume import (
    DELIVERY_FILE,
    ChangeRange,
    advance_consumer,
    change_range,
    consume_commit_user,
    delivery_record,
    output_dir,
    output_file_io,
    publish,
    recover_consumer,
    redelivery,
    staging_dir,
    write_output,
)
from table_engine.ops.facts import commit_facts
from table_engine.ops.run import commit_user, compact_result, ensure_table, open_catalog, previous_commit, write_result
from table_engine.spark import options as o
from table_engine.spark.commit import GENERATED_USER_SLACK_MS, commit_once
from table_engine.spark.compat import has_data_sources, is_connect
from table_engine.spark.map_write import map_write
from table_engine.spark.types import arrow_schema_for, conform, spark_schema
from table_engine.spark.writer import prepare_write
from table_engine.store.changes.incremental import ROWKIND_COLUMN, ChangeSplit, iter_changes, plan_changes
from table_engine.store.committing import snapshot_info
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.committing.scoped_properties import snapshot_properties_scope
from table_engine.store.compaction.compact import BucketFiles, compact_buckets, plan_compaction
from table_engine.store.compaction.select import table_buckets
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs
from table_engine.store.writing.postpone_compact import is_postpone_table
from table_engine.table import Table

log = logging.getLogger(__name__)

_CHANGE_BATCH_ROWS = 262_144

__all__ = ["prepare_write", "write_dataframe"]


def write_dataframe(df: DataFrame, warehouse: str, identifier: str, mode: str = "append", *,
                    commit_user: str | None = None, commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
                    parallelism: int | None = None, options: Mapping[str, str] | None = None,
                    catalog_options: Mapping[str, str] | None = None) -> int | None:
    """Write ``df`` into table ``identifier`` of ``warehouse`` (routed by :func:`prepare_write`); the new snapshot id.

    ``mode``: ``append`` or ``overwrite`` (dynamic partition overwrite). With ``commit_user`` given, a repeated call
    with the same user and ``commit_identifier`` commits nothing new and returns the earlier snapshot.
    ``catalog_options``: the warehouse's storage options (``s3.*``), given to the data source too.
    """
    given = dict(catalog_options or {})
    table = Catalog(warehouse, given | o.catalog_options(warehouse, given)).get_table(identifier)
    if mode not in ("append", "overwrite"):
        raise o.DataSourceOptionError(f"write mode {mode!r}: use 'append' or 'overwrite'")
    table.check_supported(Op.WRITE)  # the capability gate, before any task writes a file
    user = default_commit_user(table.options, commit_user)
    routed, extra = prepare_write(df, table, parallelism)
    started = clock.now_millis()
    # tasks write through mapInArrow and the driver commits (table_engine.spark.map_write): no Python data source
    map_write(routed, table, overwrite=mode == "overwrite", commit_user=user, identifier=commit_identifier,
              generated_at=None if commit_user else started, options={**extra, **dict(options or {})})
    snap = snapshot_info.find_commit(table.file_io, table.path, user, commit_identifier,
                                     since_millis=None if commit_user else started - GENERATED_USER_SLACK_MS)
    return None if snap is None else snap.id


# ---- commands -----------------------------------------------------------------------------------------------------
def run_spark_job(cmd: Command, spark: SparkSession) -> dict[str, Any]:
    """Run ``cmd`` (a command whose class is a ``spark_job``) as a Spark job: its entry's ``spark``
    (:class:`~table_engine.ops.base.CommandEntry`, registered here)."""
    job = entry(type(cmd), "spark").spark
    if job is None:
        raise CommandError(f"{cmd.name} is not a Spark job")
    with snapshot_properties_scope(snapshot_properties_of(cmd)):
        return job(cmd, spark)


@registers("spark", Write)
def spark_write(args: Write, spark: SparkSession) -> dict[str, Any]:
    if args.sql:
        df = spark.sql(args.sql)
    else:
        reader = spark.read.format(args.format).options(**dict(args.source_options))
        if args.format == "csv":
            reader = reader.option("header", "true").option("inferSchema", "true").options(**dict(args.source_options))
        df = reader.load(args.source)
    table, created = ensure_table(args, open_catalog(args), arrow_schema_for(df.schema))
    user = commit_user(args, table)
    done = previous_commit(table, user) if args.commit_user else None
    if done is not None:
        log.info("%s: commit user %s committed snapshot %d already; nothing to do", table.identifier, user, done)
        return write_result(table, done, created, skipped=True)
    sid = write_dataframe(df, args.warehouse, args.table, args.mode, commit_user=user, parallelism=args.parallelism,
                          catalog_options=args.catalog_options)
    log.info("%s: wrote snapshot %s", table.identifier, sid)
    return write_result(table, sid, created)


def driver_catalog(cmd: Command) -> Catalog:
    """The command's catalog, with the driver's AWS credentials captured for the tasks (S3 warehouses)."""
    return Catalog(cmd.warehouse, dict(cmd.catalog_options) | o.catalog_options(cmd.warehouse, cmd.catalog_options))


@registers("spark", Compact)
def spark_compact(args: Compact, spark: SparkSession) -> dict[str, Any]:
    table = driver_catalog(args).get_table(args.table)
    sid = compact_table(spark, table, full=args.full, partitions=list(args.partitions) or None,
                        idle_time_ms=args.idle_time_millis, commit_user=args.commit_user,
                        parallelism=args.parallelism, buckets=args.buckets)
    return compact_result(table, sid)


def compact_table(spark: SparkSession, table: Table, full: bool = False,
                  partitions: PartitionSpecs | None = None, idle_time_ms: int | None = None,
                  commit_user: str | None = None, parallelism: int | None = None,
                  buckets: Collection[int] | str | None = None) -> int | None:
    """Compact ``table`` with Spark tasks; the COMPACT snapshot id (None when nothing needed compacting).

    ``full``: every bucket into one sorted run (else a minor compaction: Paimon's universal picker per bucket).
    ``partitions``: only partitions matching one of these specs (typed against the partition columns on the driver;
    a spec that matches no partition is a PartitionSpecError). ``idle_time_ms``: only partitions that got no new
    data files for that long. ``buckets``: only these buckets of a fixed-bucket table (Paimon's ``'0-99,200-299'``).
    The driver plans the buckets, tasks compact groups of them, the driver commits.
    """
    table._check_writable("compact")  # before any task writes a compacted file into a read-only table
    table.check_supported(Op.MAINTAIN)  # the capability gate, before any task writes
    started = clock.now_millis()
    ctx = _store_context(table)
    wanted = table_buckets(ctx, buckets)  # only fixed-bucket tables have them: fails before any task runs
    if is_postpone_table(ctx):  # assigning postponed rows to buckets: one job on the driver (docs/postpone_bucket.md)
        return table.compact(full, partitions, idle_time_ms, commit_user)
    plan = plan_compaction(ctx, partitions, idle_time_ms, buckets=wanted)
    if not plan:
        return None
    groups = _balanced_groups(plan, parallelism or spark.sparkContext.defaultParallelism)
    log.info("%s: compacting %d buckets in %d tasks", table.identifier, len(plan), len(groups))
    rdd = spark.sparkContext.parallelize(groups, len(groups))
    messages: list[CommitMessage] = rdd.flatMap(lambda group: _compact_group(table, group, full)).collect()
    if not messages:
        return None
    user = default_commit_user(table.options, commit_user)
    try:
        return commit_once(table, messages, user, BATCH_COMMIT_IDENTIFIER,
                           generated_at=started if commit_user is None else None)
    except CommitConflictError:
        log.error("%s: a concurrent commit changed files being compacted; the compaction was discarded",
                  table.identifier)
        raise


def _compact_group(table: Table, group: Sequence[BucketFiles], full: bool) -> list[CommitMessage]:
    """Task side: compact the buckets of ``group`` one after the other, on the task's cores."""
    task_arrow_threads()
    return compact_buckets(_store_context(table), group, full, threads=1)


def task_arrow_threads() -> int:
    """Size Arrow's CPU thread pool in this Python worker to the running task's cores (``spark.task.cpus``), as a
    JVM task uses its own cores only: an executor with N cores runs N tasks, and each would otherwise decode and
    encode Parquet with N threads of its own. Outside a task nothing changes. The pool size in effect."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is not None:
        cpus = max(1, int(ctx.cpus()))
        if pa.cpu_count() != cpus:
            pa.set_cpu_count(cpus)
    return int(pa.cpu_count())


def _balanced_groups(plan: Sequence[BucketFiles], n: int) -> list[list[BucketFiles]]:
    """At most ``n`` groups of buckets with similar total file sizes (largest first, each to the lightest group)."""
    groups: list[list[BucketFiles]] = [[] for _ in range(max(1, min(n, len(plan))))]
    sizes = [0] * len(groups)
    for b in sorted(plan, key=lambda b: -sum(f.file_size for f in b.files)):
        i = sizes.index(min(sizes))
        groups[i].append(b)
        sizes[i] += sum(f.file_size for f in b.files)
    return groups


@registers("spark", ConsumeChangelog)
def spark_consume_changelog(args: ConsumeChangelog, spark: SparkSession) -> dict[str, Any]:
    catalog = open_catalog(args)
    table = catalog.get_table(args.table)
    table._check_no_consumer(args.consumer_id)  # a system table records no consumer: refuse before any output
    table.check_supported(Op.MAINTAIN)  # the capability gate: changelog consumption records progress
    again = redelivery(args, table, catalog.get_table(args.target_table) if args.target_table else None)
    if again is not None:
        return again
    if args.target_table:
        target = catalog.get_table(args.target_table)
        target.check_supported(Op.WRITE)
        recover_consumer(args, table, target)
    rng = change_range(args, table)
    result: dict[str, Any] = {"consumer_id": args.consumer_id, "from_snapshot": rng.start + 1,
                              "to_snapshot": rng.end, "rows": 0}
    if rng.empty:
        return result
    changes = change_frame(spark, args, rng)
    if args.output and not output_file_io(args).has_directories:
        # an object store: Spark's file writers would need Hadoop's S3A connector; the driver writes the changes
        # through the engine's FileIO instead (files, then _SUCCESS by a conditional create)
        arrow = to_arrow(changes)
        result["rows"] = arrow.num_rows
        result["output"] = write_output(arrow, output_dir(args, rng), args.output_format, args.consumer_id,
                                        output_file_io(args), delivery_record(args, rng, arrow.num_rows))
    elif args.output:
        directory = output_dir(args, rng)
        staging = staging_dir(directory, args.consumer_id)
        changes.write.mode("overwrite").format(args.output_format).save(staging)  # the committer writes _SUCCESS
        result["rows"] = spark.read.format(args.output_format).load(staging).count()
        record = delivery_record(args, rng, result["rows"])
        if record is not None:
            output_file_io(args).write_bytes(f"{staging}/{DELIVERY_FILE}", record, overwrite=True)
        publish(staging, directory, output_file_io(args))
        result["output"] = directory
    else:
        result.update(_apply_changes(changes, args, rng))
    advance_consumer(table, args.consumer_id, rng)
    return result


def change_frame(spark: SparkSession, args: ConsumeChangelog, rng: ChangeRange) -> DataFrame:
    """The changes of ``rng`` as an audit-log DataFrame (``rowkind`` first): read by the ``paimon`` data source on
    Spark 4, by ``mapInArrow`` tasks over the change splits planned on the driver on Spark 3.5 (no Python data
    sources there) and over Spark Connect (where the source's planning runs in a new Python process of the server
    for each query, seconds apiece; here the client plans); the same rows either way, one task per (partition,
    bucket) split."""
    if has_data_sources() and not is_connect(spark):
        return (spark.read.format(o.SOURCE_NAME).option(o.WAREHOUSE, args.warehouse)
                .options(**dict(args.catalog_options)).option(o.AUDIT_LOG, "true")
                .option(o.INCREMENTAL_BETWEEN, f"{rng.start},{rng.end}").load(args.table))
    table = driver_catalog(args).get_table(args.table)
    table._refuse_change_reads("incremental reads")
    splits = plan_changes(table.file_io, table.path, table.schema, table.options, rng.start, rng.end)
    schema = spark_schema(table.schema.fields, [StructField(ROWKIND_COLUMN, StringType(), False)])
    task = functools.partial(_read_change_splits, table, splits, arrow_schema_for(schema))
    return spark.range(len(splits), numPartitions=max(1, len(splits))).mapInArrow(task, schema)


def _read_change_splits(table: Table, splits: Sequence[ChangeSplit], schema: pa.Schema,
                        batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task side of :func:`change_frame` on Spark 3.5: the changes of the splits whose indexes the task got."""
    ctx = _store_context(table)
    for batch in batches:
        for i in batch.column(0).to_pylist():
            for changes in iter_changes(ctx, splits[i], (), _CHANGE_BATCH_ROWS):
                if changes.num_rows:
                    yield conform(changes, schema)


def to_arrow(df: DataFrame) -> pa.Table:
    """``df`` collected as an Arrow table on the driver (``DataFrame.toArrow`` is Spark 4.0+)."""
    frame: Any = df
    if hasattr(frame, "toArrow"):
        arrow: pa.Table = frame.toArrow()
        return arrow
    return pa.Table.from_batches(frame._collect_as_arrow(), schema=arrow_schema_for(df.schema))  # Spark 3.5


def _apply_changes(changes: DataFrame, args: ConsumeChangelog, rng: ChangeRange) -> dict[str, Any]:
    target_table = str(args.target_table)  # the output group: --target-table is given when --output is not
    target = open_catalog(args).get_table(target_table)
    sid = write_dataframe(changes, args.warehouse, target_table, commit_user=consume_commit_user(args),
                          commit_identifier=rng.end, options={o.ROWKIND_COLUMN: ROWKIND_COLUMN},
                          catalog_options=args.catalog_options)
    facts = commit_facts(target, sid)  # as the driver route's (ops.consume): the same result either way
    return {"target_snapshot_id": sid, "rows": facts.get("added_rows", 0), "commit": facts}


def _store_context(table: Table) -> StoreContext:
    return StoreContext(table.file_io, table.path, table.schema, table.options)
