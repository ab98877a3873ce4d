"""Writes from files without Spark rows: the driver splits the source files, Spark tasks read them with pyarrow and
write through the engine's ``TableWrite``, the driver commits once (ADR 0036).

The application's ``write`` job lands files (``--source``: Parquet, ORC, CSV or JSON). Reading them with
``spark.read`` and writing the DataFrame moves every row from the JVM into Python (the floor of any DataFrame write
in Python, BENCHMARKS.md "Spark write paths"). Here no Spark row exists: the driver lists the files through the
engine's FileIO (local, S3), reads Parquet footers (row groups and their row counts) and ORC footers, and cuts the
files, in source order, into contiguous runs of about equal row counts, one per task. The tasks are a
``spark.range(n, numPartitions=n).mapInArrow`` stage (no RDD or ``sparkContext`` API: it runs under Spark Connect
too): task ``i`` reads run ``i`` with pyarrow and returns its commit messages pickled in one binary value; the
driver commits them with :func:`table_engine.spark.jobs.commit.commit_once` (same commit user and identifier rules as
every Spark write: a repeated job commits nothing twice).

Ordering (primary-key tables): several tasks write rows of one bucket, each as its own level-0 sorted runs, and
Paimon merges a key's records by sequence number (after ``sequence.field`` when set). Source order is the files in
path order, row groups (stripes, lines) in file order. Run ``i`` starts at source row ``R_i``, and its writer's
buckets number their rows from ``base + R_i`` on (:attr:`TableWrite.sequence_floor`), where ``base`` exceeds every
committed sequence number of the table. A bucket's numbers within run ``i`` stay below ``base + R_(i+1)``, so every
record of run ``i`` sorts before every record of run ``i+1`` in every bucket: the merge sees each key's records in
source order, as the engine's single writer of the same files in that order does (with gaps in the numbers, which
Paimon allows). CSV and JSON files carry no row count: a file's size in bytes bounds it (a row takes at least one
byte), so their runs are sized by bytes and numbered within that bound.

Dynamic-bucket primary-key tables (``bucket`` = -1) and cross-partition upsert tables need every row of a key in
the one task that owns the key (:mod:`table_engine.spark.datasource.writer`). No exchange does that here: with N
tasks, EVERY task reads all the splits, in source order, and keeps the rows whose routing hash
(:func:`~table_engine.spark.datasource.writer.task_routes`: the engine's hash of the routing columns, modulo N) is
its index ``i``; it writes them as the DataFrame route's task ``i`` of N does (its ``Assigner``: new keys only to
buckets ``b % N == i``; for cross-partition upsert the bootstrap of only its keys, and the writer's check of every
row's route), so :func:`~table_engine.spark.jobs.commit.check_bucket_owners` holds at commit. One writer gets all
the rows of a key, in source order: the key's records merge as in the engine's own single write, with no sequence
ranges (each bucket numbers on from its committed maximum, as every writer does; tasks sharing an existing bucket hold
disjoint keys) and even with sequence fields under a combining merge engine. Reading is cheap next to writing:
N reads of the source cost less than moving the rows through a shuffle (BENCHMARKS.md, ``pk_dynamic``).

Tasks do not compact (several write one bucket: their compactions would collide); the driver compacts what batch
reads would skip (first-row level 0) after the commit, and unaware-bucket append partitions as every Spark write.
Tables this route cannot write with the same guarantees keep the DataFrame route (:func:`refusal` says why, and
the job logs it): postpone bucket, deletion vectors, data evolution, row tracking, changelog producers,
``full-compaction.delta-commits``, sources with Spark reader options or subdirectories, and changes into a
dynamic-bucket target (``consume-changelog``: its tasks split the changes, they do not route them by key).
"""

from __future__ import annotations

import functools
import logging
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa

from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import CommitUser
from table_engine.errors import CommandError, SchemaMismatchError
from table_engine.format.bucket import BucketMode
from table_engine.format.schema_file import TableSchema
from table_engine.io.base import FileIO
from table_engine.io.file_io import file_io_for
from table_engine.spark.datasource import options as o
from table_engine.spark.datasource.spark_types import spark_schema
from table_engine.spark.datasource.writer import (
    ROUTE_COLUMN,
    PaimonCommitMessage,
    _TableWriter,
    is_dynamic_bucket,
    routing_columns,
    task_routes,
)
from table_engine.spark.jobs.commit import TaskFiles
from table_engine.spark.jobs.task_env import write_chunks, write_task
from table_engine.store.changes.incremental import ROWKIND_COLUMN, ChangeSplit, iter_changes
from table_engine.store.committing.commit import Overwrite
from table_engine.store.compaction.compact import compact_invisible_level0
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.reading.scan import live_entries
from table_engine.store.writing.bucket_assign import Assigner
from table_engine.table import Table

