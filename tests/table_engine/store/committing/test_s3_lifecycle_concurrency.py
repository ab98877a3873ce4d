"""The lifecycle concurrency scenario (writers, dedicated compaction, an expirer keeping one snapshot, a pinned
reader, each a process) on the session's S3 server, through the fault proxy: a seeded fraction of the metadata PUTs,
DELETEs and GETs is answered 503, and as many are applied by the store with their response dropped.

An injected fault may make an operation fail after its retries: a write that raised is not acknowledged and its rows
may or may not be in the table (it may have published before failing); nothing else is allowed. Every acknowledged
commit's rows must be there, every read of a pinned snapshot must succeed, and a full expiry must leave one snapshot
with the same rows and no orphan or missing file. The actors and checks are those of the local test
(:mod:`tests.table_engine.store.lifecycle.concurrency_actors`); this variant is smaller, moto serves only a few
hundred requests a second.
"""

from __future__ import annotations

import pathlib
import time

import pytest

from tests.fault_proxy import FaultProxy
from tests.s3_server import S3Server
from tests.table_engine.store.lifecycle.concurrency_actors import (
    Scenario,
    Timeouts,
    check_table,
    create_table,
    metadata_fault_rules,
    report,
    run_actors,
)
from tests.table_engine.store.lifecycle.lifecycle_support import assert_exact_files

FAULT_FRACTION = 0.02
TIMEOUTS = Timeouts(ready=120, writers=240, settle=60, stop=60)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("primary_key", [False, True])
def test_s3_expiry_with_concurrent_writers_and_readers_under_faults(s3_server: S3Server, s3_warehouse: str,
                                                                     tmp_path: pathlib.Path,
                                                                     primary_key: bool) -> None:
    logs = tmp_path / "actors"
    logs.mkdir()
    with FaultProxy(s3_server.endpoint, seed=35 + primary_key) as proxy:
        scn = Scenario(warehouse=s3_warehouse, log_dir=str(logs), primary_key=primary_key,
                       options=s3_server.options(endpoint=proxy.endpoint), commits=8, storage_faults=True,
                       deadline=time.time() + TIMEOUTS.total())
        create_table(scn)
        for rule in metadata_fault_rules(FAULT_FRACTION):
            proxy.add(rule)
        run_actors(scn, TIMEOUTS)
        proxy.clear_rules()
        assert proxy.count(fault="status") > 0 and proxy.count(fault="drop") > 0, proxy.counts()
        outcome = check_table(scn)
        assert not outcome.problems(), report(outcome)
        assert outcome.acked, "no write was acknowledged"
        assert outcome.reads >= scn.reads_after
        t = scn.table()  # through the proxy, its rules cleared
        assert len(t.snapshots()) == 1
        assert_exact_files(t)
