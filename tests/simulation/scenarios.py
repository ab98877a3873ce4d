"""Scenarios (a table layout plus a cast of actors) and :func:`run_once`, which runs one interleaving of one.

A run is a pure function of (scenario, seed, decisions): the seed fixes UUIDs, faults and the strategy's choices; a
recorded decision list replays the interleaving exactly (:class:`~tests.simulation.scheduler.ReplayStrategy`).
Every run builds its state from scratch: a new in-memory store, a table created and seeded with one commit outside
the schedule, and fresh actors. A ``locked`` scenario's table is a metastore catalog's with ``lock.enabled``
(:class:`~table_engine.catalog.metastore_catalog.MetastoreCatalog` over a
:class:`~tests.simulation.sim_metastore.SimMetastore`), and the actors open it through that catalog over the simulated
FileIO, so each of their snapshot commits publishes inside the metastore's lock.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from table_engine import Catalog
from table_engine.catalog.identifiers import parse_identifier
from table_engine.catalog.metastore_catalog import MetastoreCatalog
from table_engine.clock import ManualClock, use_clock
from table_engine.iceberg import IcebergCommitter, writes_iceberg_metadata
from table_engine.store.changes.consumers import ConsumerManager
from tests.simulation import actors as a
from tests.simulation.determinism import START_MILLIS, deterministic
from tests.simulation.invariants import Ack, Checker, InvariantViolation
from tests.simulation.mem_io import MemFileIO
from tests.simulation.memo import DecodeMemo
from tests.simulation.scheduler import RunRecord, Scheduler, Strategy
from tests.simulation.sim_io import Faults, SimFileIO
from tests.simulation.sim_metastore import SimMetastore
from tests.simulation.sim_rest import SimRestCatalog, SimRestServer

BASE_OPTIONS = {"snapshot.num-retained.min": "1", "snapshot.time-retained": "0 s", "commit.max-retries": "200",
                "write-buffer-spillable": "false", "num-sorted-run.compaction-trigger": "3",
                "compaction.min.file-num": "3", "manifest.merge-min-count": "4"}
LOCKED_CATALOG = {"metastore": "hive", "lock.enabled": "true", "lock-acquire-timeout": "1 h"}
"""The catalog options of a ``locked`` scenario (any metastore value: the catalog is given its metastore). The
timeout is counted in the sleeps a waiter asks for (``sim_metastore.py``): about 450 tries at the longest sleep
(8 s), far more than any wait of a run, so reaching it is a finding (a lock never released)."""
REST_FAULT_RATE = 0.1
"""The share of commit requests to the simulated REST server that fail (``rest`` scenarios): half before the server
applies them (a 503), half after (the answer lost)."""
ICEBERG = {"metadata.iceberg.storage": "table-location"}
"""The options of the Iceberg scenarios: every commit's callback writes Iceberg metadata (ADR 0046)."""
CLUSTERING = {"clustering.incremental": "true", "clustering.columns": "w,id"}
"""The options of the clustering scenario: the writers' files are clustered by ``w, id`` (Paimon 1.3's layout)."""
ORPHAN_CUTOFF = START_MILLIS - 3_600_000
"""Orphan cleanup deletes files older than this: the planted orphans, never a file of the run."""

Build = Callable[[a.World], dict[str, a.Actor]]


@dataclass(frozen=True)
class Scenario:
    name: str
    build: Build
    primary_key: bool = False
    options: Mapping[str, str] = field(default_factory=dict)
    faults: float = 0.0
    coarse: bool = False
    """Decide only at snapshot, tag and consumer operations and sleeps (the bounded-exhaustive explorer)."""
    max_steps: int = 20_000
    partitioned: bool = False
    """Partitioned by ``dt`` (:data:`~tests.simulation.actors.PARTITIONS`)."""
    locked: bool = False
    """The table is a metastore catalog's with ``lock.enabled`` (:data:`LOCKED_CATALOG`): every snapshot commit's
    conditional create runs inside the simulated metastore's lock (:mod:`tests.simulation.sim_metastore`)."""
    rest: bool = False
    """The actors' table is a REST catalog's: every snapshot is committed through the simulated server's commit
    endpoint, whose requests fail at :data:`REST_FAULT_RATE` (:mod:`tests.simulation.sim_rest`)."""


@dataclass
class Result:
    scenario: str
    seed: int
    record: RunRecord
    violation: str | None
    tolerated: list[str]
    seconds: float
    actors: int
    acks: list[Ack] = field(default_factory=list)
    lock_waits: int = 0
    """Sleeps of actors waiting for the metastore's lock (``locked`` scenarios): how contended it was."""

    @property
    def ok(self) -> bool:
        return self.violation is None

    def trace_tail(self, n: int = 25) -> str:
        return "\n".join(f"  {actor:>10} {op:<16} {path}" for actor, op, path in self.record.trace[-n:])


