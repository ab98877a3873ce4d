"""The actors of a simulation run: real engine calls over a table whose FileIO is the simulated one.

Each factory returns a zero-argument function that the scheduler runs as an actor (a greenlet). Writers write ids
nobody else writes (``wid * 100_000 + ...``), so the checker can tell every commit's rows apart, and report each
acknowledged commit (``write()`` returned a snapshot id) to it. Maintenance actors loop while a writer still runs
(at least once, at most ``rounds`` times), with a virtual sleep between rounds so that the scheduler can place them
anywhere in the writers' progress.

Outcomes: a :class:`CommitConflictError` (a compaction that lost to a concurrent one) is tolerated, and so is any
error of an action during which a fault was injected into this actor; everything else propagates and ends the actor,
and the run reports it as a finding.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import pyarrow as pa

from table_engine import Catalog, clock
from table_engine.errors import CommitConflictError
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.table import Table
from tests.simulation.invariants import Checker, StreamLog
from tests.simulation.mem_io import MemFileIO
from tests.simulation.scheduler import Scheduler
from tests.simulation.sim_io import SimFileIO

WAREHOUSE = "/sim/wh"
IDENT = "db.t"
SCHEMA = pa.schema([("id", pa.int64()), ("w", pa.int32())])
PARTITIONED_SCHEMA = pa.schema([("id", pa.int64()), ("w", pa.int32()), ("dt", pa.string())])
PARTITIONS = ("2023-11-01", "2023-11-14")
"""The partitions a writer of a partitioned table alternates between: one older than a day at the simulation's
start (2023-11-14 22:13 UTC), which partition expiry drops, and that day's, which it keeps."""
ROWS = 3

T = TypeVar("T")
Actor = Callable[[], None]


@dataclass
class World:
    """One run's store, scheduler and checker, shared by the actors."""

    raw: MemFileIO
    sched: Scheduler
    sim: SimFileIO
    checker: Checker
    catalog: Catalog
    """The catalog the actors open the table through, over ``sim`` (a metastore catalog with its lock when the
    scenario is ``locked``)."""
    writers: set[str] = field(default_factory=set)
    """Names of the writer actors (maintenance loops while one of them has not finished)."""
    tolerated: list[str] = field(default_factory=list)
    rolled_back: bool = False

    def table(self) -> Table:
        return self.catalog.get_table(IDENT)

    def writing(self) -> bool:
        return any(w not in self.sched.record.outcomes for w in self.writers)

    def guarded(self, name: str, fn: Callable[[], T]) -> T | None:
        """``fn()``; None when it failed in a tolerated way (recorded), else its error propagates."""
        before = self.sched.faults_of.get(name, 0)
        try:
            return fn()
        except CommitConflictError as e:
            self.tolerated.append(f"{name}: CommitConflictError: {str(e)[:120]}")
        except Exception as e:
            if self.sched.faults_of.get(name, 0) == before:
                raise
            self.tolerated.append(f"{name}: {type(e).__name__} after an injected fault: {str(e)[:120]}")
        return None


def rows(ids: range, wid: int, dt: str | None = None) -> pa.Table:
    cols = {"id": pa.array(ids, pa.int64()), "w": pa.array([wid] * len(ids), pa.int32())}
    if dt is None:
        return pa.table(cols, schema=SCHEMA)
    return pa.table({**cols, "dt": pa.array([dt] * len(ids), pa.string())}, schema=PARTITIONED_SCHEMA)


def writer(world: World, name: str, wid: int, commits: int, maintenance: bool = False,
           after: Callable[[], bool] | None = None) -> Actor:
    """``after``: wait (virtual sleeps) until it holds before the first write."""
    world.writers.add(name)

    def run() -> None:
        while after is not None and not after():
            world.sched.sleep(0.01)
        t = world.table()
        t.commit_maintenance = maintenance
        partitioned = bool(t.partition_keys)
        for c in range(commits):
            ids = range(wid * 100_000 + c * ROWS, wid * 100_000 + (c + 1) * ROWS)
            dt = PARTITIONS[(c + wid) % 2] if partitioned else None
            world.checker.attempt(ids)
            sid = world.guarded(name, lambda ids=ids, dt=dt: t.write(rows(ids, wid, dt)))  # type: ignore[misc]
            if sid is not None:
                world.checker.ack(name, sid, ids, dt)
    return run


def maintenance_loop(world: World, name: str, rounds: int, action: Callable[[Table, int], object]) -> Actor:
    """``action(table, round)`` while a writer runs (at least once, at most ``rounds`` times)."""

    def run() -> None:
        t = world.table()
        i = 0
        while i == 0 or (i < rounds and world.writing()):
            world.guarded(name, lambda i=i: action(t, i))  # type: ignore[misc]
            i += 1
            world.sched.sleep(0.01)
    return run


