"""Small jobs on the driver: a Spark-job command whose input is tiny runs with the engine in the application's
driver process, without starting a SparkContext.

For a few rows, a Spark job costs far more than its work: the SparkContext and SQL session (seconds), a Python
worker per task, the data source's round trips. With :data:`DRIVER_JOB_MAX_INPUT_SIZE` set (a Spark conf of the
application, e.g. ``--conf spark.paimon.driver-job.max-input-size=8mb``), ``app.py`` runs these commands exactly
as the engine's CLI does (:func:`table_engine.ops.run.run_command`), on the driver, when their input is at most that
size:

* ``write`` of a ``parquet`` or ``orc`` source (a file, or a directory of files without subdirectories: Spark
  would add partition columns from ``k=v`` subdirectories) in ``append`` mode, without source options. A write
  that creates its table gives it the schema Spark would read (every column nullable), so only sources of flat
  columns that Spark reads as they are qualify for that (booleans, signed integers, floats, strings, binaries,
  dates, decimals; not timestamps, unsigned or nested types). Input: the source files' sizes (files whose names
  start with ``_`` or ``.`` are skipped, by Spark and pyarrow alike).
* ``compact``: input is the live data files of the buckets to compact (of the selected partitions); with nothing to
  compact the command ends at once either way.
* ``consume-changelog`` into a ``--target-table`` (not ``--output`` files): input is the changed files of the
  snapshots not consumed yet; the result's ``rows`` is, as for the Spark job, the rows the target's commit added.

The provider (``provider/paimon_provider/hooks/spark.py``) reads the same conf: where the driver would run on the
Airflow worker (client mode, a ``local`` master), it runs a small job with :func:`run_on_driver` in the task's
process (``python -m table_engine.spark.jobs.driver_jobs`` when the job has an environment of its own) and does
not start spark-submit at all.

The table holds the same rows either way, and the result line has the same fields; data files may be cut
differently (the engine writes one file per bucket, Spark one per task and bucket). Unset or 0 (default): every
Spark-job command runs as a Spark job.
"""

from __future__ import annotations

import contextlib
import logging
import posixpath
import sys
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from table_engine.features import Op
from table_engine.ops import Command, Compact, ConsumeChangelog, MergeInto, Write
from table_engine.ops.base import entry, registers
from table_engine.options.config_option import ConfigOption, key
from table_engine.table.guards import check_supported

log = logging.getLogger(__name__)

DRIVER_JOB_MAX_INPUT_SIZE: ConfigOption[int] = key("spark.paimon.driver-job.max-input-size").memory_type() \
    .default_value(0).with_description(
        "Spark conf of the Spark application (table_engine/spark/app.py): a write of a parquet/orc source into an "
        "existing table, or a compaction, whose input is at most this size runs with the engine on the driver "
        "without starting a SparkContext (same rows and result fields, no Spark job overhead). 0: never.")
DRIVER_JOB_FORMATS = ("parquet", "orc")


def max_input_size(conf: dict[str, str]) -> int:
    """:data:`DRIVER_JOB_MAX_INPUT_SIZE` from a Spark conf (0 when unset)."""
    return int(DRIVER_JOB_MAX_INPUT_SIZE.value_from(conf))


def input_size(cmd: Command) -> int | None:
    """Bytes a Spark-job command would read, when it may run on the driver, by its entry's input-size rule
    (:class:`~table_engine.ops.base.CommandEntry`, registered here); None when it must be a Spark job (also when
    the input cannot be sized, e.g. a missing table: the job then reports the error)."""
    from table_engine.errors import TableEngineError

    try:
        rule = entry(type(cmd), "input_size").input_size
        return None if rule is None else rule(cmd)
    except (TableEngineError, OSError) as e:
        log.info("%s %s: input not sized (%s): a Spark job", cmd.name, cmd.table, e)
        return None


def run_on_driver(cmd: Command) -> dict[str, Any]:
    """Run ``cmd`` with the engine here, with the Spark job's result: by its entry's ``driver`` function
    (:class:`~table_engine.ops.base.CommandEntry`, registered here), else as the CLI does
    (:func:`~table_engine.ops.run.run_command`)."""
    from table_engine.ops.run import run_command

    run = entry(type(cmd), "driver").driver
    return run_command(cmd) if run is None else run(cmd)


def runs_on_driver(cmd: Command, limit: int) -> bool:
    """Whether ``cmd`` (a Spark-job command) runs on the driver under ``limit`` bytes of input."""
    if limit <= 0:
        return False
    size = input_size(cmd)
    if size is None or size > limit:
        return False
    log.info("%s %s: %d bytes of input (at most %s = %d): running on the driver, not as a Spark job", cmd.name,
             cmd.table, size, DRIVER_JOB_MAX_INPUT_SIZE.key, limit)
    return True


@registers("driver", Write)
def _write_on_driver(cmd: Write) -> dict[str, Any]:
    """A write that creates its table creates it first, with the schema the Spark job would give it."""
    from table_engine.ops.run import ensure_table, open_catalog, run_command

    created = False
    if cmd.create_if_missing:
        with contextlib.closing(open_catalog(cmd)) as catalog:
            if not catalog.table_exists(cmd.table):
                schema = _created_schema(cmd)
                if schema is None:  # input_size said None
                    raise AssertionError(f"{cmd.table}: no schema to create it from on the driver")
                _, created = ensure_table(cmd, catalog, schema)
    result = run_command(cmd)
    if created:
        result["created"] = True
    return result


