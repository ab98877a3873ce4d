"""The fast batch write of :func:`table_engine.spark.write_dataframe`: ``mapInArrow`` tasks, commit on the driver.

The ``paimon`` data source's writer (:class:`table_engine.spark.datasource.source_writer.PaimonBatchWriter`)
commits in a Python worker that Spark starts for the purpose and goes through Spark's Python Data Source write
protocol. A write that is issued from Python anyway (:func:`table_engine.spark.write_dataframe`, the application's
``write``) skips both: each task of a ``mapInArrow`` stage writes its rows through the engine's ``TableWrite`` (the
very task code of the data source writer, :meth:`table_engine.spark.datasource.writer._TableWriter.write_task`) and
returns its commit messages as one pickled binary value; the driver collects them and commits once
(:func:`table_engine.spark.jobs.commit.commit_once`, same commit user and identifier rules, so a repeated job
commits nothing twice).

Failures: a task that raises deletes its own files before Spark retries it (as in the data source writer);
Spark collects the result of one successful attempt per task. The paths each successful attempt wrote are also
reported to the driver through an accumulator, which Spark merges for successful attempts only, even when the job
fails later: the driver then deletes those files, so a failed job leaves no data files behind (an attempt killed
outright still leaves its files to ``remove-orphan-files``; they are never committed).
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql.types import BinaryType, StructField, StructType

from table_engine.core_options import CommitUser
from table_engine.spark.compat import is_connect
from table_engine.spark.datasource.writer import PaimonCommitMessage, _TableWriter
from table_engine.spark.jobs.commit import TaskFiles
from table_engine.store.committing.commit import Overwrite
from table_engine.table import Table

MESSAGE_COLUMN = "__paimon_task_files"
_RESULT_SCHEMA = StructType([StructField(MESSAGE_COLUMN, BinaryType(), False)])


class _ListParam(AccumulatorParam[list[Any]]):
    """An accumulator of lists (the task files of successful attempts)."""

    def zero(self, value: list[Any]) -> list[Any]:
        return []

    def addInPlace(self, value1: list[Any], value2: list[Any]) -> list[Any]:
        value1.extend(value2)
        return value1


def map_write(routed: DataFrame, table: Table, *, overwrite: bool, commit_user: CommitUser, identifier: int,
              options: Mapping[str, str]) -> int | None:
    """Write the (already routed, :func:`table_engine.spark.datasource.writer.prepare_write`) DataFrame into
    ``table`` with one ``mapInArrow`` stage and commit the tasks' messages from the driver; the snapshot id (None:
    nothing committed)."""
    writer = _TableWriter(table, routed.schema, overwrite, commit_user, options)
    # Spark Connect clients have no accumulators: a job that fails there leaves the files of its successful
    # attempts to remove-orphan-files (never committed)
    spark = routed.sparkSession
    written = None if is_connect(spark) else spark.sparkContext.accumulator([], _ListParam())
    task = functools.partial(_write_partition, writer, written)
    try:
        rows = routed.mapInArrow(task, _RESULT_SCHEMA).collect()
    except BaseException:
        done = written.value if written is not None else []
        writer.abort_job([PaimonCommitMessage(t) for t in done], identifier)  # incl. staged rows
        raise
    messages = [PaimonCommitMessage(pickle.loads(r[0])) for r in rows]
    ow = Overwrite(dynamic=table.options.dynamic_partition_overwrite()) if overwrite else None
    return writer.commit_job(messages, identifier, ow)


def _write_partition(writer: _TableWriter, written: Any, batches: Iterator[pa.RecordBatch]
                     ) -> Iterator[pa.RecordBatch]:
    """One task: write every row it receives, then yield its task files (pickled) as a one-row batch."""
    files: TaskFiles = writer.write_task(batches).files
    if written is not None:
        written.add([files])
    yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(files)], pa.binary())],
                                     schema=pa.schema([pa.field(MESSAGE_COLUMN, pa.binary(), False)]))