def expirer(world: World, name: str, rounds: int = 30) -> Actor:
    return maintenance_loop(world, name, rounds, lambda t, _: t.expire_snapshots(retain_min=1, time_retained=0))


def changelog_expirer(world: World, name: str, rounds: int = 30) -> Actor:
    return maintenance_loop(world, name, rounds, lambda t, _: t.maintenance.expire_changelogs(retain_min=1))


def partition_expirer(world: World, name: str, rounds: int = 30) -> Actor:
    """Drops the partitions older than a day (by their values, at the simulation's clock); tells the checker which
    partitions each drop commit removed, so that the rows it dropped are not counted as lost."""

    def step(t: Table, _: int) -> None:
        now = datetime.datetime.fromtimestamp(clock.now_millis() / 1000, datetime.UTC).replace(tzinfo=None)
        result = t.maintenance.expire_partitions(expiration_time="1 d", strategy="values-time", now=now)
        world.checker.partitions_dropped(result.snapshot_ids, [p["dt"] for p in result.partitions])
    return maintenance_loop(world, name, rounds, step)


def tag_expirer(world: World, name: str, older_than_millis: int = 20, rounds: int = 30) -> Actor:
    """Deletes the tags created more than ``older_than_millis`` of simulated time ago (Paimon's ``expire_tags``)."""
    return maintenance_loop(world, name, rounds, lambda t, _: t.maintenance.expire_tags(
        older_than_millis=clock.now_millis() - older_than_millis))


def compactor(world: World, name: str, rounds: int = 30, full: bool = False) -> Actor:
    return maintenance_loop(world, name, rounds, lambda t, _: t.maintenance.compact(full=full))


SORT_STRATEGIES = ("order", "zorder", "hilbert")


def sorter(world: World, name: str, rounds: int = 30) -> Actor:
    """Sort compactions of the append table by ``w, id``, a strategy after the other (ADR 0049: COMPACT commits of
    every live file of a partition, racing the appends and the other compactions)."""
    return maintenance_loop(world, name, rounds, lambda t, i: t.maintenance.compact(
        order_strategy=SORT_STRATEGIES[i % len(SORT_STRATEGIES)], order_by=["w", "id"]))


def changer(world: World, name: str, victim: str, rounds: int = 30) -> Actor:
    """Row-level changes (issue 41) of the rows ``victim`` wrote, one acknowledged commit of it at a time: a DELETE
    of its ids, then an UPDATE of the next one's ``w`` (their ids stay), alternately, racing the writers,
    compactions and expiry. A change that loses to a concurrent compaction plans again; one that still fails must
    have removed nothing (a DELETE's ids count as removed only once it returned a snapshot, or failed after an
    injected fault)."""

    def run() -> None:
        t = world.table()
        world.checker.append_only = False
        done: set[int] = set()
        i = 0
        while i == 0 or (i < rounds and world.writing()):
            todo = [a for a in world.checker.acks if a.actor == victim and a.index not in done]
            if todo:
                ack = todo[0]
                done.add(ack.index)
                ids = list(ack.ids)
                faults = world.sched.faults_of.get(name, 0)
                if i % 2 == 0:
                    r = world.guarded(name, lambda ids=ids: t.row_level.delete([("id", "in", ids)]))  # type: ignore[misc]
                    if (r is not None and r.snapshot_id is not None) or world.sched.faults_of.get(name, 0) != faults:
                        world.checker.deleted(ids)
                else:
                    world.guarded(name, lambda ids=ids: t.row_level.update(  # type: ignore[misc]
                        {"w": 99}, [("id", "in", ids)]))
            i += 1
            world.sched.sleep(0.01)
    return run


def orphan_cleaner(world: World, name: str, older_than: int, rounds: int = 10) -> Actor:
    """``older_than``: a cut-off before the run started, so files in flight (all newer) are never candidates.

    A concurrent expiry that removes metadata while orphan cleaning reads it makes it read again, and after a few
    tries give up with a retryable CommitConflictError (tolerated, as for every actor); a MissingFileError would
    mean a retained snapshot lost metadata: a finding."""
    return maintenance_loop(world, name, rounds,
                            lambda t, _: t.maintenance.remove_orphan_files(older_than_millis=older_than))


def tagger(world: World, name: str, rounds: int = 30) -> Actor:
    """Tags the latest snapshot each round and deletes its tag of two rounds ago."""

    def step(t: Table, i: int) -> None:
        if i >= 2:
            t.delete_tag(f"{name}-{i - 2}", ignore_if_not_exists=True)
        if t.latest_snapshot_id() is not None:
            t.create_tag(f"{name}-{i}")
            world.checker.tag_created(f"{name}-{i}")  # acknowledged: it must read from now on
    return maintenance_loop(world, name, rounds, step)


