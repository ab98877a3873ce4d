"""Spark writes on a data-evolution table (``data-evolution.enabled``) that are not whole rows (ADR 0017, amended).

What the DataFrame holds decides the write (:func:`plan_write`, on the driver before any task runs):

* some of the table's columns (the partition columns among them): a write of some columns, as ``Table.write``
  does it (:func:`table_engine.store.writing.data_evolution_write.insert_messages`): each task writes files of new
  rows (``_WRITE_COLS``, no ``_FIRST_ROW_ID``) and returns their commit messages; the job commits them once
  (:func:`table_engine.spark.jobs.commit.commit_once`), which assigns the next row ids in commit order.
* a ``_ROW_ID`` column: an update by row id of the other columns (``table.data_evolution.update_by_row_id``); with
  option ``upsert-keys``: an upsert by those keys (``table.data_evolution.upsert_by_key``).

Updates and upserts are staged, not written by the tasks: a column file covers a whole row range (its current values
with the updated rows replaced), so two tasks updating rows of one range would each write a file over the range and
the later would drop the other's updates. Instead each task attempt writes its rows to one Arrow IPC file in the
job's staging directory (``<table>/spark-staging-<uuid>``) and names it in its commit message; the job's
``commit()`` (run by Spark exactly once) reads the files the successful attempts named, in task order, and runs ONE
``update_by_row_id`` / ``upsert_by_key`` over their rows, under the job's commit user and identifier (skipped when
that snapshot exists: a repeated commit is a no-op). An attempt that fails deletes its file; one killed outright
leaves a file that no message names: never read, deleted with the directory, which ``commit()`` and ``abort()`` both
remove (a job that dies before either leaves it to ``remove-orphan-files``). Bad rows (a ``_ROW_ID`` that is not a
row, repeated or null) fail the commit with nothing written.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from table_engine.errors import SchemaMismatchError
from table_engine.io.paths import staging_dir
from table_engine.spark.datasource import options as o
from table_engine.spark.jobs.commit import TaskFiles, find_commit
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.reading.row_tracking import ROW_ID
from table_engine.store.writing.data_evolution_write import INSERT, insert_fields, insert_messages, update_fields
from table_engine.table import Table

log = logging.getLogger(__name__)

COLUMNS, UPDATE, UPSERT = "write of some columns", "update by row id", "upsert by key"


@dataclass(frozen=True)
class DataEvolutionWrite:
    """How a DataFrame is written into a data-evolution table: ``mode`` (one of the constants above)."""

    mode: str
    names: tuple[str, ...]
    """the DataFrame's columns that are written (``_ROW_ID`` among them for an update)"""
    keys: tuple[str, ...]
    """upsert keys"""
    staging: str
    """the job's staging directory (updates and upserts)"""

    @property
    def staged(self) -> bool:
        """Whether tasks stage their rows for the job's commit (updates, upserts)."""
        return self.mode != COLUMNS


def plan_write(table: Table, names: Sequence[str], overwrite: bool, kinds_column: str | None,
               options: Mapping[str, str]) -> DataEvolutionWrite | None:
    """The write of a DataFrame of columns ``names`` into ``table``: None for whole rows (the ordinary write),
    else the mode, checked (one-line errors before any task runs)."""
    keys_option = o.get(options, o.UPSERT_KEYS)
    keys = tuple(k.strip() for k in keys_option.split(",") if k.strip()) if keys_option else ()
    fields = table.schema.field_names()
    if not data_evolution_enabled(table.schema.options):
        if keys_option is not None or ROW_ID in names:
            what = f"option {o.UPSERT_KEYS}" if keys_option is not None else f"a {ROW_ID} column"
            raise SchemaMismatchError(f"{what}: writes by row id or key need data-evolution.enabled = true on table "
                                      f"{table.identifier}")
        return None
    if keys_option is None and ROW_ID not in names and set(names) == set(fields):
        return None
    mode = UPSERT if keys_option is not None else UPDATE if ROW_ID in names else COLUMNS
    if overwrite or kinds_column is not None:
        what = "mode overwrite" if overwrite else f"option {o.ROWKIND_COLUMN}"
        raise o.DataSourceOptionError(f"{mode} of table {table.identifier}: {what} is not supported (append only)")
    ctx = table.store
    unknown = [n for n in names if n not in fields and (n != ROW_ID or mode != UPDATE)]
    if unknown:
        raise SchemaMismatchError(f"{mode} of table {table.identifier}: DataFrame column(s) {unknown} are not in "
                                  f"the table; columns are {fields}")
    if mode == UPDATE:
        update_fields(ctx, [n for n in names if n != ROW_ID])
    else:
        insert_fields(ctx, names, mode)
    if mode == UPSERT:
        absent = [k for k in keys if k not in names]
        if not keys or absent:
            raise o.DataSourceOptionError(f"option {o.UPSERT_KEYS}={keys_option!r}: key column(s) "
                                          f"{absent or '[]'} are not in the DataFrame")
    return DataEvolutionWrite(mode, tuple(names), keys, staging_dir(table.path, uuid.uuid4().hex))


