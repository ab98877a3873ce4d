"""Commits on S3 under faults injected by the loopback proxy: 500/503 answers, requests held past the client's
timeout, and responses dropped after the store applied the request (the object is written, the client sees a broken
connection). No commit is lost or doubled, the table stays readable, and errors that outlast the retries are
one-line :class:`StorageError` s naming no secret."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommitOutcomeUnknownError, StorageError
from table_engine.format.snapshot import list_snapshot_ids
from table_engine.table import Table
from tests.fault_proxy import Action, FaultProxy, Rule
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server
from tests.table_engine.store.committing.s3_support import proxy

__all__ = ["proxy"]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
SNAPSHOT = r"/snapshot/snapshot-\d+$"
FAST = {"s3.attempts.maximum": "4", "s3.connection.timeout": "1 s", "s3.retry.timeout": "20 s"}


def _table(s3_server: S3Server, proxy: FaultProxy, warehouse: str, primary_key: bool = True) -> Table:
    cat = Catalog(warehouse, {**s3_server.options(endpoint=proxy.endpoint), **FAST})
    return cat.create_table("db.t", SCHEMA, primary_keys=["id"] if primary_key else [],
                            options={"bucket": "1"} if primary_key else {})


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def _check(t: Table, commits: int, ids: list[int]) -> None:
    """``commits`` snapshots (none lost, none doubled), contiguous, and the rows ``ids`` once each."""
    assert list_snapshot_ids(t.file_io, t.path) == list(range(1, commits + 1))
    got = t.read().column("id").to_pylist()
    assert sorted(got) == sorted(ids)


@pytest.mark.timeout(300)
def test_server_errors_are_retried(s3_server: S3Server, s3_warehouse: str, proxy: FaultProxy) -> None:
    t = _table(s3_server, proxy, s3_warehouse)
    proxy.add(Rule("status", status=503, fraction=0.25))
    proxy.add(Rule("status", method="PUT", pattern=SNAPSHOT, status=500, nth=[1, 3]))
    for c in range(4):
        assert t.write(_rows(range(c * 10, c * 10 + 10))) == c + 1
    assert proxy.count(fault="status") > 4
    proxy.clear_rules()
    _check(t, 4, list(range(40)))


@pytest.mark.timeout(300)
def test_timeouts_are_retried(s3_server: S3Server, s3_warehouse: str, proxy: FaultProxy) -> None:
    t = _table(s3_server, proxy, s3_warehouse)
    proxy.delay_seconds = 3
    proxy.add(Rule("delay", method="PUT", pattern=SNAPSHOT, nth=[1]))
    proxy.add(Rule("delay", method="GET", pattern=r"/manifest/", nth=[2]))
    proxy.add(Rule("delay", method="PUT", pattern=r"\.parquet$", nth=[2]))
    for c in range(3):
        assert t.write(_rows(range(c * 10, c * 10 + 10))) == c + 1
    assert proxy.count(fault="delay") == 3
    proxy.clear_rules()
    _check(t, 3, list(range(30)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("pattern", [SNAPSHOT, r"/manifest/manifest-list-", r"/manifest/manifest-[0-9a-f]{8}-",
                                     r"\.parquet$"])
def test_dropped_responses_after_the_write(s3_server: S3Server, s3_warehouse: str, proxy: FaultProxy,
                                           pattern: str) -> None:
    """The store applied the PUT but the client saw a broken connection: the retried PUT (a conditional create of
    the snapshot meets our own object) must neither fail the commit nor publish it twice."""
    t = _table(s3_server, proxy, s3_warehouse)
    proxy.add(Rule("drop", method="PUT", pattern=pattern, nth=[1, 2, 4]))
    for c in range(4):
        assert t.write(_rows(range(c * 10, c * 10 + 10))) == c + 1
    assert proxy.count(fault="drop") == 3
    proxy.clear_rules()
    _check(t, 4, list(range(40)))


@pytest.mark.timeout(300)
def test_every_snapshot_attempt_dropped_is_found_by_reading_it_back(s3_server: S3Server, s3_warehouse: str,
                                                                    proxy: FaultProxy) -> None:
    """Every attempt of the snapshot PUT is applied and its response lost, until the client gives up: the
    committer reads the snapshot back, finds its own, and the commit succeeds once."""
    t = _table(s3_server, proxy, s3_warehouse)
    t.write(_rows(range(10)))
    proxy.add(Rule("drop", method="PUT", pattern=SNAPSHOT))
    assert t.write(_rows(range(10, 20))) == 2
    assert proxy.count("PUT", SNAPSHOT, fault="drop") >= 5  # the first attempt and at least 4 retries
    assert proxy.count("GET", r"/snapshot/snapshot-2$") >= 1  # read back
    proxy.clear_rules()
    _check(t, 2, list(range(20)))


@pytest.mark.timeout(300)
def test_unknown_outcome_keeps_the_files_and_a_retry_finds_the_commit(s3_server: S3Server, s3_warehouse: str,
                                                                      proxy: FaultProxy) -> None:
    """The snapshot PUT is applied but never answered and reading it back fails too: the outcome is unknown, so
    nothing is deleted; the caller's retry with the same commit user and identifier finds the commit (Paimon's
    exactly-once) instead of committing it twice."""
    t = _table(s3_server, proxy, s3_warehouse)
    t.write(_rows(range(10)))
    write = t.new_write()
    write.write(_rows(range(10, 20)))
    messages = write.prepare_commit(7)
    proxy.add(Rule("drop", method="PUT", pattern=SNAPSHOT, limit=10))
    proxy.add(Rule("status", method="GET", pattern=r"/snapshot/snapshot-2$", status=503, limit=10))
    committer = t.new_commit("job-1")
    with pytest.raises(CommitOutcomeUnknownError) as err:
        committer.commit(messages, 7)
    assert "\n" not in str(err.value) and SECRET_KEY not in str(err.value)
    proxy.clear_rules()
    files = sorted(s.path for s in t.file_io.walk(t.path))
    committer.abort(messages)  # what a caller does on an error: here it must delete nothing
    assert sorted(s.path for s in t.file_io.walk(t.path)) == files
    assert t.commit(messages, commit_user="job-1", commit_identifier=7) == 2
    _check(t, 2, list(range(20)))


@pytest.mark.timeout(300)
def test_persistent_failure_is_one_line_and_leaves_the_table_unchanged(s3_server: S3Server, s3_warehouse: str,
                                                                       proxy: FaultProxy) -> None:
    t = _table(s3_server, proxy, s3_warehouse, primary_key=False)
    t.write(_rows(range(10)))
    before = sorted((s.path, s.size) for s in t.file_io.walk(t.path))
    proxy.add(Rule("status", method="PUT", status=503))
    with pytest.raises(StorageError) as err:
        t.write(_rows(range(10, 20)))
    message = str(err.value)
    assert "\n" not in message and ("503" in message or "Service" in message), message
    assert SECRET_KEY not in message and ACCESS_KEY not in message
    proxy.clear_rules()
    assert sorted((s.path, s.size) for s in t.file_io.walk(t.path)) == before
    _check(t, 1, list(range(10)))


def test_expiry_stops_at_a_snapshot_it_cannot_delete(s3_server: S3Server, proxy: FaultProxy,
                                                     s3_warehouse: str) -> None:
    """The snapshots left must stay contiguous (committers probe forward from LATEST): expiry stops at the first
    snapshot file whose delete fails for good, says so in one line, and the next expiry resumes there."""
    t = _table(s3_server, proxy, s3_warehouse, primary_key=False)
    for i in range(6):
        t.write(_rows(range(i * 10, i * 10 + 10)))
    rule = proxy.add(Rule("status", method="DELETE", pattern=r"/snapshot/snapshot-3\b", status=503))
    with pytest.raises(StorageError, match="snapshot-3") as e:
        t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    assert "\n" not in str(e.value) and SECRET_KEY not in str(e.value)
    latest = t.latest_snapshot_id()
    assert list_snapshot_ids(t.file_io, t.path) == list(range(3, latest + 1))
    rule.limit = rule.fired  # the store recovers
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    assert list_snapshot_ids(t.file_io, t.path) == [latest]
    assert sorted(t.read().column("id").to_pylist()) == list(range(60))
    t.write(_rows(range(60, 70)))
    assert t.latest_snapshot_id() == latest + 1



@pytest.mark.timeout(300)
@pytest.mark.parametrize("action", ["reset", "drop"])
@pytest.mark.parametrize("method", ["HEAD", "GET", "LIST"])
def test_reads_whose_connection_breaks_are_retried(s3_server: S3Server, s3_warehouse: str, proxy: FaultProxy,
                                                   method: str, action: Action) -> None:
    """A HEAD, GET or LIST whose connection closes before the answer -- before the store saw it (``reset``: a store
    closing the kept-alive connection the client reused) or after (``drop``) -- is sent again: reads are idempotent,
    and one broken connection does not fail a compaction or an orphan cleanup."""
    t = _table(s3_server, proxy, s3_warehouse)
    for c in range(2):
        t.write(_rows(range(c * 10, c * 10 + 10)))
    proxy.add(Rule(action, method=method, nth=[1, 2]))
    t.maintenance.compact(full=True)
    assert t.maintenance.remove_orphan_files().paths == []
    assert proxy.count(method, fault=action) == 2
    proxy.clear_rules()
    _check(t, 3, list(range(20)))