def brancher(world: World, name: str, rounds: int = 10) -> Actor:
    """Creates a branch from a tag of its own each round, deletes the previous branch."""

    def step(t: Table, i: int) -> None:
        if i >= 1:
            t.delete_branch(f"{name}{i - 1}", ignore_if_missing=True)
        if t.latest_snapshot_id() is None:
            return
        t.create_tag(f"{name}-tag{i}")
        world.checker.tag_created(f"{name}-tag{i}")
        t.create_branch(f"{name}{i}", tag=f"{name}-tag{i}")
        world.checker.branch_created(f"{name}{i}")
    return maintenance_loop(world, name, rounds, step)


def rollbacker(world: World, name: str, quiesce: frozenset[str] = frozenset()) -> Actor:
    """Tags the latest snapshot early on, and rolls back to that tag once writers made progress and the writers in
    ``quiesce`` finished (a rollback is an operator's action on a table nobody writes: Paimon's too)."""

    def run() -> None:
        t = world.table()
        while t.latest_snapshot_id() is None:
            world.sched.sleep(0.01)
        t.create_tag("rb")
        world.checker.tag_created("rb")
        for _ in range(20):
            world.sched.sleep(0.01)
        while not quiesce <= world.sched.record.outcomes.keys():
            world.sched.sleep(0.01)
        target = t.tag_snapshot("rb").id
        world.checker.rollback_started()
        try:
            world.guarded(name, lambda: t.rollback_to("rb"))
        finally:
            world.checker.rollback_done(target)
            world.rolled_back = True
    return run


def stream_consumer(world: World, name: str, rounds: int = 40) -> Actor:
    """Streams the table with consumer ``name`` (recorded at snapshot 1 before the run, so expiry keeps what it has
    not read) and logs every id it sees; on an injected fault it goes back to its last checkpoint."""
    log = world.checker.streams.setdefault(name, StreamLog())

    def run() -> None:
        t = world.table()
        scan = t.new_stream_scan(options={"consumer-id": name})
        i = 0
        while i == 0 or (i < rounds and world.writing()) or i < 2:
            def poll() -> None:
                plan = scan.plan()
                if plan is None:
                    return
                ids = [x for b in scan.read(plan, columns=["id"]) for x in b.column("id").to_pylist()]
                # the scan's position is the truth; the consumer file (which may fail to be written, or be written
                # and then report an error) only protects what is not read yet from expiry
                log.ids.extend(ids)
                log.next_snapshot = scan.checkpoint()
                scan.notify_checkpoint_complete(scan.checkpoint())

            before = world.sched.faults_of.get(name, 0)
            world.guarded(name, poll)
            if world.sched.faults_of.get(name, 0) != before:
                scan.restore(log.next_snapshot)
            i += 1
            world.sched.sleep(0.01)
    return run


class PinnedReadFailed(AssertionError):
    """A read of a snapshot pinned before it was chosen failed or read wrong rows."""


def pinning_reader(world: World, name: str, rounds: int = 30) -> Actor:
    """Pins before choosing: records its consumer at a lower bound (1), then reads the latest id, moves the pin
    there and reads it. Expiry reads the latest snapshot before the consumers, so no expiry can remove the chosen
    snapshot: every read must succeed and match the snapshot's rows at publication."""

    def step(t: Table, _: int) -> None:
        # a rollback removes pinned snapshots too, by design: a read it overlapped may fail
        rollbacks = world.checker.rollbacks - world.checker.rollback_active
        try:
            pinned_read(t)
        except Exception as e:
            if rollbacks != world.checker.rollbacks or world.checker.rollback_active:
                world.tolerated.append(f"{name}: a read failed during a rollback: {type(e).__name__}")
                return
            raise

    def pinned_read(t: Table) -> None:
        cm = ConsumerManager.of(t.store)
        cm.update(name, 1)
        sid = t.latest_snapshot_id()
        if sid is None:
            return
        cm.update(name, sid)
        try:
            got = sorted(t.read(columns=["id"], snapshot_id=sid).column("id").to_pylist())
        except Exception as e:
            raise PinnedReadFailed(f"{name}: read of pinned snapshot {sid} failed: {type(e).__name__}: {e}") from e
        want = world.checker.published.get(sid)
        if want is not None and got != want:
            raise PinnedReadFailed(f"{name}: pinned snapshot {sid} read {len(got)} rows, {len(want)} at publication")

    loop = maintenance_loop(world, name, rounds, step)

    def run() -> None:
        loop()
        world.guarded(name, lambda: ConsumerManager.of(world.table().store).delete(name))
    return run
