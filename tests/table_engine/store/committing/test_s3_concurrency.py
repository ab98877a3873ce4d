"""Concurrent commits on an S3 warehouse, with processes: 4 writers appending and upserting into one primary-key
table (``write-only``, Paimon's multi-writer set-up), a dedicated compaction process and an expiry process, many
rounds, all through the counting proxy in front of the test S3 server, which also fails 2% of the requests with a
503 and drops the response of 10% of the snapshot PUTs after the store applied them.

Checked at the end: every acknowledged row is there exactly once with its last acknowledged value; snapshot ids
are contiguous from the earliest to the latest; no snapshot object was written twice (the store answered 200 to at
most one PUT per snapshot key: every other attempt got 412); lost races happened, were retried and counted.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import pathlib
import re
import time
from collections import Counter
from multiprocessing.synchronize import Barrier, Event
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommitConflictError
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, list_snapshot_ids
from tests.fault_proxy import FaultProxy, Rule
from tests.processes import run_until_writers_finish
from tests.s3_server import S3Server
from tests.table_engine.store.committing.s3_support import proxy

__all__ = ["proxy"]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])
WRITERS = 4
ROUNDS = 6
NEW_ROWS = 5
OPTIONS = {"bucket": "2", "write-only": "true", "commit.max-retries": "200", "commit.min-retry-wait": "5 ms",
           "commit.max-retry-wait": "200 ms", "num-sorted-run.compaction-trigger": "3",
           "snapshot.num-retained.min": "2", "snapshot.time-retained": "0 s"}


def _writer(warehouse: str, options: dict[str, str], w: int, start: Barrier, out: str) -> None:
    """Each round: append NEW_ROWS new keys and update two of this writer's earlier keys, in one commit made at the
    same moment as the other writers' (the barrier); record every acknowledged commit."""
    t = Catalog(warehouse, options).get_table("db.t")
    acked: list[dict[str, Any]] = []
    races = 0
    for r in range(ROUNDS):
        base = w * 1_000_000
        ids = [base + r * NEW_ROWS + i for i in range(NEW_ROWS)] + ([base + (r - 1) * NEW_ROWS, base] if r else [])
        data = pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([r] * len(ids), pa.int64())}, schema=SCHEMA)
        write = t.new_write()
        write.write(data)
        messages = write.prepare_commit(BATCH_COMMIT_IDENTIFIER)
        committer = t.new_commit()
        start.wait(60)
        sid = committer.commit(messages, BATCH_COMMIT_IDENTIFIER)
        races += committer.lost_races
        acked.append({"sid": sid, "rows": dict(zip(ids, [r] * len(ids), strict=True))})
    pathlib.Path(out).write_text(json.dumps({"acked": acked, "lost_races": races}))


def _compactor(warehouse: str, options: dict[str, str], done: Event) -> None:
    t = Catalog(warehouse, options).get_table("db.t")
    while not done.is_set():
        try:
            t.maintenance.compact()
        except CommitConflictError:  # a concurrent commit won: try again
            pass
        time.sleep(0.05)


def _expirer(warehouse: str, options: dict[str, str], done: Event) -> None:
    t = Catalog(warehouse, options).get_table("db.t")
    while not done.is_set():
        t.expire_snapshots(retain_min=2, time_retained=0)
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_writers_compaction_and_expiry_on_s3(s3_server: S3Server, s3_warehouse: str, proxy: FaultProxy,
                                             tmp_path: pathlib.Path) -> None:
    options = s3_server.options(endpoint=proxy.endpoint)
    cat = Catalog(s3_warehouse, options)
    cat.create_table("db.t", SCHEMA, primary_keys=["id"], options=OPTIONS)
    # faults on top: some 503s anywhere, and some snapshot PUTs applied whose response is dropped
    proxy.add(Rule("drop", method="PUT", pattern=r"/snapshot/snapshot-\d+$", fraction=0.1))
    proxy.add(Rule("status", status=503, fraction=0.02))
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(WRITERS)
    done = ctx.Event()
    outs = [str(tmp_path / f"writer-{w}.json") for w in range(WRITERS)]
    writers = [ctx.Process(target=_writer, args=(s3_warehouse, options, w, start, outs[w])) for w in range(WRITERS)]
    # the background processes stop between two operations when asked, never killed mid-commit
    others = [ctx.Process(target=_compactor, args=(s3_warehouse, options, done)),
              ctx.Process(target=_expirer, args=(s3_warehouse, options, done))]
    run_until_writers_finish(writers, others, done, writer_timeout=400)

    proxy.clear_rules()
    assert proxy.count(fault="drop") > 0 and proxy.count(fault="status") > 0
    results = [json.loads(pathlib.Path(o).read_text()) for o in outs]
    expected: dict[int, int] = {}
    sids: list[int] = []
    for res in results:
        assert len(res["acked"]) == ROUNDS
        for commit in res["acked"]:  # a writer's own commits in order: the last acknowledged value wins
            sids.append(commit["sid"])
            expected.update({int(k): v for k, v in commit["rows"].items()})
    assert len(set(sids)) == len(sids), "two acknowledged commits claim the same snapshot"

    t = cat.get_table("db.t")
    got = t.read()
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a row is there twice"
    assert dict(zip(ids, got.column("v").to_pylist(), strict=True)) == expected

    snapshot_ids = list_snapshot_ids(t.file_io, t.path)
    assert snapshot_ids == list(range(snapshot_ids[0], snapshot_ids[-1] + 1))
    assert snapshot_ids[-1] >= WRITERS * ROUNDS

    published = Counter(r.key for r in proxy.requests
                        if r.op == "PUT" and r.status == 200 and re.search(r"/snapshot/snapshot-\d+$", r.key))
    assert published and max(published.values()) == 1, "a snapshot object was written twice"
    lost = sum(res["lost_races"] for res in results)
    assert lost > 0, "the writers never raced (the barrier makes them commit at the same moment)"
    assert proxy.count("PUT", r"/snapshot/snapshot-\d+$", status=412) >= lost
