"""The Spark side of the application's commands, and DataFrame writes routed for the table.

``write`` hands source files the engine reads to tasks that write them without Spark rows
(:mod:`table_engine.spark.jobs.file_write`), else reads the source with Spark and writes the DataFrame (tasks write
files, the job commits once); ``compact`` plans the buckets on the driver, compacts groups of buckets in Spark
tasks (one bucket at a time per task: Spark's cores are the parallelism) and commits their results as one COMPACT
snapshot from the driver; ``consume-changelog`` reads the changes as an incremental audit-log read and writes them
with Spark (into a target table: tasks read the change splits with the engine and write them, as the file route
does). The other commands only touch metadata and run on the driver as the local CLI does.

S3 warehouses: the command's catalog options (``--catalog-option``) reach every catalog opened here and every read
or write of the ``paimon`` data source; the tables that Spark tasks receive carry the driver's AWS credentials when
the options have none (:func:`table_engine.spark.datasource.options.catalog_options`), so executors need no
credentials of their own.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField

from table_engine.catalog import Catalog, create_catalog
from table_engine.core_options import CommitUser, default_commit_user
from table_engine.errors import CommandError
from table_engine.features import Op
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.ops import Command, Compact, ConsumeChangelog, MergeInto, Write
from table_engine.ops.base import entry, registers
from table_engine.ops.commands import snapshot_properties_of
from table_engine.ops.consume import (
    DELIVERY_FILE,
    ChangeRange,
    Prepared,
    advance_consumer,
    consume_commit_user,
    delivery_record,
    output_dir,
    output_file_io,
    prepare,
    publish,
    staging_dir,
    write_output,
)
from table_engine.ops.facts import write_facts
from table_engine.ops.run import (
    commit_user,
    compact_result,
    ensure_table,
    format_target,
    merge_write_schema,
    open_catalog,
    previous_commit,
    run_command,
    source_dataset,
    write_result,
)
from table_engine.spark.compat import default_parallelism, has_data_sources, is_connect
from table_engine.spark.datasource import options as o
from table_engine.spark.datasource.spark_types import arrow_schema_for, conform, spark_schema
from table_engine.spark.datasource.writer import is_dynamic_bucket, prepare_write, writer_tasks
from table_engine.spark.jobs import file_write
from table_engine.spark.jobs.compact_job import compact_table, run_compaction
from table_engine.spark.jobs.map_write import map_write
from table_engine.spark.jobs.task_env import task_arrow_threads
from table_engine.store.changes.incremental import ROWKIND_COLUMN, ChangeSplit, iter_changes, plan_changes
from table_engine.store.committing import snapshot_info
from table_engine.store.committing.scoped_properties import snapshot_properties_scope
from table_engine.store.compaction.sort_compact import SortOrder
from table_engine.store.context import StoreContext
from table_engine.table import Table
from table_engine.table.guards import check_change_reads, check_supported

log = logging.getLogger(__name__)

_CHANGE_BATCH_ROWS = 262_144

__all__ = ["compact_table", "driver_catalog", "prepare_write", "source_frame", "task_arrow_threads", "write_dataframe"]


def write_dataframe(df: DataFrame, warehouse: str, identifier: str, mode: str = "append", *,
                    commit_user: str | CommitUser | None = None, commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
                    parallelism: int | None = None, options: Mapping[str, str] | None = None,
                    catalog_options: Mapping[str, str] | None = None) -> int | None:
    """Write ``df`` into table ``identifier`` of ``warehouse`` (routed by :func:`prepare_write`); the new snapshot id.

    ``mode``: ``append`` or ``overwrite`` (dynamic partition overwrite). With ``commit_user`` given, a repeated call
    with the same user and ``commit_identifier`` commits nothing new and returns the earlier snapshot.
    ``catalog_options``: the warehouse's storage options (``s3.*``), given to the data source too.
    """
    given = dict(catalog_options or {})
    table = create_catalog(warehouse, given | o.catalog_options(warehouse, given)).get_table(identifier)
    if mode not in ("append", "overwrite"):
        raise o.DataSourceOptionError(f"write mode {mode!r}: use 'append' or 'overwrite'")
    check_supported(table, Op.WRITE)  # the capability gate, before any task writes a file
    user = default_commit_user(table.options, commit_user)
    routed, extra = prepare_write(df, table, parallelism)
    # tasks write through mapInArrow and the driver commits (table_engine.spark.jobs.map_write): no Python data source
    map_write(routed, table, overwrite=mode == "overwrite", commit_user=user, identifier=commit_identifier,
              options={**extra, **dict(options or {})})
    snap = snapshot_info.find_commit(table.file_io, table.path, user.name, commit_identifier,
                                     since_millis=user.since_millis)
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
    """The ``write`` job: files the engine reads go to tasks that write them without Spark rows
    (:mod:`table_engine.spark.jobs.file_write`, ADR 0036); a query, other formats and the tables that route needs to
    refuse are read by Spark and written as a DataFrame (:func:`write_dataframe`)."""
    catalog = open_catalog(args)
    if format_target(args, catalog) is not None:  # a format table: its files written by the engine, on the driver
        if args.sql:
            raise CommandError(f"write --sql into format table {args.table} is not implemented: write the query's "
                               "rows to files and give them as --source")
        return run_command(args, catalog)
    df = None if not args.sql and catalog.table_exists(args.table) else source_frame(spark, args)
    table, created = ensure_table(args, catalog, arrow_schema_for(df.schema) if df is not None else pa.schema([]))
    user = commit_user(args, table)
    done = previous_commit(table, user) if args.commit_user else None
    if done is not None:
        log.info("%s: commit user %s committed snapshot %d already; nothing to do", table.identifier, user, done)
        return write_result(table, done, created, skipped=True)
    if not created:  # write.merge-schema: the table takes the source's columns before any task writes
        merge_write_schema(args, table, lambda: arrow_schema_for(df.schema) if df is not None
                           else source_dataset(args).schema)
    plan = None if args.sql else _file_plan(args, spark)
    if plan is not None:
        task_table = driver_catalog(args).get_table(args.table)  # with the driver's credentials for the tasks
        check_supported(task_table, Op.WRITE)  # the capability gate, before any task writes a file
        sid = file_write.write_files(spark, task_table, plan, overwrite=args.mode == "overwrite", commit_user=user,
                                     identifier=BATCH_COMMIT_IDENTIFIER)
    else:
        df = df if df is not None else source_frame(spark, args)
        sid = write_dataframe(df, args.warehouse, args.table, args.mode, commit_user=user,
                              parallelism=args.parallelism, catalog_options=args.catalog_options)
    log.info("%s: wrote snapshot %s", table.identifier, sid)
    return write_result(table, sid, created)


def source_frame(spark: SparkSession, args: Write | MergeInto) -> DataFrame:
    """The rows of ``--sql`` or ``--source`` as Spark reads them."""
    if args.sql:
        return spark.sql(args.sql)
    reader = spark.read.format(args.format).options(**dict(args.source_options))
    if args.format == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true").options(**dict(args.source_options))
    return reader.load(args.source)


def _file_plan(args: Write, spark: SparkSession) -> file_write.FileWritePlan | None:
    """The file route's plan of ``args`` (None: the DataFrame route, logged with the reason)."""
    table = driver_catalog(args).get_table(args.table)
    reason = file_write.refusal(table, args.format, args.source_options)
    storage = dict(args.catalog_options) | o.catalog_options(args.source, args.catalog_options)
    tasks = writer_tasks(table, args.parallelism, spark) if is_dynamic_bucket(table) else \
        args.parallelism or default_parallelism(spark)
    plan = None if reason else file_write.plan_file_write(table, args.format, str(args.source), storage, tasks)
    if plan is None:
        log.info("%s: %s source through Spark rows: %s", table.identifier, args.format,
                 reason or "the source has subdirectories")
    return plan