def _coarse(op: str, path: str) -> bool:
    return op == "sleep" or "/snapshot/" in path or "/tag/" in path or "/consumer/" in path


def run_once(scenario: Scenario, seed: int, strategy: Strategy,
             hook: Callable[[a.World], None] | None = None) -> Result:
    """One interleaving of ``scenario``; ``hook(world)`` may patch the world before the actors start."""
    started = time.perf_counter()
    raw = MemFileIO()
    manual = ManualClock(START_MILLIS)
    sched = Scheduler(strategy, manual, max_steps=scenario.max_steps, decide=_coarse if scenario.coarse else None)
    violation: str | None = None
    with deterministic(seed, manual, sched.sleep), DecodeMemo().active():
        checker = Checker(raw, a.WAREHOUSE, a.IDENT)
        sim = SimFileIO(raw, sched, Faults(seed, scenario.faults))
        metastore: SimMetastore | None = None
        server: SimRestServer | None = None
        if scenario.rest:
            server = SimRestServer(raw, sched, seed, REST_FAULT_RATE)
            cat = Catalog(a.WAREHOUSE, file_io=raw)
            actors_catalog = SimRestCatalog(a.WAREHOUSE, server, sim)
        elif scenario.locked:
            metastore = SimMetastore(LOCKED_CATALOG, sched, checker.report)
            checker.creation_checks.append(functools.partial(metastore.check_creation, *parse_identifier(a.IDENT)))
            cat: Catalog = MetastoreCatalog(a.WAREHOUSE, LOCKED_CATALOG, metastore, file_io=raw)
            actors_catalog: Catalog = MetastoreCatalog(a.WAREHOUSE, LOCKED_CATALOG, metastore, file_io=sim)
        else:
            cat = Catalog(a.WAREHOUSE, file_io=raw)
            actors_catalog = Catalog(a.WAREHOUSE, file_io=sim)
        opts = {**BASE_OPTIONS, **({"bucket": "2"} if scenario.primary_key else {}), **scenario.options}
        schema = a.PARTITIONED_SCHEMA if scenario.partitioned else a.SCHEMA
        keys = ["id", "dt"] if scenario.partitioned else ["id"]  # a primary key holds the partition keys
        t = cat.create_table(a.IDENT, schema, primary_keys=keys if scenario.primary_key else [], options=opts,
                             partition_keys=["dt"] if scenario.partitioned else [])
        if writes_iceberg_metadata(t):
            checker.iceberg_dir = IcebergCommitter(t).dir
        with use_clock(ManualClock(START_MILLIS - 86_400_000)):
            for i in range(2):
                raw.write_bytes(f"{t.path}/bucket-0/data-orphan-{i}.parquet", b"orphan")
        ids = range(900_000, 900_000 + a.ROWS)
        checker.attempt(ids)
        dt = a.PARTITIONS[1] if scenario.partitioned else None
        sid = t.write(a.rows(ids, 9, dt))
        assert sid is not None
        checker.ack("setup", sid, ids, dt)
        if server is not None:
            server.register(t.path)
        world = a.World(raw, sched, sim, checker, actors_catalog)
        cast = scenario.build(world)
        if hook is not None:
            hook(world)
        rec = sched.run(cast, checker.after_step)
        violation = rec.failure
        errors = [f"actor {n} raised {o.text.strip().splitlines()[-1]}" for n, o in sorted(rec.outcomes.items())
                  if o.error is not None]
        if errors:
            violation = "; ".join(filter(None, [violation, *errors]))
        if rec.failure is None:
            try:
                checker.final()
            except InvariantViolation as e:
                violation = "; ".join(filter(None, [violation, str(e)]))
    return Result(scenario.name, seed, rec, violation, world.tolerated, time.perf_counter() - started, len(cast),
                  checker.acks, metastore.waits if metastore is not None else 0)


def _stream(world: a.World, name: str) -> a.Actor:
    ConsumerManager.of(world.checker.table().store).update(name, 1)  # before the run: expiry keeps what it did not read
    return a.stream_consumer(world, name)


def _append_maint(w: a.World) -> dict[str, a.Actor]:
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4, maintenance=True),
            "expire": a.expirer(w, "expire"), "tags": a.tagger(w, "tags"), "stream": _stream(w, "stream"),
            "pin": a.pinning_reader(w, "pin"), "orphans": a.orphan_cleaner(w, "orphans", ORPHAN_CUTOFF)}