@registers("driver", ConsumeChangelog)
def _consume_on_driver(cmd: ConsumeChangelog) -> dict[str, Any]:
    """Into a target table, ``rows`` is (as for the Spark job) the rows the target's commit added."""
    from table_engine.ops.run import open_catalog, run_command

    result = run_command(cmd)
    if cmd.target_table and "target_snapshot_id" in result:
        from table_engine.store.committing import snapshot_info

        with contextlib.closing(open_catalog(cmd)) as catalog:  # read only: its files, without the catalog
            target = catalog.get_table(cmd.target_table)
        sid = result["target_snapshot_id"]
        result["rows"] = 0 if sid is None else snapshot_info.snapshot_changes(
            target.file_io, target.path, target.snapshot(sid)).added_rows
    return result


@registers("input_size", Write)
def _write_input_size(cmd: Write) -> int | None:
    from table_engine.io.file_io import file_io_for
    from table_engine.ops.run import open_catalog

    if cmd.sql or not cmd.source or cmd.format not in DRIVER_JOB_FORMATS or cmd.mode != "append" \
            or cmd.source_options:
        return None
    with contextlib.closing(open_catalog(cmd)) as catalog:
        exists = catalog.table_exists(cmd.table)
    if not exists and (not cmd.create_if_missing or _created_schema(cmd) is None):
        return None  # Spark reports the missing table; or a schema Spark would read differently
    fio = file_io_for(cmd.source, cmd.catalog_options)
    if not fio.exists(cmd.source):
        return None  # Spark reports the missing source
    try:
        entries = fio.list_status(cmd.source)
    except NotADirectoryError:
        return fio.file_size(cmd.source)  # the source is one file
    if not entries:
        return None  # an empty directory, or an object-store key: left to Spark
    visible = [e for e in entries if not posixpath.basename(e.path.rstrip("/")).startswith(("_", "."))]
    if any(e.is_dir for e in visible):
        return None  # partition directories: Spark adds their columns
    return sum(e.size for e in visible)


@registers("input_size", MergeInto)
def _merge_input_size(cmd: MergeInto) -> int | None:
    """Only a ``--sql`` source needs Spark: a merge of files or a table runs with the engine on the driver either
    way (the Spark job would read the source with Spark and merge it there), so it counts as no input."""
    return None if cmd.needs_spark() else 0


@registers("input_size", Compact)
def _compact_input_size(cmd: Compact) -> int:
    from table_engine.ops.run import open_catalog
    from table_engine.store.compaction.compact import plan_compaction

    with contextlib.closing(open_catalog(cmd)) as catalog:  # sizing reads files only
        table = catalog.get_table(cmd.table)
    check_supported(table, Op.MAINTAIN)
    ctx = table.store
    plan = plan_compaction(ctx, list(cmd.partitions) or None, cmd.idle_time_millis, buckets=cmd.buckets)
    return sum(f.file_size for b in plan for f in b.files)


@registers("input_size", ConsumeChangelog)
def _changes_input_size(cmd: ConsumeChangelog) -> int | None:
    if not cmd.target_table or cmd.output:
        return None  # files: a Spark job writes them
    from table_engine.ops.consume import change_range
    from table_engine.ops.run import open_catalog
    from table_engine.store.changes.incremental import plan_changes

    with contextlib.closing(open_catalog(cmd)) as catalog:  # sizing reads files only
        table = catalog.get_table(cmd.table)
    check_supported(table, Op.MAINTAIN)
    rng = change_range(cmd, table)  # without --output: reads only (the consumer may be behind: an upper bound)
    if rng.empty:
        return 0
    splits = plan_changes(table.file_io, table.path, table.schema, table.options, rng.start, rng.end)
    return sum(f.file_size for split in splits for f in split.files)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m table_engine.spark.jobs.driver_jobs <command> ...`` (or ``--command-json``): run a Spark-job command
    on this machine with the engine (:func:`run_on_driver`), its result line last, as ``app.py`` prints it. The
    provider runs this instead of spark-submit when the driver would be this machine and the job is small."""
    from table_engine.cli import run, setup_logging
    from table_engine.ops.argv import parse_invocation

    inv = parse_invocation(argv, prog="python -m table_engine.spark.jobs.driver_jobs")
    setup_logging(inv.log_level)
    return run(inv.command, run_on_driver, verbose=inv.verbose)



def _created_schema(cmd: Write) -> pa.Schema | None:
    """The schema a table created by the Spark job from ``cmd``'s source gets (the Arrow schema of what Spark reads:
    every column nullable, strings and binaries as ``string``/``binary``), for flat sources of the types Spark reads
    unchanged; None for any other (timestamps, unsigned integers, nested types: the Spark job creates the table)."""
    import pyarrow.dataset as ds

    from table_engine.ops.run import source_filesystem

    source = ds.dataset(cmd.source or "", format=cmd.format, filesystem=source_filesystem(cmd))
    fields = []
    for f in source.schema:
        t = f.type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            t = pa.string()
        elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
            t = pa.binary()
        elif not any(same(t) for same in _READ_AS_IS):
            return None
        fields.append(pa.field(f.name, t, nullable=True))
    return pa.schema(fields)


_READ_AS_IS = (pa.types.is_boolean, pa.types.is_int8, pa.types.is_int16, pa.types.is_int32, pa.types.is_int64,
               pa.types.is_float32, pa.types.is_float64, pa.types.is_date32, pa.types.is_decimal128)


if __name__ == "__main__":
    sys.exit(main())
