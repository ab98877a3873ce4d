"""Expiry while other processes write and read: no commit is lost and no read of a retained snapshot fails.

Append table: two writers commit with commit-time maintenance on (so they expire concurrently with each other).
Primary-key table: Paimon's multi-writer set-up -- ``write-only`` writers plus a dedicated compaction process.
In both, another process expires in a loop, and a reader pins the snapshot it reads with a consumer (Paimon's
way to protect a read) and checks every read.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from multiprocessing.synchronize import Event
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommitConflictError, SnapshotNotExistError
from tests.processes import run_until_writers_finish
from tests.table_engine.store.lifecycle.lifecycle_support import assert_exact_files

SCHEMA = pa.schema([("id", pa.int64()), ("writer", pa.int32())])
WRITERS = 2
COMMITS = 25
ROWS = 10
OPTIONS = {"snapshot.num-retained.min": "2", "snapshot.time-retained": "0 s", "commit.max-retries": "200",
           "manifest.merge-min-count": "4"}


def _writer(warehouse: str, w: int) -> None:
    t = Catalog(warehouse).get_table("db.t")
    t.commit_maintenance = True
    for c in range(COMMITS):
        base = (w * COMMITS + c) * ROWS
        t.write(pa.table({"id": pa.array(range(base, base + ROWS), pa.int64()),
                          "writer": pa.array([w] * ROWS, pa.int32())}, schema=SCHEMA))


def _compactor(warehouse: str, done: Event) -> None:
    t = Catalog(warehouse).get_table("db.t")
    while not done.is_set():
        try:
            t.compact()
        except CommitConflictError:  # a concurrent writer's commit won: try again
            pass
        time.sleep(0.01)


def _expirer(warehouse: str, done: Event) -> None:
    t = Catalog(warehouse).get_table("db.t")
    while not done.is_set():
        t.expire_snapshots(retain_min=1, time_retained=0)
        time.sleep(0.005)


def _reader(warehouse: str, done: Event, append_only: bool, reads: Any) -> None:
    t = Catalog(warehouse).get_table("db.t")
    consumers = t.consumer_manager()
    while not done.is_set():
        sid = t.latest_snapshot_id()
        if sid is None:
            continue
        consumers.update("reader", sid)  # expiries starting from now on keep snapshot sid
        try:
            snap = t.snapshot(sid)
            data = t.read(snapshot_id=sid)
        except (SnapshotNotExistError, OSError):
            # only acceptable if an expiry that had started before the consumer was recorded removed it
            time.sleep(3)
            assert not t.file_io.exists(f"{t.path}/snapshot/snapshot-{sid}"), f"read of retained snapshot {sid} failed"
            continue
        if append_only:
            assert data.num_rows == snap.total_record_count
        reads.value += 1  # the only writer of the counter
    consumers.delete("reader")


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("primary_key", [False, True])
def test_expiry_with_concurrent_writers_and_readers(warehouse: str, primary_key: bool) -> None:
    cat = Catalog(warehouse)
    opts = dict(OPTIONS)
    if primary_key:
        opts.update({"bucket": "2", "num-sorted-run.compaction-trigger": "3", "write-only": "true"})
    cat.create_table("db.t", SCHEMA, primary_keys=["id"] if primary_key else [], options=opts)
    ctx = mp.get_context("spawn")
    reads = ctx.Value("i", 0, lock=False)  # the reader is its only writer
    # the others stop between two operations when asked: killing one mid-commit would leave its new files behind,
    # which is what remove-orphan-files is for, and not what this test checks
    done = ctx.Event()
    writers = [ctx.Process(target=_writer, args=(warehouse, w)) for w in range(WRITERS)]
    others = [ctx.Process(target=_expirer, args=(warehouse, done)),
              ctx.Process(target=_reader, args=(warehouse, done, not primary_key, reads))]
    if primary_key:
        others.append(ctx.Process(target=_compactor, args=(warehouse, done)))
    # linger: the others keep going a little against the final table
    run_until_writers_finish(writers, others, done, writer_timeout=180, linger=1)
    t = cat.get_table("db.t")
    got = t.read()
    assert sorted(got.column("id").to_pylist()) == list(range(WRITERS * COMMITS * ROWS))
    assert reads.value > 0
    t.reset_consumer("reader")
    t.expire_snapshots(retain_min=1, time_retained=0, max_deletes=10_000)
    assert len(t.snapshots()) == 1
    assert sorted(t.read().column("id").to_pylist()) == list(range(WRITERS * COMMITS * ROWS))
    assert_exact_files(t)
