"""The ``paimon`` data source's batch and streaming writers (Spark 4.0+: Python data sources).

The task side and the commit side are :class:`table_engine.spark.datasource.writer._TableWriter`'s, shared with the
``mapInArrow`` write of :func:`table_engine.spark.write_dataframe` (which runs on Spark 3.5 too); this module only
binds them to Spark's ``DataSourceArrowWriter`` / ``DataSourceStreamArrowWriter`` protocol, so it is imported only
by the data source (:mod:`table_engine.spark.datasource.source`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from table_engine import clock
from table_engine.core_options import CommitUser, default_commit_user
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.spark.datasource import options as o
from table_engine.spark.datasource.writer import PaimonCommitMessage, _TableWriter
from table_engine.store.committing.commit import Overwrite
from table_engine.table import Table

log = logging.getLogger(__name__)


def _committing_table(table: Table, options: Mapping[str, str]) -> Table:
    """The table a job's commit (or abort) goes through. Spark 4 hands the writer to its commit pickled, in another
    Python process: a table of a catalog with hooks (a REST catalog's commits through its server, a metastore's lock
    and registrations) arrives there without them (:meth:`TableHooks.shipped`), so it is opened again through the
    catalog the data source's options name."""
    return o.TableLocation.of(options).open() if table.hooks.shipped_copy else table


@dataclass
class SourceCommitMessage(PaimonCommitMessage, WriterCommitMessage):
    """A task's commit message as Spark's data source protocol wants it (a ``WriterCommitMessage``)."""


class PaimonBatchWriter(_TableWriter, DataSourceArrowWriter):
    """``df.write.format("paimon")``: append, or overwrite (dynamic partition overwrite)."""

    def __init__(self, table: Table, schema: StructType, overwrite: bool, options: Mapping[str, str]) -> None:
        user = o.get(options, o.COMMIT_USER)
        generated = user is not None and (o.get(options, o.COMMIT_USER_GENERATED) or "").lower() == "true"
        super().__init__(table, schema, overwrite, CommitUser(user, clock.now_millis()) if user and generated
                         else default_commit_user(table.options, user), options)
        identifier = o.get_int(options, o.COMMIT_IDENTIFIER)
        self.identifier = BATCH_COMMIT_IDENTIFIER if identifier is None else identifier
        self.source_options = dict(options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SourceCommitMessage:
        return SourceCommitMessage(self.write_task(iterator).files)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self.table = _committing_table(self.table, self.source_options)
        ow = Overwrite(dynamic=self.table.options.dynamic_partition_overwrite()) if self.overwrite else None
        self.commit_job(messages, self.identifier, ow)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self.table = _committing_table(self.table, self.source_options)
        self.abort_job(messages, self.identifier)


class PaimonStreamWriter(_TableWriter, DataSourceStreamArrowWriter):
    """``writeStream.format("paimon")``: one snapshot per micro-batch, identified by the batch id.

    The commit user stays the same across restarts of the query: ``commit-user``, else one derived from the
    checkpoint location; so a micro-batch that Spark replays after a restart is not committed twice. Output mode
    ``complete`` overwrites the whole table with each batch.
    """

    def __init__(self, table: Table, schema: StructType, overwrite: bool, options: Mapping[str, str]) -> None:
        user = o.get(options, o.COMMIT_USER)
        if user is None:
            checkpoint = o.get(options, o.CHECKPOINT_LOCATION)
            if checkpoint is None:
                log.warning("%s: streaming write without checkpointLocation or commit-user: a restarted query may "
                            "commit a replayed micro-batch twice", table.identifier)
            else:
                user = "spark-stream-" + hashlib.sha256(checkpoint.rstrip("/").encode()).hexdigest()[:32]
        super().__init__(table, schema, overwrite, default_commit_user(table.options, user), options)
        self.source_options = dict(options)
        if self.evolution is not None:
            raise o.DataSourceOptionError(f"{self.evolution.mode} of table {table.identifier}: not supported by "
                                          "streaming writes (use a batch write)")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SourceCommitMessage:
        return SourceCommitMessage(self.write_task(iterator).files)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self.table = _committing_table(self.table, self.source_options)
        self.commit_job(messages, batchId, Overwrite(dynamic=False) if self.overwrite else None)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self.table = _committing_table(self.table, self.source_options)
        self.abort_job(messages, batchId)