log = logging.getLogger(__name__)

FILE_FORMATS = ("parquet", "orc", "csv", "json")
"""Source formats the tasks read with pyarrow."""
_BATCH_ROWS = 262_144
_RESULT_COLUMN = "__paimon_task_files"
_U = TypeVar("_U")
RunReader = Callable[[int], Iterator[tuple[pa.Table, "pa.Array | None"]]]
"""Run ``i``'s rows (the table's columns) and their row kinds (None: all +I), in order."""


@dataclass(frozen=True)
class FileSplit:
    """A piece of one source file: its path, the Parquet row groups (None: the whole file) and its rows (exact for
    Parquet and ORC, a bound for CSV and JSON)."""

    path: str
    row_groups: tuple[int, ...] | None
    rows: int


@dataclass(frozen=True)
class FileWritePlan:
    """What the driver hands the tasks: the format, each task's splits and the first sequence number of its run."""

    format: str
    source_options: Mapping[str, str]
    """the catalog's storage options (``s3.*``), for the tasks' FileIO of the source"""
    runs: tuple[tuple[FileSplit, ...], ...]
    first_sequence: tuple[int, ...]
    schema: pa.Schema
    """the table's columns (CSV and JSON values are parsed into their types)"""
    route_tasks: int = 0
    """0: task ``i`` writes run ``i``; N (dynamic buckets): ``runs`` is one run of every split, which each of N
    tasks reads, keeping the rows routed to it (their ``first_sequence`` is 0: no floor)"""

    @property
    def rows(self) -> int:
        return sum(s.rows for run in self.runs for s in run)


def refusal(table: Table, fmt: str | None = None, reader_options: Mapping[str, str] | None = None) -> str | None:
    """Why ``table`` must be written through the DataFrame route (from a ``fmt`` source; without ``fmt``: from
    changes, which tasks do not route by key), or None."""
    opts = table.options
    if fmt is not None and fmt not in FILE_FORMATS:
        return f"format {fmt!r} is read by Spark"
    if reader_options:
        return "Spark reader options (--source-option) were given"
    routed = is_dynamic_bucket(table)
    if routed and fmt is None:
        return "dynamic bucket tables route every key to one assigner"
    reasons = {
        "postpone bucket": table.store.bucket_mode is BucketMode.POSTPONE_MODE,
        "deletion vectors": opts.deletion_vectors_enabled(),
        "data evolution": data_evolution_enabled(table.schema.options),
        "row tracking": opts.row_tracking_enabled(),
        "a changelog producer": bool(table.primary_keys) and opts.changelog_producer() is not ChangelogProducer.NONE,
        "full-compaction.delta-commits": opts.full_compaction_delta_commits() is not None,
        # a run's records are folded before the merge of runs; with the order decided by sequence fields, a key's
        # records of one run need not be adjacent in merge order, and only an engine that picks one record by that
        # order (merge_free: deduplicate) folds them exactly; routed by key, one writer gets all of a key's records
        "sequence fields with a merge engine that combines records": not routed and _combines(table) and bool(
            opts.sequence_fields() or any(k.endswith(".sequence-group") for k in opts.raw)),
    }
    found = [k for k, v in reasons.items() if v]
    return f"the table has {found[0]}" if found else None


def _combines(table: Table) -> bool:
    """Whether ``table``'s merge engine combines a key's records (rather than picking one of them)."""
    merge = table.store.merge_function
    return merge is not None and not merge.capabilities.merge_free


# ---- the driver ---------------------------------------------------------------------------------------------------
def source_files(fio: FileIO, source: str) -> list[tuple[str, int]] | None:
    """The data files of ``source`` (a file or a directory of files) in path order with their sizes; None when it
    holds subdirectories (Spark's partition discovery: the DataFrame route reads those). Names starting with ``_``
    or ``.`` are skipped, as Spark skips them."""
    base = source.rstrip("/")
    if not fio.exists(base) and (fio.has_directories or not fio.list_status(base)):
        raise CommandError(f"--source {source} does not exist")
    try:
        listed = fio.list_status(base)
    except NotADirectoryError:  # a local file
        return [(base, fio.file_size(base))]
    if not listed and not fio.has_directories:  # an object: a file, not a prefix
        return [(base, fio.file_size(base))]
    if any(s.is_dir and not _hidden(s.path) for s in listed):
        return None
    files = sorted((s.path, s.size) for s in listed if not s.is_dir and not _hidden(s.path))
    if not files:
        raise CommandError(f"--source {source} holds no data files")
    return files


