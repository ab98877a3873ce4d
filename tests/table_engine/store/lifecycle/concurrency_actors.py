"""The actors of the real-process lifecycle concurrency scenario, shared by the local test, the S3 test and the soak
runner (``python -m tests.soak_processes``).

One table, several processes at once: ``Scenario.writers`` writers committing with commit-time maintenance (append
table), or ``write-only`` writers plus a dedicated compactor (primary-key table, Paimon's multi-writer set-up); an
expirer with ``retain_min=1, time_retained=0`` in a loop; a reader that pins each snapshot it reads with a consumer.

Why it is race-free (issue 35, point 4; lost-commit-investigation.md, section 8):

* The reader pins *before* choosing. It records its consumer at a lower bound first (the ``LATEST`` hint, else the
  earliest snapshot, else the first id), reads ``latest_snapshot_id()`` after that, moves the consumer up to it and
  reads that snapshot. An expiry reads the latest snapshot id, then the consumers (``expire._expire_snapshots``, as
  Paimon's ``ExpireSnapshotsImpl``; the argument rests on that order): one that read the consumers before the pin
  read a latest that is at most the reader's (and keeps it, ``retain_min >= 1``); one that read them after sees a
  pin at or below the reader's snapshot. So every read of a pinned snapshot must succeed, and the reader records
  every failure instead of swallowing it. (With the engine's snapshot-id reuse, the latest can go backwards: that
  is recorded as a failure too, it is the bug, not a race of the test.)
* Progress is a condition waited for: every background actor sets its ``ready`` flag when its loop runs, and the
  writers wait for ``go``, set when all are ready; after the writers finish, the background actors keep going until
  the reader has made ``reads_after`` more reads (bounded), then stop between two operations.
* Evidence: every actor writes JSON lines to ``<log_dir>/<actor>.jsonl`` (each write with its row range and the
  snapshot id it returned, or its error; the compactor's snapshots; every read and every failure), and
  :func:`check_table` names the acknowledged commits that are missing, the snapshot ids claimed or published
  twice (the engine's INFO log of each actor is in ``<log_dir>/<actor>.log``), and the orphan files (with the ids
  in orphan data files).

Every process has a deadline (``Scenario.deadline``, wall clock) and stops by itself when its parent is gone, so
none outlives a killed test or soak runner.
"""

from __future__ import annotations

import io
import json
import logging
import multiprocessing as mp
import pathlib
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from table_engine import Catalog
from table_engine.errors import CommitConflictError, StorageError
from table_engine.format.snapshot import FIRST_SNAPSHOT_ID, latest_hint
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.table import Table
from tests.fault_proxy import Rule
from tests.processes import Actors, Flag
from tests.table_engine.store.lifecycle.lifecycle_support import disk_files, referenced_files

_T = TypeVar("_T")

TABLE = "db.t"
READER = "reader"
SCHEMA = pa.schema([("id", pa.int64()), ("writer", pa.int32())])
#: commit-time maintenance of the append writers keeps 2 snapshots and retries long: contention is the point
OPTIONS = {"snapshot.num-retained.min": "2", "snapshot.time-retained": "0 s", "commit.max-retries": "200",
           "manifest.merge-min-count": "4"}
PK_OPTIONS = {"bucket": "2", "num-sorted-run.compaction-trigger": "3", "write-only": "true"}
#: keys of table metadata on S3 (what the S3 variant injects faults into)
METADATA_KEYS = r"/(snapshot|manifest|consumer|schema|index)/"


class Counter(Protocol):
    """A shared ``ctypes`` integer (``ctx.Value("i", 0, lock=False)``): one process writes it, others read it."""

    value: int


@dataclass(frozen=True)
class Scenario:
    """One run of the scenario (picklable: every actor process gets it). ``options``: catalog options (S3 endpoint
    and credentials, or nothing for a local warehouse). ``storage_faults``: injected storage faults may make an
    operation fail (then a write is not acknowledged); without them every failure is a finding."""

    warehouse: str
    log_dir: str
    primary_key: bool
    options: dict[str, str] = field(default_factory=dict)
    writers: int = 2
    commits: int = 25
    rows: int = 10
    reads_after: int = 3
    storage_faults: bool = False
    #: wall-clock time (``time.time()``) after which every actor gives up: no process outlives its run
    deadline: float = 0.0

    def table(self) -> Table:
        return Catalog(self.warehouse, self.options).get_table(TABLE)

    def total_rows(self) -> int:
        return self.writers * self.commits * self.rows

    def first_row(self, writer: int, commit: int) -> int:
        return (writer * self.commits + commit) * self.rows