def driver_catalog(cmd: Command) -> Catalog:
    """The command's catalog, the one its ``metastore`` option names (:func:`table_engine.catalog.create_catalog`:
    the tables it opens on the driver commit under the metastore's lock with ``lock.enabled``), with the driver's
    AWS credentials captured for the tasks (S3 warehouses)."""
    return create_catalog(cmd.warehouse,
                          dict(cmd.catalog_options) | o.catalog_options(cmd.warehouse, cmd.catalog_options))


@registers("spark", Compact)
def spark_compact(args: Compact, spark: SparkSession) -> dict[str, Any]:
    table = driver_catalog(args).get_table(args.table)
    report = run_compaction(spark, table, full=args.full, partitions=list(args.partitions) or None,
                            idle_time_ms=args.idle_time_millis, commit_user=args.commit_user,
                            parallelism=args.parallelism, buckets=args.buckets,
                            order=SortOrder.parse(args.order_strategy, args.order_by))
    # where the tasks ran: the executors (host:pid of their JVM) and the tasks' number
    return compact_result(table, report.snapshot_id) | {
        "spark": {"tasks": len(report.tasks), "executors": sorted(report.executors)}}


@registers("spark", ConsumeChangelog)
def spark_consume_changelog(args: ConsumeChangelog, spark: SparkSession) -> dict[str, Any]:
    """The ``consume-changelog`` job: the local runner's guards, redelivery and recovery
    (:func:`~table_engine.ops.consume.prepare`), then the changes read and delivered with Spark."""
    prepared = prepare(args, open_catalog(args))
    if not isinstance(prepared, Prepared):
        return prepared
    table, rng, result = prepared.table, prepared.range, prepared.result
    if not args.output:
        result.update(_apply_changes(spark, args, rng))
        advance_consumer(table, args.consumer_id, rng)
        return result
    changes = change_frame(spark, args, rng)
    if not output_file_io(args).has_directories:
        # an object store: Spark's file writers would need Hadoop's S3A connector; the driver writes the changes
        # through the engine's FileIO instead (files, then _SUCCESS by a conditional create)
        arrow = to_arrow(changes)
        result["rows"] = arrow.num_rows
        result["output"] = write_output(arrow, output_dir(args, rng), args.output_format, args.consumer_id,
                                        output_file_io(args), delivery_record(args, rng, arrow.num_rows))
    else:
        directory = output_dir(args, rng)
        staging = staging_dir(directory, args.consumer_id)
        changes.write.mode("overwrite").format(args.output_format).save(staging)  # the committer writes _SUCCESS
        result["rows"] = spark.read.format(args.output_format).load(staging).count()
        record = delivery_record(args, rng, result["rows"])
        if record is not None:
            output_file_io(args).write_bytes(f"{staging}/{DELIVERY_FILE}", record, overwrite=True)
        publish(staging, directory, output_file_io(args))
        result["output"] = directory
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
    check_change_reads(table, "incremental reads")
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