def _hidden(path: str) -> bool:
    return path.rstrip("/").rsplit("/", 1)[-1].startswith(("_", "."))


def plan_file_write(table: Table, fmt: str, source: str, storage_options: Mapping[str, str],
                    parallelism: int) -> FileWritePlan | None:
    """The plan of writing the ``fmt`` files of ``source`` into ``table`` with at most ``parallelism`` tasks
    (a dynamic-bucket table: exactly that many, each reading every split); None when the source has
    subdirectories. The files' columns are checked against the table first (a one-line SchemaMismatchError naming
    the file, before any task runs)."""
    fio = file_io_for(source, storage_options)
    files = source_files(fio, source)
    if files is None:
        return None
    units: list[FileSplit] = []
    names = table.schema.field_names()
    for path, size in files:
        pieces, columns = _file_pieces(fio, fmt, path, size)
        if columns is not None:
            _check_columns(table, path, columns, exact=fmt != "json")
        units.extend(pieces)
    if is_dynamic_bucket(table):
        n = max(1, parallelism)
        log.info("%s: %d %s files read by each of %d tasks, rows routed by %s", table.identifier, len(files), fmt, n,
                 routing_columns(table))
        return FileWritePlan(fmt, dict(storage_options), (_merged(units),), (0,) * n, table.schema.arrow_schema(), n)
    runs = _contiguous_runs(units, max(1, parallelism), _split_rows)
    firsts = _first_sequences(table, runs, _split_rows)
    log.info("%s: %d %s files of %d columns in %d tasks", table.identifier, len(files), fmt, len(names), len(runs))
    return FileWritePlan(fmt, dict(storage_options), tuple(_merged(r) for r in runs), firsts,
                         table.schema.arrow_schema())


def _split_rows(split: FileSplit) -> int:
    return split.rows


def _change_rows(split: ChangeSplit) -> int:
    return split.row_count  # a change per row of the split's files


def _file_pieces(fio: FileIO, fmt: str, path: str, size: int) -> tuple[list[FileSplit], list[str] | None]:
    """A file's splits (a Parquet file's row groups, else the file) and its column names (None: JSON, whose
    records name their own)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with fio.open_input(path) as f:
            meta = pq.ParquetFile(f).metadata
            names = pq.ParquetFile(f).schema_arrow.names
        return [FileSplit(path, (i,), meta.row_group(i).num_rows) for i in range(meta.num_row_groups)], names
    if fmt == "orc":
        from pyarrow import orc

        with fio.open_input(path) as f:
            file = orc.ORCFile(f)
            return [FileSplit(path, None, int(file.nrows))], file.schema.names
    bound = size + 1  # a row takes at least one byte (a line)
    if fmt == "csv":
        import pyarrow.csv as pcsv

        with fio.open_input(path) as f:
            return [FileSplit(path, None, bound)], pcsv.open_csv(f).schema.names
    return [FileSplit(path, None, bound)], None


def _check_columns(table: Table, path: str, columns: Sequence[str], exact: bool) -> None:
    names = table.schema.field_names()
    extra = [c for c in columns if c not in names]
    missing = [n for n in names if n not in columns] if exact else []
    if extra or missing:
        raise SchemaMismatchError(f"source file {path}: columns do not match table {table.identifier}: not in the "
                                  f"table {extra}, missing {missing}")


def _contiguous_runs(units: Sequence[_U], n: int, rows: Callable[[_U], int]) -> list[list[_U]]:
    """``units`` cut, in order, into at most ``n`` contiguous runs of about equal ``rows``."""
    total = sum(rows(u) for u in units)
    runs: list[list[_U]] = [[]]
    done = 0
    for u in units:
        if runs[-1] and len(runs) < n and done >= total * len(runs) / n:
            runs.append([])
        runs[-1].append(u)
        done += rows(u)
    return [r for r in runs if r]


def _first_sequences(table: Table, runs: Sequence[Sequence[_U]], rows: Callable[[_U], int]) -> tuple[int, ...]:
    """Each run's first sequence number: above every committed one of ``table``, then after the runs before it."""
    firsts, at = [], _next_sequence(table)
    for run in runs:
        firsts.append(at)
        at += sum(rows(u) for u in run)
    return tuple(firsts)