def create_table(scn: Scenario) -> Table:
    opts = dict(OPTIONS)
    if scn.primary_key:
        opts.update(PK_OPTIONS)
    return Catalog(scn.warehouse, scn.options).create_table(TABLE, SCHEMA, primary_keys=["id"] if scn.primary_key
                                                            else [], options=opts)


def metadata_fault_rules(fraction: float) -> list[Rule]:
    """A seeded ``fraction`` of the metadata PUTs, DELETEs and GETs answered 503, and as many applied by the store
    with their response dropped (the client sees a broken connection and retries)."""
    return [Rule(action, method=method, pattern=METADATA_KEYS, status=503, fraction=fraction)
            for action in ("status", "drop") for method in ("PUT", "DELETE", "GET")]


# ------------------------------------------------------------------------------------------------------- actors


class _Log:
    """JSON lines, flushed per line: a killed actor leaves everything it acknowledged on record."""

    def __init__(self, scn: Scenario, name: str) -> None:
        self._f = open(pathlib.Path(scn.log_dir) / f"{name}.jsonl", "a", encoding="utf-8")  # noqa: SIM115

    def write(self, **record: Any) -> None:
        record["t"] = round(time.time(), 4)
        self._f.write(json.dumps(record) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def _error(e: BaseException) -> dict[str, str]:
    kind = "conflict" if isinstance(e, CommitConflictError) else "storage" if isinstance(e, StorageError) else \
        "unexpected"
    return {"error": f"{type(e).__name__}: {e}"[:2000], "kind": kind}


def _engine_log(scn: Scenario, name: str) -> None:
    """The engine's INFO log of this actor to ``<log_dir>/<name>.log`` (which snapshot each commit published, the
    compactions it dropped...): evidence next to the JSON lines, and no noise on the terminal of a soak run."""
    logging.basicConfig(filename=str(pathlib.Path(scn.log_dir) / f"{name}.log"), level=logging.INFO, force=True,
                        format="%(asctime)s %(process)d %(name)s %(levelname)s %(message)s")


def _exists(t: Table, path: str) -> bool | str:
    """Whether ``path`` exists, for the evidence of a failed read (the check itself may fail under faults)."""
    try:
        return t.file_io.exists(path)
    except Exception as e:
        return f"unknown ({type(e).__name__})"


class _Lease:
    """Whether an actor may go on: before the scenario's deadline, and while the process that started it lives
    (watched through multiprocessing's parent sentinel: the parent may die before this process has even imported
    its modules, so comparing ``os.getppid()`` later would miss it)."""

    def __init__(self, scn: Scenario) -> None:
        self._deadline = scn.deadline
        self._parent = mp.parent_process()

    def ok(self) -> bool:
        return time.time() < self._deadline and (self._parent is None or self._parent.is_alive())


def writer(scn: Scenario, w: int, go: Flag) -> None:
    """``commits`` writes of ``rows`` new ids each (the ranges of all writers are disjoint), logging every write:
    its row range and the snapshot id it returned, or its error (a write that raised is not acknowledged)."""
    _engine_log(scn, f"writer-{w}")
    t = scn.table()
    t.commit_maintenance = True  # a no-op with write-only (the primary-key table): its maintenance is the others'
    log = _Log(scn, f"writer-{w}")
    lease = _Lease(scn)
    while not go.is_set():
        if not lease.ok():
            raise TimeoutError("the background actors never became ready")
        time.sleep(0.002)
    for c in range(scn.commits):
        if not lease.ok():
            raise TimeoutError(f"writer {w} passed the scenario's deadline")
        first = scn.first_row(w, c)
        data = pa.table({"id": pa.array(range(first, first + scn.rows), pa.int64()),
                         "writer": pa.array([w] * scn.rows, pa.int32())}, schema=SCHEMA)
        start = time.monotonic()
        try:
            sid = t.write(data)
        except Exception as e:  # recorded: the checks decide whether it is allowed
            log.write(op="write", writer=w, commit=c, first=first, end=first + scn.rows, acked=False,
                      seconds=round(time.monotonic() - start, 3), **_error(e))
        else:
            log.write(op="write", writer=w, commit=c, first=first, end=first + scn.rows, acked=True, sid=sid,
                      seconds=round(time.monotonic() - start, 3))
    log.close()


def compactor(scn: Scenario, ready: Flag, stop: Flag) -> None:
    """Dedicated compaction in a loop (primary-key table); logs its snapshots and every error."""
    _engine_log(scn, "compactor")
    t = scn.table()
    log = _Log(scn, "compactor")
    lease = _Lease(scn)
    runs = conflicts = 0
    ready.set()
    while not stop.is_set() and lease.ok():
        runs += 1
        try:
            sid = t.maintenance.compact()
        except CommitConflictError:  # a concurrent writer's commit won: try again
            conflicts += 1
        except Exception as e:
            log.write(op="compact", **_error(e))
        else:
            if sid is not None:
                log.write(op="compact", sid=sid)
        time.sleep(0.01)
    log.write(op="summary", runs=runs, conflicts=conflicts)
    log.close()
    if not stop.is_set():
        raise TimeoutError("the compactor was never asked to stop")


def expirer(scn: Scenario, ready: Flag, stop: Flag) -> None:
    """Snapshot expiry keeping only the latest snapshot (and what consumers pin), in a loop; logs every error."""
    _engine_log(scn, "expirer")
    t = scn.table()
    log = _Log(scn, "expirer")
    lease = _Lease(scn)
    runs = expired = 0
    ready.set()
    while not stop.is_set() and lease.ok():
        runs += 1
        try:
            expired += len(t.expire_snapshots(retain_min=1, time_retained=0).expired_snapshot_ids)
        except Exception as e:
            log.write(op="expire", **_error(e))
        time.sleep(0.005)
    log.write(op="summary", runs=runs, expired=expired)
    log.close()
    if not stop.is_set():
        raise TimeoutError("the expirer was never asked to stop")


def reader(scn: Scenario, ready: Flag, stop: Flag, attempts: Counter) -> None:
    """Pin, then choose, then read (see the module docstring); every failure is logged, none is swallowed.

    A read fails when it raises, when the latest snapshot id is below the pin (the latest went backwards), or when
    its content is inconsistent: an append snapshot whose row count differs from its ``totalRecordCount``, an id
    read twice, or a newer snapshot lacking ids an older one had (nothing in this workload deletes a row).
    ``attempts`` counts reads, failed or not (the reader is its only writer)."""
    _engine_log(scn, "reader")
    t = scn.table()
    consumers = ConsumerManager.of(t.store)
    log = _Log(scn, "reader")
    lease = _Lease(scn)
    pin: int | None = None
    last_sid, last_ids = 0, frozenset[int]()
    ready.set()
    try:
        while not stop.is_set() and lease.ok():
            failure: dict[str, Any] | None = None
            try:
                if pin is None:  # the lower bound, recorded before the snapshot to read is chosen
                    low = latest_hint(t.file_io, t.path) or t.earliest_snapshot_id() or FIRST_SNAPSHOT_ID
                    consumers.update(READER, low)
                    pin = low
                sid = t.latest_snapshot_id()
                if sid is None:  # no snapshot yet (the pin at the first id protects whatever comes)
                    time.sleep(0.002)
                    continue
                if sid < pin:
                    failure = {"error": f"the latest snapshot {sid} is below the pinned {pin} (latest went "
                                        "backwards)"}
                consumers.update(READER, sid)  # from here, expiries keep sid; those before kept it too
                pin = sid
            except Exception as e:  # not pinned: nothing is read; the next round pins again
                log.write(op="read-failure", stage="pin", **_error(e))
                attempts.value += 1
                continue
            start = time.monotonic()
            try:
                snap = t.snapshot(sid)
                data = t.read(snapshot_id=sid)
            except Exception as e:
                failure = {**(failure or {}), "read_error": f"{type(e).__name__}: {e}"[:2000],
                           "snapshot_file_exists": _exists(t, f"{t.path}/snapshot/snapshot-{sid}")}
            else:
                ids_list = data.column("id").to_pylist()
                ids = frozenset(ids_list)
                problems = []
                if not scn.primary_key and data.num_rows != snap.total_record_count:
                    problems.append(f"{data.num_rows} rows, totalRecordCount {snap.total_record_count}")
                if len(ids) != len(ids_list):
                    problems.append(f"{len(ids_list) - len(ids)} ids read twice")
                if sid > last_sid and not ids >= last_ids:
                    gone = sorted(last_ids - ids)
                    problems.append(f"{len(gone)} ids of snapshot {last_sid} missing, e.g. {gone[:5]}")
                if problems:
                    failure = {**(failure or {}), "content": problems}
                log.write(op="read", sid=sid, rows=data.num_rows, records=snap.total_record_count,
                          commit_kind=str(snap.commit_kind), seconds=round(time.monotonic() - start, 3))
                if sid > last_sid:
                    last_sid, last_ids = sid, ids
            if failure is not None:
                log.write(op="read-failure", sid=sid, **failure)
            attempts.value += 1
    finally:
        try:
            consumers.delete(READER)
        except Exception as e:  # the checks reset it anyway; a fault here is no failed read
            log.write(op="unpin", **_error(e))
        log.close()
    if not stop.is_set():
        raise TimeoutError("the reader was never asked to stop")


# -------------------------------------------------------------------------------------------- running, checking


@dataclass
class Timeouts:
    """Bounds of each wait (seconds); a run that exceeds one fails instead of hanging."""

    ready: float = 120
    writers: float = 300
    settle: float = 60
    stop: float = 60

    def total(self) -> float:
        return self.ready + self.writers + self.settle + self.stop + 30


def run_actors(scn: Scenario, timeouts: Timeouts) -> None:
    """Run the scenario's processes (spawn context) to the end; kill them all if anything fails."""
    ctx = mp.get_context("spawn")
    stop, go = Flag(ctx), Flag(ctx)  # lock-free: a killed process cannot wedge the others (tests.processes.Flag)
    attempts = ctx.Value("i", 0, lock=False)  # the reader is its only writer
    ready = [Flag(ctx) for _ in range(3 if scn.primary_key else 2)]
    writers = [ctx.Process(target=writer, args=(scn, w, go), name=f"writer-{w}") for w in range(scn.writers)]
    background = [ctx.Process(target=expirer, args=(scn, ready[0], stop), name="expirer"),
                  ctx.Process(target=reader, args=(scn, ready[1], stop, attempts), name="reader")]
    if scn.primary_key:
        background.append(ctx.Process(target=compactor, args=(scn, ready[2], stop), name="compactor"))
    with Actors(writers, background, stop, ready=ready, go=go) as actors:
        actors.start(timeouts.ready)
        actors.join_writers(timeouts.writers)
        after = attempts.value + scn.reads_after  # reads started after the last write returned
        actors.wait_until(lambda: attempts.value >= after, timeouts.settle,
                          f"{scn.reads_after} reads after the last write")
        actors.stop(timeouts.stop)


def published_twice(scn: Scenario) -> dict[int, list[str]]:
    """Snapshot ids that the engine logged as committed more than once (``committed snapshot N`` in the actors'
    engine logs), with who committed them: an id published twice is the snapshot-id reuse of issue 35 even when
    the commit it lost was not the one a ``write()`` returned (a writer's compaction, the dedicated compactor)."""
    seen: dict[int, list[str]] = defaultdict(list)
    for path in sorted(pathlib.Path(scn.log_dir).glob("*.log")):
        for m in re.finditer(r" INFO committed snapshot (\d+)\b", path.read_text(errors="replace")):
            seen[int(m.group(1))].append(path.stem)
    return {sid: who for sid, who in sorted(seen.items()) if len(who) > 1}


def read_logs(scn: Scenario) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(pathlib.Path(scn.log_dir).glob("*.jsonl")):
        out[path.stem] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


@dataclass
class Outcome:
    """What a run left: the acknowledged commits and which of them are lost, the reads and which failed, the
    maintenance errors, the orphan and missing files; :meth:`problems` says what breaks the guarantees."""

    scn: Scenario
    acked: list[dict[str, Any]]
    raised: list[dict[str, Any]]
    lost: list[dict[str, Any]]
    unexpected_ids: list[int]
    duplicate_ids: int
    reads: int
    failed_reads: list[dict[str, Any]]
    maintenance_errors: list[dict[str, Any]]
    sids_claimed_twice: dict[int, list[str]]
    sids_published_twice: dict[int, list[str]]
    orphans: list[str]
    orphan_ids: dict[str, str]
    missing_files: list[str]
    snapshots_after_expiry: int
    rows_changed_by_expiry: bool
    check_errors: list[str]
    #: whether the table could be read at the end (else ``lost`` is unknown, not empty)
    readable: bool = True

    def problems(self) -> list[str]:
        out = [f"LOST acknowledged commit: writer {c['writer']} rows [{c['first']}, {c['end']}) snapshot {c['sid']}"
               f" ({c['missing']} of its rows missing)" for c in self.lost]
        if self.unexpected_ids:
            out.append(f"{len(self.unexpected_ids)} ids were never written, e.g. {self.unexpected_ids[:5]}")
        if self.duplicate_ids:
            out.append(f"{self.duplicate_ids} ids are there twice")
        out += _first([f"failed read: {json.dumps(f)}" for f in self.failed_reads], "failed reads")
        if not self.scn.storage_faults:
            out += _first([f"write raised: writer {r['writer']} rows [{r['first']}, {r['end']}): {r['error']}"
                           for r in self.raised], "writes raised")
        out += [f"{e['actor']} error: {e['error']}" for e in self.maintenance_errors
                if e["kind"] == "unexpected" or (e["kind"] == "storage" and not self.scn.storage_faults)]
        out += [f"snapshot {sid} claimed by {claims}" for sid, claims in self.sids_claimed_twice.items()]
        out += [f"snapshot {sid} published twice (engine logs of {who})"
                for sid, who in self.sids_published_twice.items()]
        if self.orphans:
            ids = "; ".join(f"{p.rsplit('/', 1)[-1]}: ids {r}" for p, r in self.orphan_ids.items())
            out.append(f"{len(self.orphans)} orphan files, e.g. {self.orphans[:5]}" + (f" ({ids})" if ids else ""))
        elif self.orphan_ids:
            out.append("data files holding rows of lost commits: "
                       + "; ".join(f"{p}: ids {r}" for p, r in self.orphan_ids.items()))
        if self.missing_files:
            out.append(f"{len(self.missing_files)} referenced files missing, e.g. {self.missing_files[:5]}")
        if self.snapshots_after_expiry != 1:
            out.append(f"a full expiry left {self.snapshots_after_expiry} snapshots")
        if self.rows_changed_by_expiry:
            out.append("the full expiry changed the rows")
        if self.reads == 0:
            out.append("the reader never read")
        out += self.check_errors
        return out

    def counts(self) -> dict[str, int]:
        return {"acked": len(self.acked), "raised": len(self.raised), "lost": len(self.lost), "reads": self.reads,
                "failed_reads": len(self.failed_reads), "orphans": len(self.orphans),
                "reused_ids": len(self.sids_published_twice)}


def _first(lines: list[str], what: str, n: int = 5) -> list[str]:
    """The first ``n`` lines, and how many more (all of them are in the actor logs)."""
    return lines[:n] + ([f"... {len(lines) - n} more {what} (actor logs)"] if len(lines) > n else [])


def _id_ranges(ids: list[int]) -> str:
    ids = sorted(ids)
    out, start = [], 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[i - 1] + 1:
            out.append(f"[{ids[start]}, {ids[i - 1] + 1})")
            start = i
    return " ".join(out)


def _file_ids(t: Table, path: str) -> list[int] | None:
    """The ids in a data file (None if it is not a readable Parquet file with an ``id`` column)."""
    if not path.endswith(".parquet"):
        return None
    try:
        ids: list[int] = pq.read_table(io.BytesIO(t.file_io.read_bytes(path)), columns=["id"]).column("id").to_pylist()
    except Exception:  # evidence only
        return None
    return ids


def _orphan_ids(t: Table, orphans: list[str]) -> dict[str, str]:
    """The ids in orphan data files: a lost commit's rows are typically there."""
    out = {}
    for path in orphans:
        ids = _file_ids(t, path)
        if ids is not None:
            out[path] = _id_ranges(ids)
    return out


def _files_with(t: Table, wanted: set[int]) -> dict[str, str]:
    """The data files on disk holding any of ``wanted`` (when the table is too broken to tell orphans apart)."""
    out: dict[str, str] = {}
    try:
        paths = sorted(disk_files(t))
    except Exception:
        return out
    for path in paths:
        ids = _file_ids(t, path)
        if ids is not None and wanted.intersection(ids):
            out[path] = _id_ranges(ids)
    return out


def check_table(scn: Scenario) -> Outcome:
    """Check the table after a run (faults off): every acknowledged commit's rows are there, no others but those of
    writes that raised (each may or may not have been published), no id twice; the reader read and no read failed;
    no maintenance error but conflicts (and storage errors under injected faults); a full expiry leaves one
    snapshot with the same rows; no snapshot id is claimed by two commits or published twice; no orphan or missing
    file."""
    logs = read_logs(scn)
    writes = [r for name, recs in logs.items() if name.startswith("writer-") for r in recs if r["op"] == "write"]
    acked = [r for r in writes if r["acked"]]
    raised = [r for r in writes if not r["acked"]]
    reader_log = logs.get("reader", [])
    reads = sum(1 for r in reader_log if r["op"] == "read")
    failed = [r for r in reader_log if r["op"] == "read-failure"]
    maintenance = [{"actor": name, **r} for name in ("compactor", "expirer") for r in logs.get(name, [])
                   if "error" in r]
    claims: dict[int, list[str]] = defaultdict(list)
    for r in acked:
        if r["sid"] is not None:
            claims[r["sid"]].append(f"writer {r['writer']} rows [{r['first']}, {r['end']})")
    for r in logs.get("compactor", []):
        if r.get("sid") is not None:
            claims[r["sid"]].append("compactor")
    twice = {sid: c for sid, c in sorted(claims.items()) if len(c) > 1}

    t = scn.table()
    check_errors: list[str] = []
    before = _attempt(check_errors, "reading the table", lambda: t.read().column("id").to_pylist())
    # the reader deletes its consumer when it stops; a killed reader would not
    _attempt(check_errors, "the full expiry", lambda: (t.maintenance.reset_consumer(READER), t.expire_snapshots(
        retain_min=1, time_retained=0, max_deletes=10_000)))
    snapshots = _attempt(check_errors, "listing the snapshots", lambda: len(t.snapshots()))
    after = _attempt(check_errors, "reading the table after the full expiry",
                     lambda: t.read().column("id").to_pylist())
    final = after if after is not None else before
    present = set(final or [])
    lost = []
    if final is not None:
        for r in acked:
            missing = sum(1 for i in range(r["first"], r["end"]) if i not in present)
            if missing:
                lost.append({**r, "missing": missing})
    allowed = {i for r in writes for i in range(r["first"], r["end"])}
    orphans: list[str] = []
    missing_files: list[str] = []
    orphan_ids: dict[str, str] = {}
    try:
        disk, ref = disk_files(t), referenced_files(t)
        orphans, missing_files = sorted(disk - ref), sorted(ref - disk)
        orphan_ids = _orphan_ids(t, orphans)
    except Exception as e:  # a broken table: which data files hold the rows of acknowledged commits missing?
        check_errors.append(f"the referenced files could not be listed: {type(e).__name__}: {e}")
        orphan_ids = _files_with(t, {i for r in lost for i in range(r["first"], r["end"])})
    return Outcome(scn=scn, acked=acked, raised=raised, lost=lost, unexpected_ids=sorted(present - allowed),
                   duplicate_ids=len(final or []) - len(present), reads=reads, failed_reads=failed,
                   maintenance_errors=maintenance, sids_claimed_twice=twice,
                   sids_published_twice=published_twice(scn), orphans=orphans, orphan_ids=orphan_ids,
                   missing_files=missing_files, snapshots_after_expiry=-1 if snapshots is None else snapshots,
                   rows_changed_by_expiry=before is not None and after is not None and sorted(before) != sorted(after),
                   check_errors=check_errors, readable=final is not None)


def _attempt(errors: list[str], what: str, fn: Callable[[], _T]) -> _T | None:
    """``fn()``, or None with the error recorded: one broken step of the checks must not hide the others' evidence
    (a table whose latest snapshot references a deleted file is exactly what the checks are for)."""
    try:
        return fn()
    except Exception as e:
        errors.append(f"{what} failed: {type(e).__name__}: {e}"[:2000])
        return None


def report(outcome: Outcome) -> str:
    """The problems, one per line, for an assertion message."""
    return "\n".join(["", *outcome.problems(), f"actor logs: {outcome.scn.log_dir}"])
