"""Commit cost is flat in the table's history; the exactly-once check reads only snapshots that can match (issue 14).

Counts, never times: a :class:`CountingFileIO` under the committer counts the metadata files one commit reads."""

from __future__ import annotations

import dataclasses
import tempfile
import threading
from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog, Table
from table_engine.core_options import CommitUser
from table_engine.errors import CommitError
from table_engine.format.snapshot import CommitKind, Snapshot
from table_engine.io.base import FileIO
from table_engine.io.counting import CountingFileIO
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.writing.write import TableWrite
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def data(ids: range | list[int]) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def counting_ctx(t: Table) -> tuple[StoreContext, CountingFileIO]:
    fio = CountingFileIO(t.file_io)
    return dataclasses.replace(t.store, file_io=fio), fio


def messages(ctx: StoreContext, ids: range | list[int]) -> list[CommitMessage]:
    w = TableWrite(ctx)
    w.write(data(ids))
    return w.prepare_commit()


def by_kind(fio: CountingFileIO) -> Counter[str]:
    """Metadata files read, by kind (snapshot files and hints, manifest lists, manifests, index manifests...)."""
    out: Counter[str] = Counter()
    for p in fio.read_paths:
        name = p.rsplit("/", 1)[-1]
        kind = next((k for k in ("manifest-list", "index-manifest") if name.startswith(k + "-")), None)
        out[kind or name.split("-")[0]] += 1
    return out


def measure(t: Table, commit: FileStoreCommit, ctx: StoreContext, fio: CountingFileIO, ids: list[int],
            identifier: int) -> tuple[Counter[str], int]:
    msgs = messages(ctx, ids)
    fio.reset()
    assert commit.commit(msgs, identifier) is not None
    return by_kind(fio), fio.probes()


def test_metadata_reads_of_a_commit_do_not_grow_with_history(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    ctx, fio = counting_ctx(t)
    job = FileStoreCommit(ctx, CommitUser("job"))  # a streaming job's committer, reused for every commit
    results = []
    row = 0
    for target in (10, 300):
        while (t.latest_snapshot_id() or 0) < target - 4:
            t.write(data([row]))
            row += 1
        # a fresh commit user (Table.write): reads nothing to find out whether it committed before
        fresh = FileStoreCommit(ctx, CommitUser("fresh-" + str(target), 0))
        fresh_reads = measure(t, fresh, ctx, fio, [row], 1)
        # the job's committer, after one snapshot of another writer: reads the snapshots since its last check
        measure(t, job, ctx, fio, [row + 1], target)
        t.write(data([row + 2]))
        job_reads = measure(t, job, ctx, fio, [row + 3], target + 1)
        # a restarted job (a new committer, same user): one walk back to the user's newest snapshot
        restarted = FileStoreCommit(ctx, CommitUser("job"))
        restarted_reads = measure(t, restarted, ctx, fio, [row + 4], target + 2)
        row += 5
        assert t.latest_snapshot_id() == target + 1
        results.append((fresh_reads, job_reads, restarted_reads))
    at_10, at_300 = results
    for small, large in zip(at_10, at_300, strict=True):
        reads_small, probes_small = small
        reads_large, probes_large = large
        # manifest merging (manifest.merge-min-count) reads a number of manifests that cycles with the commits,
        # bounded by the merge count whatever the history; everything else is read the same number of times
        for kind in ("snapshot", "LATEST", "manifest-list", "index-manifest", "schema"):
            assert reads_small[kind] == reads_large[kind], (kind, small, large)
        assert reads_large["manifest"] <= t.options.manifest_merge_min_count()
        assert probes_small == probes_large
    # the fresh user read one snapshot (the latest, to build on); the job's committer the latest twice (to check,
    # then to build on), the newest snapshot it had examined (unchanged: no rollback) and the one published since
    # by the other writer (its own is known); the restarted job the latest twice (its newest snapshot)
    assert at_300[0][0]["snapshot"] == 1
    assert at_300[1][0]["snapshot"] == 4
    assert at_300[2][0]["snapshot"] == 2


class _RacingFileIO(CountingFileIO):
    """Before each of this committer's first ``races`` snapshot publications, another committer publishes the
    snapshot id it is about to take: a real concurrent commit landing between its read and its write."""

    def __init__(self, inner: FileIO, table: Table, races: int) -> None:
        super().__init__(inner)
        self.table = table
        self.races = races

    def write_if_absent(self, path: str, data_: bytes) -> bool:
        if self.races > 0 and "/snapshot/snapshot-" in path:
            self.races -= 1
            self.table.write(data([10_000 + self.races]))
        return super().write_if_absent(path, data_)


def test_retried_commit_after_lost_races_is_found_not_doubled(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "write-only": "true", "commit.max-retries": "10"})
    t.write(data([0]))
    fio = _RacingFileIO(t.file_io, t, races=3)
    ctx = dataclasses.replace(t.store, file_io=fio)
    committer = FileStoreCommit(ctx, CommitUser("job"))
    msgs = messages(t.store, range(1, 6))
    sid = committer.commit(msgs, 1)
    assert committer.lost_races == 3 and sid == 5
    # a retried driver commits the same messages again (same committer, then a new one): found, not doubled
    assert committer.commit(msgs, 1) == 5
    assert FileStoreCommit(t.store, CommitUser("job")).commit(msgs, 1) == 5
    assert t.latest_snapshot_id() == 5
    assert [s.commit_user for s in t.snapshots()].count("job") == 1
    assert sorted(t.read().column("id").to_pylist()) == [0, 1, 2, 3, 4, 5, 10_000, 10_001, 10_002]