def _pk_write_only(w: a.World) -> dict[str, a.Actor]:
    return {"w1": a.writer(w, "w1", 1, 4), "w2": a.writer(w, "w2", 2, 4), "compact": a.compactor(w, "compact"),
            "expire": a.expirer(w, "expire"), "branch": a.brancher(w, "branch"), "pin": a.pinning_reader(w, "pin"),
            "clexpire": a.changelog_expirer(w, "clexpire")}


def _pk_compacting(w: a.World) -> dict[str, a.Actor]:
    return {"w1": a.writer(w, "w1", 1, 4), "w2": a.writer(w, "w2", 2, 4),
            "w3": a.writer(w, "w3", 3, 3, maintenance=True), "compact": a.compactor(w, "compact"),
            "expire": a.expirer(w, "expire"), "pin": a.pinning_reader(w, "pin")}


def _append_write_only(w: a.World) -> dict[str, a.Actor]:
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "compact": a.compactor(w, "compact"), "expire": a.expirer(w, "expire"), "branch": a.brancher(w, "branch"),
            "pin": a.pinning_reader(w, "pin")}


def _append_faults(w: a.World) -> dict[str, a.Actor]:
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "expire": a.expirer(w, "expire"), "tags": a.tagger(w, "tags"), "stream": _stream(w, "stream"),
            "pin": a.pinning_reader(w, "pin")}


def _rollback(w: a.World) -> dict[str, a.Actor]:
    """The supported rollback: writers w1 and w2 stopped; w3 writes after it; expiry, tags and a reader go on."""
    return {"w1": a.writer(w, "w1", 1, 3), "w2": a.writer(w, "w2", 2, 3),
            "w3": a.writer(w, "w3", 3, 3, after=lambda: w.rolled_back), "expire": a.expirer(w, "expire"),
            "rollback": a.rollbacker(w, "rollback", quiesce=frozenset({"w1", "w2"})), "tags": a.tagger(w, "tags"),
            "pin": a.pinning_reader(w, "pin")}


def _rollback_concurrent(w: a.World) -> dict[str, a.Actor]:
    """A rollback while writers commit: it holds the history fence, waits for the commits in flight and is waited
    for (ADR 0039); a commit published before it ended may be rolled back, nothing else may be lost."""
    return {"w1": a.writer(w, "w1", 1, 4), "w2": a.writer(w, "w2", 2, 4), "expire": a.expirer(w, "expire"),
            "rollback": a.rollbacker(w, "rollback"), "tags": a.tagger(w, "tags"), "pin": a.pinning_reader(w, "pin")}


def _append_race(w: a.World) -> dict[str, a.Actor]:
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4, maintenance=True),
            "w3": a.writer(w, "w3", 3, 4), "expire": a.expirer(w, "expire"), "tags": a.tagger(w, "tags"),
            "orphans": a.orphan_cleaner(w, "orphans", ORPHAN_CUTOFF)}


def _partition_expire(w: a.World) -> dict[str, a.Actor]:
    """Writers alternate between a partition older than a day and today's; partition expiry drops the old one
    (an OVERWRITE commit racing the appends to it), snapshot and tag expiry, tags and a reader go on."""
    return {"w1": a.writer(w, "w1", 1, 4), "w2": a.writer(w, "w2", 2, 4, maintenance=True),
            "pexpire": a.partition_expirer(w, "pexpire"), "expire": a.expirer(w, "expire"),
            "tags": a.tagger(w, "tags"), "tagexpire": a.tag_expirer(w, "tagexpire"), "pin": a.pinning_reader(w, "pin")}


def _append_locked(w: a.World) -> dict[str, a.Actor]:
    """Three writers (one with commit-time maintenance) contend for the metastore's lock at each publication;
    expiry, tags, orphan cleanup and a pinning reader go on beside them (they publish no snapshot)."""
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "w3": a.writer(w, "w3", 3, 3), "expire": a.expirer(w, "expire"), "tags": a.tagger(w, "tags"),
            "orphans": a.orphan_cleaner(w, "orphans", ORPHAN_CUTOFF), "pin": a.pinning_reader(w, "pin")}


def _pk_locked(w: a.World) -> dict[str, a.Actor]:
    """Primary-key writers (commit-time compaction) and a dedicated compactor contend for the lock; expiry and a
    pinning reader go on beside them."""
    return {"w1": a.writer(w, "w1", 1, 4), "w2": a.writer(w, "w2", 2, 4), "w3": a.writer(w, "w3", 3, 3),
            "compact": a.compactor(w, "compact"), "expire": a.expirer(w, "expire"), "pin": a.pinning_reader(w, "pin")}