def _apply_changes(spark: SparkSession, args: ConsumeChangelog, rng: ChangeRange) -> dict[str, Any]:
    """Apply the changes of ``rng`` to ``--target-table``: tasks read the change splits with the engine and write
    them with their row kinds (:func:`table_engine.spark.jobs.file_write.write_changes`, no Spark rows); targets that
    route needs to refuse (:func:`~table_engine.spark.jobs.file_write.refusal`) get the audit-log DataFrame written."""
    target_table = str(args.target_table)  # the output group: --target-table is given when --output is not
    target = driver_catalog(args).get_table(target_table)  # with the driver's credentials for the tasks
    reason = file_write.refusal(target)
    if reason is None:
        source = driver_catalog(args).get_table(args.table)  # prepare() refused a data-evolution source
        splits = plan_changes(source.file_io, source.path, source.schema, source.options, rng.start, rng.end)
        sid = file_write.write_changes(spark, source, splits, target, default_parallelism(spark),
                                       commit_user=consume_commit_user(args), identifier=rng.end)
    else:
        log.info("%s: changes applied through Spark rows: %s", target.identifier, reason)
        sid = write_dataframe(change_frame(spark, args, rng), args.warehouse, target_table,
                              commit_user=consume_commit_user(args), commit_identifier=rng.end,
                              options={o.ROWKIND_COLUMN: ROWKIND_COLUMN}, catalog_options=args.catalog_options)
    facts = write_facts(target, sid)  # as the driver route's (ops.consume): the same result either way
    return {"target_snapshot_id": sid, "rows": facts.get("added_rows", 0), "commit": facts}


def _store_context(table: Table) -> StoreContext:
    return table.store
