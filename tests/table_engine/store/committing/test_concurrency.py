"""Several processes committing to one table at once: every commit lands exactly once."""

from __future__ import annotations

import multiprocessing as mp

import pyarrow as pa
import pytest

from table_engine import Catalog

SCHEMA = pa.schema([("id", pa.int64()), ("writer", pa.int32())])
WRITERS = 6
COMMITS = 5
ROWS = 20


def _writer(warehouse: str, w: int) -> None:
    t = Catalog(warehouse).get_table("db.t")
    for c in range(COMMITS):
        base = (w * COMMITS + c) * ROWS
        t.write(pa.table({"id": pa.array(range(base, base + ROWS), pa.int64()),
                          "writer": pa.array([w] * ROWS, pa.int32())}, schema=SCHEMA))


@pytest.mark.slow
@pytest.mark.parametrize("primary_key", [True, False])
def test_concurrent_committers(warehouse: str, primary_key: bool) -> None:
    cat = Catalog(warehouse)
    cat.create_table("db.t", SCHEMA, primary_keys=["id"] if primary_key else [],
                     # several writers of one bucket must be write-only (Paimon): their compactions would conflict
                     # (append tables too, since writers compact their small files; a conflicting append compaction
                     # is dropped, see test_append_compact.py, but would add COMPACT snapshots to the count below)
                     options={"bucket": "2", "commit.max-retries": "100", "manifest.merge-min-count": "5",
                              "write-only": "true"}
                     if primary_key else {"commit.max-retries": "100", "write-only": "true"})
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(warehouse, w)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    t = cat.get_table("db.t")
    snaps = t.snapshots()
    assert [s.id for s in snaps] == list(range(1, WRITERS * COMMITS + 1))
    users = {}
    for s in snaps:
        users[s.commit_user] = users.get(s.commit_user, 0) + 1
    assert all(n == 1 for n in users.values()) and len(users) == WRITERS * COMMITS
    got = t.read()
    assert sorted(got.column("id").to_pylist()) == list(range(WRITERS * COMMITS * ROWS))
    assert snaps[-1].total_record_count == WRITERS * COMMITS * ROWS
