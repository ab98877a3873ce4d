"""The Spark job commit (:func:`table_engine.spark.jobs.commit.commit_once`) with a commit user generated for the job
reads no history: its metadata reads are the same at 5 and at 60 snapshots, and the job repeating its commit is
still found (among the snapshots committed since the user was generated). A named user is still looked up, so a
re-run with the same user and identifier is found and not committed twice."""

from __future__ import annotations

import pyarrow as pa

from table_engine import Catalog
from table_engine.clock import ManualClock, use_clock
from table_engine.core_options import CommitUser, default_commit_user
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.io.counting import CountingFileIO
from table_engine.io.file_io import file_io_for
from table_engine.spark.jobs.commit import commit_once
from table_engine.table import Table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(warehouse: str) -> tuple[Table, CountingFileIO]:
    fio = CountingFileIO(file_io_for(warehouse))
    return Catalog(warehouse, file_io=fio).get_table("db.t"), fio


def _reads_of_one_job_commit(table: Table, fio: CountingFileIO, n: int) -> int:
    writer = table.new_write()
    writer.write(pa.table({"id": [n], "v": ["x"]}, schema=SCHEMA))
    messages = writer.prepare_commit()
    fio.reset()
    user = default_commit_user(table.options)  # generated now: only the job's own snapshots can be its
    assert commit_once(table, messages, user, BATCH_COMMIT_IDENTIFIER) is not None
    again = commit_once(table, messages, user, BATCH_COMMIT_IDENTIFIER)  # repeated
    assert again == table.latest_snapshot_id()  # found among the job's own snapshots, not committed twice
    return fio.metadata_reads()


def test_a_generated_commit_user_reads_no_history(warehouse: str) -> None:
    Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    table, fio = _table(warehouse)
    with use_clock(ManualClock(1_700_000_000_000)) as now:  # the history is an hour older than each job
        for i in range(5):
            table.write(pa.table({"id": [i], "v": ["a"]}, schema=SCHEMA))
        now.advance(3_600_000)
        at_5 = _reads_of_one_job_commit(table, fio, 100)
        for i in range(55):
            table.write(pa.table({"id": [i], "v": ["b"]}, schema=SCHEMA))
        now.advance(3_600_000)
        at_60 = _reads_of_one_job_commit(table, fio, 101)
    assert at_5 == at_60, (at_5, at_60)


def test_a_named_commit_user_is_found_and_not_committed_twice(warehouse: str) -> None:
    table = Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})

    def job() -> int | None:
        writer = table.new_write()
        writer.write(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))
        return commit_once(table, writer.prepare_commit(), CommitUser("job-7"), 42)

    first = job()
    table.write(pa.table({"id": [2], "v": ["y"]}, schema=SCHEMA))
    assert first is not None and job() == first
    assert table.read().num_rows == 2