def _append_iceberg(w: a.World) -> dict[str, a.Actor]:
    """Iceberg-compatible metadata on (ADR 0046): two append writers (one with commit-time compaction and expiry)
    whose post-commit callbacks race on ``v<N>``, and an expiry that removes snapshots under the callbacks."""
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "expire": a.expirer(w, "expire"), "pin": a.pinning_reader(w, "pin")}


def _append_rest(w: a.World) -> dict[str, a.Actor]:
    """A REST catalog's table (ADR 0045): three writers (one with commit-time maintenance) commit through the
    server's endpoint, whose answers fail or are lost; expiry, tags, orphan cleanup and a pinning reader beside."""
    return _append_locked(w)


def _append_sort(w: a.World) -> dict[str, a.Actor]:
    """Sort compactions (issue 40) of the partition two writers append to (one compacting at commit), beside a
    plain compaction, expiry, tags, a streaming consumer and a pinning reader: a sort that loses a race is planned
    again, an append committed while it ran survives."""
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "sort": a.sorter(w, "sort"), "compact": a.compactor(w, "compact"), "expire": a.expirer(w, "expire"),
            "tags": a.tagger(w, "tags"), "stream": _stream(w, "stream"), "pin": a.pinning_reader(w, "pin")}


def _append_cluster(w: a.World) -> dict[str, a.Actor]:
    """An incremental clustering table (``clustering.incremental``): writers never compact it; a clustering
    compaction (Paimon's picker) and a full one race them and each other, expiry and a pinning reader beside."""
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "cluster": a.compactor(w, "cluster"), "full": a.compactor(w, "full", full=True),
            "expire": a.expirer(w, "expire"), "pin": a.pinning_reader(w, "pin")}


def _append_row_level(w: a.World) -> dict[str, a.Actor]:
    """Row-level changes (issue 41) of the rows one writer commits, racing two more writers (one compacting at
    commit), a full compaction, expiry, a streaming consumer and a pinning reader: a change whose files a compaction
    replaced plans again; an append committed meanwhile survives; no row is lost or doubled."""
    return {"w1": a.writer(w, "w1", 1, 4, maintenance=True), "w2": a.writer(w, "w2", 2, 4),
            "victim": a.writer(w, "victim", 3, 4), "change": a.changer(w, "change", "victim"),
            "compact": a.compactor(w, "compact", full=True), "expire": a.expirer(w, "expire"),
            "stream": _stream(w, "stream"), "pin": a.pinning_reader(w, "pin")}


def _small(w: a.World) -> dict[str, a.Actor]:
    return {"a": a.writer(w, "a", 1, 1), "b": a.writer(w, "b", 2, 2), "expire": a.expirer(w, "expire", rounds=2)}


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("append-maint", _append_maint),
    Scenario("pk-write-only", _pk_write_only, primary_key=True,
             options={"write-only": "true", "changelog.num-retained.min": "3", "changelog-producer": "input"}),
    Scenario("pk-compacting", _pk_compacting, primary_key=True),
    Scenario("append-race", _append_race),
    Scenario("append-write-only", _append_write_only, options={"write-only": "true"}),
    Scenario("append-faults", _append_faults, faults=0.02),
    Scenario("rollback", _rollback),
    Scenario("rollback-concurrent", _rollback_concurrent),
    Scenario("partition-expire", _partition_expire, partitioned=True),
    Scenario("pk-partition-expire", _partition_expire, primary_key=True, partitioned=True,
             options={"bucket": "1"}),
    Scenario("append-locked", _append_locked, locked=True),
    Scenario("pk-locked", _pk_locked, primary_key=True, locked=True),
    Scenario("append-iceberg", _append_iceberg, options=ICEBERG),
    Scenario("append-rest", _append_rest, rest=True),
    Scenario("pk-rest", _pk_locked, primary_key=True, rest=True),
    Scenario("rollback-iceberg", _rollback_concurrent, options=ICEBERG),
    Scenario("append-sort", _append_sort),
    Scenario("append-cluster", _append_cluster, options=CLUSTERING),
    Scenario("append-row-level", _append_row_level),
    Scenario("append-row-level-dv", _append_row_level, options={"deletion-vectors.enabled": "true"}),
    Scenario("small", _small, coarse=True),
)}
RANDOM_SCENARIOS = ("append-race", "append-maint", "append-write-only", "pk-write-only", "pk-compacting",
                    "append-faults", "rollback", "rollback-concurrent", "partition-expire", "pk-partition-expire",
                    "append-locked", "pk-locked", "append-iceberg", "rollback-iceberg", "append-rest",
                    "pk-rest", "append-sort", "append-cluster", "append-row-level", "append-row-level-dv")
EXHAUSTIVE_SCENARIOS = ("small",)