def _merged(run: Sequence[FileSplit]) -> tuple[FileSplit, ...]:
    """Consecutive row groups of one file joined into one split."""
    out: list[FileSplit] = []
    for s in run:
        last = out[-1] if out else None
        if last is not None and last.path == s.path and last.row_groups is not None and s.row_groups is not None:
            out[-1] = FileSplit(s.path, last.row_groups + s.row_groups, last.rows + s.rows)
        else:
            out.append(s)
    return tuple(out)


def _next_sequence(table: Table) -> int:
    """A sequence number above every committed one of ``table`` (0 for an empty table)."""
    snapshot = table.latest_snapshot()
    entries = live_entries(table.file_io, table.path, snapshot)
    return max((e.file.max_sequence_number for e in entries), default=-1) + 1


def write_files(spark: Any, table: Table, plan: FileWritePlan, *, overwrite: bool, commit_user: CommitUser,
                identifier: int) -> int | None:
    """Run ``plan``'s tasks and commit their files as one snapshot; its id (None: nothing committed)."""
    read = functools.partial(_read_routed_run if plan.route_tasks else _read_file_run, plan, table.schema)
    return _run_job(spark, table, read, plan.first_sequence, overwrite=overwrite, commit_user=commit_user,
                    identifier=identifier, route_tasks=plan.route_tasks)


def write_changes(spark: Any, source: Table, splits: Sequence[ChangeSplit], target: Table, parallelism: int, *,
                  commit_user: str, identifier: int) -> int | None:
    """Apply the changes of ``splits`` (of ``source``, planned by ``plan_changes``) to ``target`` with tasks that
    read them with the engine and write them with their row kinds (``consume-changelog --target-table``); the
    snapshot id (None: nothing committed). A split's changes stay in one task, in their order; runs of splits get
    disjoint sequence ranges in plan order, as runs of files do."""
    runs = tuple(tuple(r) for r in _contiguous_runs(splits, max(1, parallelism), _change_rows))
    if not runs:
        return None
    firsts = _first_sequences(target, runs, _change_rows)
    log.info("%s: %d change splits of %s in %d tasks", target.identifier, len(splits), source.identifier, len(runs))
    return _run_job(spark, target, functools.partial(_read_change_run, source, runs), firsts, overwrite=False,
                    commit_user=CommitUser(commit_user), identifier=identifier)


def _run_job(spark: Any, table: Table, read: RunReader, first_sequence: Sequence[int], *, overwrite: bool,
             commit_user: CommitUser, identifier: int, route_tasks: int = 0) -> int | None:
    """Write run ``i`` (``read(i)``) in task ``i`` (assigner ``i`` of ``route_tasks`` when given), then commit
    every task's files once.

    A job that fails deletes the files of its successful tasks (reported through an accumulator where the session
    has a SparkContext; under Spark Connect a failed job leaves them to ``remove-orphan-files``: never committed).
    """
    from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

    columns = spark_schema(table.schema.fields)
    options: dict[str, str] = {}
    if route_tasks:  # the commit checks of rows routed to N assigners (writer.py: prepare_write's route column)
        columns = StructType([*columns.fields, StructField(ROUTE_COLUMN, IntegerType())])
        options[o.ASSIGNERS] = str(route_tasks)
    writer = _TableWriter(table, columns, overwrite, commit_user, options)
    written = _accumulator(spark)
    task = functools.partial(_write_runs, table, read, tuple(first_sequence), route_tasks, written)
    result = StructType([StructField(_RESULT_COLUMN, BinaryType(), False)])
    n = len(first_sequence)
    try:
        rows = spark.range(n, numPartitions=max(1, n)).mapInArrow(task, result).collect()
    except BaseException:
        if written is not None:
            writer.abort_job([PaimonCommitMessage(t) for t in written.value], identifier)
        raise
    messages = [PaimonCommitMessage(pickle.loads(r[0])) for r in rows]
    ow = Overwrite(dynamic=table.options.dynamic_partition_overwrite()) if overwrite else None
    sid = writer.commit_job(messages, identifier, ow)
    ctx = table.store
    if sid is not None and not overwrite and ctx.batch_scan_skip_level0():
        # the tasks did not compact: level 0 (invisible to batch reads of first-row tables) is compacted once here
        buckets = {(m.partition, m.bucket) for pm in messages for m in pm.files.messages if m.new_files}
        sid = compact_invisible_level0(ctx, table.new_commit, sid, False, buckets)
    return sid


