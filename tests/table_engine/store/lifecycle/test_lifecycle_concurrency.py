"""Expiry while other processes write and read: no acknowledged commit is lost and no read of a pinned snapshot fails.

Append table: two writers commit with commit-time maintenance on (so they expire concurrently with each other).
Primary-key table: Paimon's multi-writer set-up -- ``write-only`` writers plus a dedicated compaction process.
In both, another process expires in a loop (``retain_min=1, time_retained=0``), and a reader pins each snapshot with
a consumer (Paimon's way to protect a read) *before* choosing it, so that every read must succeed.

The actors and the checks are in :mod:`concurrency_actors` (shared with the S3 variant and ``tests.soak_processes``);
its docstring says why the scenario has no race of its own: the processes wait for conditions (ready, go, reads
after the last write), never for a sleep, and every failure names the acknowledged commit, read or file concerned.
"""

from __future__ import annotations

import pathlib
import time

import pytest

from tests.table_engine.store.lifecycle.concurrency_actors import (
    Scenario,
    Timeouts,
    check_table,
    create_table,
    report,
    run_actors,
)
from tests.table_engine.store.lifecycle.lifecycle_support import assert_exact_files

TIMEOUTS = Timeouts(ready=120, writers=300, settle=60, stop=60)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("primary_key", [False, True])
def test_expiry_with_concurrent_writers_and_readers(warehouse: str, tmp_path: pathlib.Path,
                                                    primary_key: bool) -> None:
    logs = tmp_path / "actors"
    logs.mkdir()
    scn = Scenario(warehouse=warehouse, log_dir=str(logs), primary_key=primary_key,
                   deadline=time.time() + TIMEOUTS.total())
    create_table(scn)
    run_actors(scn, TIMEOUTS)
    outcome = check_table(scn)  # every check, each failure with its evidence, then the plain assertions
    assert not outcome.problems(), report(outcome)
    assert len(outcome.acked) == scn.writers * scn.commits
    assert outcome.reads >= scn.reads_after
    t = scn.table()
    assert len(t.snapshots()) == 1
    assert sorted(t.read().column("id").to_pylist()) == list(range(scn.total_rows()))
    assert_exact_files(t)