def _thread_writer(t: Table, user: int, commits: int, errors: list[BaseException]) -> None:
    try:
        committer = FileStoreCommit(t.store, CommitUser(f"job-{user}"))
        for ident in range(1, commits + 1):
            base = (user * commits + ident) * 10
            msgs = messages(t.store, range(base, base + 10))
            first = committer.commit(msgs, ident)
            assert committer.commit(msgs, ident) == first  # a retried commit: found, not doubled
    except BaseException as e:  # reported by the main thread
        errors.append(e)


@pytest.mark.timeout(300)
def test_concurrent_named_committers_commit_each_identifier_once(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"bucket": "2", "write-only": "true", "commit.max-retries": "100"})
    users, commits = 4, 5
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_thread_writer, args=(t, u, commits, errors)) for u in range(users)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(240)
        assert not th.is_alive()
    assert not errors, errors
    snaps = t.snapshots()
    assert len(snaps) == users * commits
    assert Counter((s.commit_user, s.commit_identifier) for s in snaps) == Counter(
        {(f"job-{u}", i): 1 for u in range(users) for i in range(1, commits + 1)})
    assert t.read().num_rows == users * commits * 10


def test_restarted_job_skips_what_it_committed_and_commits_the_rest(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    sent = {ident: messages(t.store, range(ident * 10, ident * 10 + 10)) for ident in range(1, 6)}
    first = FileStoreCommit(t.store, CommitUser("job"))
    committed = {}
    for ident in (1, 2, 3):
        committed[ident] = first.commit(sent[ident], ident)
        t.write(data([1000 + ident]))  # other writers in between
    assert committed == {1: 1, 2: 3, 3: 5}
    for _ in range(20):
        t.write(data([2000]))
    # the job restarts (a new committer, same user) and re-sends every identifier of its last checkpoint
    ctx, fio = counting_ctx(t)
    restarted = FileStoreCommit(ctx, CommitUser("job"))
    assert restarted.commit(sent[3], 3) == 5
    # one walk from the latest snapshot (26) back to the user's newest (5), read once
    assert by_kind(fio)["snapshot"] == 26 - 5 + 1
    assert restarted.commit(sent[1], 1) == 1  # older identifiers: looked up further back, found
    assert restarted.commit(sent[2], 2) == 3
    assert restarted.commit(sent[4], 4) == 27
    assert restarted.commit(sent[5], 5) == 28
    assert t.latest_snapshot_id() == 28
    assert [(s.commit_identifier, s.id) for s in t.snapshots() if s.commit_user == "job"] == [
        (1, 1), (2, 3), (3, 5), (4, 27), (5, 28)]
    assert t.read().num_rows == 50 + 3 + 1
    # an identifier older than the newest one that was never committed: identifiers of a user only grow
    with pytest.raises(CommitError, match="commit identifier 0 of job is older than 5"):
        FileStoreCommit(t.store, CommitUser("job")).commit(messages(t.store, [7]), 0)
    assert t.latest_snapshot_id() == 28


def _empty_commit(committer: FileStoreCommit, ident: int) -> int | None:
    return committer.commit([], ident, allow_empty=True)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "other"]), st.integers(1, 4), st.booleans()), max_size=14))