def write_columns(plan: DataEvolutionWrite, table: Table, chunks: Iterable[pa.Table], task: int, attempt: int,
                  check: Callable[[], None]) -> TaskFiles:
    """One task of a write of some columns: files of new rows, per chunk and partition (deleted on failure)."""
    ctx = table.store
    fields = insert_fields(ctx, plan.names)
    written: list[str] = []
    messages = []
    rows = 0
    try:
        for chunk in chunks:
            if chunk.num_rows:
                messages += insert_messages(ctx, chunk.select(list(plan.names)), fields, written, INSERT)
                rows += chunk.num_rows
        check()
    except BaseException:
        for p in written:
            table.file_io.try_delete(p)
        raise
    return TaskFiles(task, attempt, tuple(messages), rows)


def stage_rows(plan: DataEvolutionWrite, table: Table, chunks: Iterable[pa.Table], task: int, attempt: int,
               check: Callable[[], None]) -> TaskFiles:
    """One task attempt of an update or upsert: its rows in one Arrow IPC file of the staging directory (deleted on
    failure), named in the returned task files."""
    path = f"{plan.staging}/task-{task}-attempt-{attempt}-{uuid.uuid4().hex[:8]}.arrow"
    sink: pa.NativeFile | None = None
    writer: pa.ipc.RecordBatchFileWriter | None = None
    rows = 0
    try:
        for chunk in chunks:
            if not chunk.num_rows:
                continue
            chunk = chunk.select(list(plan.names))
            if writer is None:
                sink = table.file_io.open_output(path)
                writer = pa.ipc.new_file(sink, chunk.schema)
            writer.write_table(chunk)
            rows += chunk.num_rows
        if writer is not None and sink is not None:
            writer.close()
            sink.close()
        check()
    except BaseException:
        for closing in (writer, sink):
            try:
                if closing is not None:
                    closing.close()
            except (OSError, pa.ArrowException):
                pass
        table.file_io.try_delete(path)
        raise
    return TaskFiles(task, attempt, (), rows, (path,) if rows else ())


def commit_staged(plan: DataEvolutionWrite, table: Table, tasks: Sequence[TaskFiles], commit_user: str,
                  identifier: int, since_millis: int | None) -> int | None:
    """The job's commit of an update or upsert: one ``update_by_row_id`` / ``upsert_by_key`` over the rows the
    successful attempts staged, unless (``commit_user``, ``identifier``) is committed already; the staging
    directory is removed either way."""
    try:
        done = find_commit(table, commit_user, identifier, since_millis)
        if done is not None:
            log.info("%s: commit %s/%s is snapshot %d already", table.identifier, commit_user, identifier, done.id)
            return done.id
        staged = [read_staged(table, p) for t in sorted(tasks, key=lambda t: t.task) for p in t.staged]
        if not staged:
            return None
        data = pa.concat_tables(staged)
        if plan.mode == UPDATE:
            return table.data_evolution.update_by_row_id(data, commit_user=commit_user, commit_identifier=identifier)
        return table.data_evolution.upsert_by_key(data, list(plan.keys), commit_user=commit_user,
                                                  commit_identifier=identifier)
    finally:
        remove_staging(plan, table)


def read_staged(table: Table, path: str) -> pa.Table:
    """The rows of one staged file."""
    with table.file_io.open_input(path) as f:
        return pa.ipc.open_file(f).read_all()


def remove_staging(plan: DataEvolutionWrite | None, table: Table) -> None:
    """Delete the job's staging directory (if any)."""
    if plan is None or not plan.staged:
        return
    try:
        table.file_io.delete(plan.staging, recursive=True)
    except FileNotFoundError:
        pass