def _accumulator(spark: Any) -> Any:
    """An accumulator of the task files of successful attempts, where the session has a SparkContext."""
    from table_engine.spark.jobs.map_write import _ListParam

    try:
        context = spark.sparkContext
    except Exception:  # Spark Connect: no SparkContext on the client
        return None
    return context.accumulator([], _ListParam())


# ---- the tasks ----------------------------------------------------------------------------------------------------
def _write_runs(table: Table, read: RunReader, first_sequence: Sequence[int], route_tasks: int, written: Any,
                batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task side: write the runs whose indexes this task got; yield each run's task files, pickled."""
    from pyspark import TaskContext

    from table_engine.spark.jobs.task_env import task_arrow_threads

    task_arrow_threads()
    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx is not None else 0
    schema = pa.schema([pa.field(_RESULT_COLUMN, pa.binary(), False)])
    for batch in batches:
        for i in batch.column(0).to_pylist():
            files = write_run(table, read, first_sequence[int(i)], int(i), attempt, route_tasks)
            if written is not None:
                written.add([files])
            yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(files)], pa.binary())], schema=schema)


def write_run(table: Table, read: RunReader, first_sequence: int, i: int, attempt: int = 0,
              route_tasks: int = 0) -> TaskFiles:
    """Write run ``i`` (the rows and row kinds ``read(i)`` yields) into ``table`` with one ``TableWrite`` numbering
    from ``first_sequence`` (as assigner ``i`` of ``route_tasks`` when given), without compacting; its task files
    (the writer's files are deleted when it fails)."""
    writer = table.new_write()
    writer.skip_compaction()  # other tasks write the same buckets
    writer.sequence_floor = first_sequence
    if route_tasks:
        writer.assigner = Assigner(i, route_tasks)
    files = write_task(writer, write_chunks(read(i)), i, attempt)
    log.info("%s: run %d (attempt %d) wrote %d rows", table.identifier, i, attempt, files.rows)
    return files


def _read_file_run(plan: FileWritePlan, schema: TableSchema, i: int) -> Iterator[tuple[pa.Table, pa.Array | None]]:
    fio = file_io_for(plan.runs[i][0].path, plan.source_options)
    for split in plan.runs[i]:
        for data in read_split(fio, plan.format, split, plan.schema):
            yield data, None


def _read_routed_run(plan: FileWritePlan, schema: TableSchema, i: int
                     ) -> Iterator[tuple[pa.Table, pa.Array | None]]:
    """Every split's rows routed to task ``i`` of ``plan.route_tasks``, in source order."""
    for data, _ in _read_file_run(plan, schema, 0):
        mine = data.filter(pa.array(task_routes(schema, data, plan.route_tasks) == i))
        if mine.num_rows:
            yield mine, None


def _read_change_run(source: Table, runs: Sequence[Sequence[ChangeSplit]], i: int
                     ) -> Iterator[tuple[pa.Table, pa.Array | None]]:
    ctx = source.store
    for split in runs[i]:
        for batch in iter_changes(ctx, split, (), _BATCH_ROWS):
            if batch.num_rows:
                yield pa.Table.from_batches([batch.drop_columns([ROWKIND_COLUMN])]), batch.column(ROWKIND_COLUMN)


def read_split(fio: FileIO, fmt: str, split: FileSplit, schema: pa.Schema) -> Iterator[pa.Table]:
    """The rows of ``split`` in file order, in batches (CSV and JSON values parsed as the table's types)."""
    with fio.open_input(split.path) as f:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            for b in pq.ParquetFile(f).iter_batches(_BATCH_ROWS, row_groups=split.row_groups):
                yield pa.Table.from_batches([b])
        elif fmt == "orc":
            from pyarrow import orc

            file = orc.ORCFile(f)
            for s in range(file.nstripes):
                yield pa.Table.from_batches([file.read_stripe(s)])
        elif fmt == "csv":
            import pyarrow.csv as pcsv

            types = {fld.name: fld.type for fld in schema}
            reader = pcsv.open_csv(f, convert_options=pcsv.ConvertOptions(column_types=types,
                                                                         strings_can_be_null=True))
            for b in reader:
                yield pa.Table.from_batches([b])
        else:
            import pyarrow.json as pjson

            parse = pjson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
            try:
                yield pjson.read_json(f, parse_options=parse)
            except pa.ArrowInvalid as e:
                raise SchemaMismatchError(f"source file {split.path}: {e}") from None