def test_commit_idempotence_against_a_model(ops: list[tuple[str, int, bool]]) -> None:
    """Model: a (user, identifier) is committed at most once; re-sending it returns its snapshot; an identifier
    below the user's newest that was never committed is refused; "other" is a fresh user (always commits)."""
    with tempfile.TemporaryDirectory() as tmp:
        t = Catalog(tmp).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
        committers: dict[str, FileStoreCommit] = {}
        model: dict[tuple[str, int], int] = {}
        newest: dict[str, int] = {}
        next_id = 1
        for user, ident, restart in ops:
            if user == "other":
                assert _empty_commit(FileStoreCommit(t.store, CommitUser("other-" + str(next_id), 0)), 1) == next_id
                next_id += 1
                continue
            if restart or user not in committers:
                committers[user] = FileStoreCommit(t.store, CommitUser(user))
            c = committers[user]
            if (user, ident) in model:
                assert _empty_commit(c, ident) == model[(user, ident)]
            elif ident < newest.get(user, 0):
                with pytest.raises(CommitError):
                    _empty_commit(c, ident)
            else:
                assert _empty_commit(c, ident) == next_id
                model[(user, ident)] = next_id
                newest[user] = ident
                next_id += 1
        snaps: list[Snapshot] = t.snapshots()
        assert [s.id for s in snaps] == list(range(1, next_id))
        assert all(s.commit_kind == CommitKind.APPEND for s in snaps)
        assert {(s.commit_user, s.commit_identifier): s.id for s in snaps if not s.commit_user.startswith("other")} \
            == model


def test_a_committer_notices_a_rollback_of_what_it_committed(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    t.write(data([0]))
    job = FileStoreCommit(t.store, CommitUser("job"))
    assert job.commit(messages(t.store, [1]), 1) == 2
    t.rollback_to(1)  # snapshot 2 (the job's commit 1) is gone
    again = messages(t.store, [1])
    assert job.commit(again, 1) == 2  # committed again, not "already committed"
    assert sorted(t.read().column("id").to_pylist()) == [0, 1]
    t.rollback_to(1)
    t.write(data([5]))  # snapshot 2 is now another writer's
    assert job.commit(messages(t.store, [1]), 1) == 3
    assert [(s.commit_user, s.commit_identifier) for s in t.snapshots()][1:] == [
        (t.snapshots()[1].commit_user, 2**63 - 1), ("job", 1)]
    assert sorted(t.read().column("id").to_pylist()) == [0, 1, 5]


def test_a_resent_identifier_whose_snapshot_expired_is_not_committed_again(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    sent = {ident: messages(t.store, [ident]) for ident in (1, 2, 3, 4)}
    job = FileStoreCommit(t.store, CommitUser("job"))
    assert [job.commit(sent[i], i) for i in (1, 2)] == [1, 2]
    for i in range(3):
        t.write(data([100 + i]))
    assert job.commit(sent[3], 3) == 6
    t.write(data([103]))
    assert t.expire_snapshots(retain_min=4, retain_max=4).expired_snapshot_ids == [1, 2, 3]
    # a restarted job re-sends 1..4: the job's 1 and 2 are in expired snapshots (older than its retained 3)
    restarted = FileStoreCommit(t.store, CommitUser("job"))
    assert restarted.commit(sent[2], 2) is None  # committed, in an expired snapshot: not committed again
    assert restarted.commit(sent[1], 1) is None
    assert restarted.commit(sent[3], 3) == 6
    assert restarted.commit(sent[4], 4) == 8
    assert t.latest_snapshot_id() == 8
    assert sorted(t.read().column("id").to_pylist()) == [1, 2, 3, 4, 100, 101, 102, 103]
