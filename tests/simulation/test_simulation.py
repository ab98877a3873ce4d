"""The deterministic simulation in CI: replay is exact, a budget of random interleavings of every scenario and every
interleaving of a small one (at most one preemption) keep the invariants, the defects of issue 35 stay fixed
(forced schedules: each states the race it forces, and replays exactly from its recorded decisions), and the catalog's
commit lock (``locked`` scenarios) excludes, and its checks fire when it does not."""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from table_engine.catalog.rest.table import RestSnapshotCommit
from table_engine.iceberg import IcebergCommitCallback, IcebergCommitter
from tests.simulation import actors as a
from tests.simulation.explore import exhaustive, replay, run_seed
from tests.simulation.forced import AfterOwnPublication, Script, ScriptedFaults, Seq, is_op, publishing
from tests.simulation.memo import DecodeMemo
from tests.simulation.scenarios import RANDOM_SCENARIOS, SCENARIOS, Result, Scenario, run_once
from tests.simulation.sim_metastore import SimMetastore

pytestmark = pytest.mark.timeout(600)  # an actor blocked outside a scheduling point would block the whole run

SEEDS_PER_SCENARIO = 8
"""Random interleavings of each scenario in CI (about 0.1-0.2 s each); ``make soak`` runs as many as asked."""


def _explain(r: Result) -> str:
    return (f"{r.scenario} seed {r.seed}: {r.violation}\nreplay: decisions {len(r.record.decisions)}\n"
            f"trace tail:\n{r.trace_tail()}")


def test_same_seed_same_trace() -> None:
    first = run_seed(SCENARIOS["append-maint"], 11)
    second = run_seed(SCENARIOS["append-maint"], 11)
    assert first.record.trace == second.record.trace
    assert first.record.decisions == second.record.decisions
    assert len(first.record.trace) > 500  # 7 actors really interleaved


_TRACE_OF = """
import hashlib, sys
from tests.simulation.explore import run_seed
from tests.simulation.scenarios import SCENARIOS
r = run_seed(SCENARIOS[sys.argv[1]], int(sys.argv[2]))
print(hashlib.sha256(repr((r.record.trace, r.record.decisions)).encode()).hexdigest())
"""


def test_same_seed_same_trace_with_the_lock() -> None:
    first = run_seed(SCENARIOS["append-locked"], 3)
    second = run_seed(SCENARIOS["append-locked"], 3)
    assert first.record.trace == second.record.trace
    assert first.record.decisions == second.record.decisions
    assert first.lock_waits == second.lock_waits > 0  # the lock was contended, the same way
    assert sum(op == "lock" for _, op, _ in first.record.trace) > 10


@pytest.mark.parametrize("name", ["append-race", "partition-expire", "append-locked"])
def test_a_seed_gives_the_same_trace_in_every_process(name: str) -> None:
    """A soak worker's failure replays in another process: nothing the engine does depends on the process's string
    hash seed (tag deletion once deleted files in a set's order)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, "-c", _TRACE_OF, name, "0"], env=env, cwd=root, capture_output=True,
                              text=True, timeout=300, check=True)
        digests.add(done.stdout.strip().splitlines()[-1])
    assert len(digests) == 1


def test_replay_reproduces_the_run() -> None:
    original = run_seed(SCENARIOS["append-faults"], 4)
    again = replay(SCENARIOS["append-faults"], 4, original.record.decisions)
    assert again.record.trace == original.record.trace
    assert again.violation == original.violation


@pytest.mark.parametrize("name", RANDOM_SCENARIOS)
def test_the_decode_memo_changes_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with the metadata decode memo (``memo.py``) is the run without it: same trace, outcome and acks."""
    memoized = run_seed(SCENARIOS[name], 5)
    monkeypatch.setattr(DecodeMemo, "active", lambda self: contextlib.nullcontext())
    plain = run_seed(SCENARIOS[name], 5)
    assert memoized.record.trace == plain.record.trace
    assert (memoized.violation, memoized.tolerated) == (plain.violation, plain.tolerated)
    assert memoized.acks == plain.acks


@pytest.mark.parametrize("name", RANDOM_SCENARIOS)
def test_random_interleavings(name: str) -> None:
    results = [run_seed(SCENARIOS[name], seed) for seed in range(SEEDS_PER_SCENARIO)]
    failures = [r for r in results if not r.ok]
    assert not failures, "\n".join([f"{len(failures)} of {SEEDS_PER_SCENARIO} seeds failed:",
                                     *(f"  seed {r.seed}: {(r.violation or '')[:300]}" for r in failures),
                                     _explain(failures[0])])
    if SCENARIOS[name].locked:  # else the seeds prove nothing about the lock
        assert sum(r.lock_waits for r in results) > 0, "no actor ever waited for the metastore's lock"
    if SCENARIOS[name].rest:  # else the seeds prove nothing about commits through the server
        ops = {op for r in results for _, op, _ in r.record.trace}
        assert "rest-commit" in ops, "no snapshot was committed through the REST server"
        assert {"FAULT-error", "FAULT-lost"} <= ops, f"the REST server injected no fault of one kind: {sorted(ops)}"


@pytest.mark.parametrize("scenario", ["append-rest", "pk-rest"])
def test_the_rest_checks_fire_when_a_lost_answer_is_misread(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that takes every lost commit answer for a success acknowledges rows that were never committed: the
    checks report it, so the passing seeds of the ``rest`` scenarios mean something."""
    monkeypatch.setattr(RestSnapshotCommit, "_read_back", lambda self, snapshot, error: True)
    found = [r for r in (run_seed(SCENARIOS[scenario], seed) for seed in range(SEEDS_PER_SCENARIO)) if not r.ok]
    assert found, "no seed reported the commits acknowledged but lost"


# ---- the catalog's commit lock (ADR 0044) ------------------------------------------------------------------------


def _two_writers(w: a.World) -> dict[str, a.Actor]:
    return {"a": a.writer(w, "a", 1, 1), "b": a.writer(w, "b", 2, 2)}


def test_a_commit_waits_for_the_lock_held_by_another() -> None:
    """A takes the lock and pauses right before its publication; B commits: it must wait (polling, a scheduling
    point each time) until A released the lock, then publish; both commits are in the table."""
    script = Script([("a", publishing), ("b", is_op("sleep")), ("a", None)])
    scenario = Scenario("lock-wait", _two_writers, locked=True)
    r = run_once(scenario, 1, script)
    assert script.completed == 3, "the script was not followed"
    assert r.ok, _explain(r)
    assert r.lock_waits > 0 and {ack.actor for ack in r.acks} == {"setup", "a", "b"}
    trace = r.record.trace
    a_unlocks = [i for i, (n, op, _) in enumerate(trace) if (n, op) == ("a", "unlock")]
    b_first = next(i for i, (n, op, p) in enumerate(trace) if n == "b" and publishing(op, p))
    assert a_unlocks and a_unlocks[0] < b_first, "B published before A released the lock"
    assert replay(scenario, 1, r.record.decisions).record.trace == trace


def _grant_always(self: SimMetastore, key: tuple[str, str], me: str) -> bool:
    self._round_trip("lock", key)
    return True


_real_lock = SimMetastore.lock


@contextlib.contextmanager
def _no_lock_for_actors(self: SimMetastore, db: str, table: str) -> Iterator[None]:
    if self.sched.current_actor() is None:  # the run's setup still takes it: the actors' commits are caught
        with _real_lock(self, db, table):
            yield
    else:
        yield


@pytest.mark.parametrize(("attribute", "broken", "finding"), [
    ("_try_acquire", _grant_always, r"w\d took the lock on db\.t while w\d held it"),
    ("lock", _no_lock_for_actors, r"snapshot-\d+ created by w\d, which does not hold the lock"),
], ids=["not-exclusive", "bypassed"])
def test_the_lock_checks_fire_when_the_lock_is_broken(attribute: str, broken: object, finding: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A lock that lets two actors in at once, and commits that publish without it, are reported: the locked
    scenarios' passing seeds mean something."""
    monkeypatch.setattr(SimMetastore, attribute, broken)
    found = [r for r in (run_seed(SCENARIOS["append-locked"], seed) for seed in range(SEEDS_PER_SCENARIO))
             if re.search(finding, r.violation or "")]
    assert found, f"no seed reported {finding!r}"


@pytest.mark.parametrize(("broken", "finding"), [
    (lambda self, snapshot_id: None, r"no Iceberg metadata for the latest snapshot \d+"),
    (lambda self, snapshot_id: IcebergCommitter(self.table).commit(max(snapshot_id - 1, 1)),
     r"no Iceberg metadata for the latest snapshot|Iceberg v\d+ lists \d+ data files"),
], ids=["callback-not-called", "callback-one-behind"])
def test_the_iceberg_checks_fire_when_the_callback_is_broken(broken: object, finding: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits whose callback writes no Iceberg metadata, or the previous snapshot's, are reported: the passing
    seeds of ``append-iceberg`` mean something."""
    monkeypatch.setattr(IcebergCommitCallback, "published", broken)
    found = [r for r in (run_seed(SCENARIOS["append-iceberg"], seed) for seed in range(SEEDS_PER_SCENARIO))
             if re.search(finding, r.violation or "")]
    assert found, f"no seed reported {finding!r}"


@pytest.mark.slow  # 1,003 interleavings, ~20 s: in make test, not in make test-fast
def test_every_interleaving_of_two_writers_and_an_expiry_with_one_preemption() -> None:
    runs = 0
    for r in exhaustive(SCENARIOS["small"], bound=1):
        runs += 1
        assert r.ok, _explain(r)
    assert runs > 100


# ---- regression seeds: issue 39 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [2842, 5608])
def test_rollback_iceberg_seeds_that_lost_the_iceberg_metadata(seed: int) -> None:
    """2842: the rollback wrote its target's Iceberg metadata after the fence let the next commit publish; 5608: a
    commit's callback, planned on a listing made before the rollback dropped the metadata, deleted the manifest list
    the rollback's fresh ``v<N>`` named (the callback now runs under a pin the rollback waits for)."""
    r = run_seed(SCENARIOS["rollback-iceberg"], seed)
    assert r.ok, _explain(r)


# ---- regression seeds: issue 35 ----------------------------------------------------------------------------------


def _aba(w: a.World) -> dict[str, a.Actor]:
    return {"a": a.writer(w, "a", 1, 1), "b": a.writer(w, "b", 2, 2), "expire": a.expirer(w, "expire", rounds=2)}


def test_defect1_stale_publication_after_expiry_keeps_the_commit() -> None:
    """Writer A reads latest k-1 and pauses right before publishing k; B commits k and k+1; the expiry (retain 1)
    deletes k-1 and k; A publishes. A's acknowledged commit must be in the table, and no id published twice."""
    script = Script([("a", publishing), ("b", None), ("expire", is_op("sleep"))], then=None)
    r = run_once(Scenario("defect1", _aba), 1, script)
    assert script.completed == 3, "the script was not followed"
    assert r.ok, _explain(r)
    assert replay(Scenario("defect1", _aba), 1, r.record.decisions).record.trace == r.record.trace


def _one_writer(w: a.World) -> dict[str, a.Actor]:
    return {"w": a.writer(w, "w", 1, 4)}


def test_defect2_failed_compaction_part_keeps_the_published_data() -> None:
    """An OSError while the writer's own compaction part commits, after its APPEND was published: the APPEND's data
    file must survive (the latest snapshot reads), and the write should report its data as committed."""
    faults = ScriptedFaults(AfterOwnPublication())

    def hook(w: a.World) -> None:
        w.sim.faults = faults

    r = run_once(Scenario("defect2", _one_writer), 2, Script([]), hook=hook)
    assert faults.injected, "no compaction part was published: the scenario does not reach the defect"
    assert r.ok, _explain(r)
    assert not r.tolerated, f"the write failed although its data was published: {r.tolerated}"


def _vanished(w: a.World) -> dict[str, a.Actor]:
    return {"pre": a.writer(w, "pre", 1, 1), "w": a.writer(w, "w", 2, 1),
            "compact": a.compactor(w, "compact", rounds=1, full=True), "expire": a.expirer(w, "expire", rounds=1)}


def _vanished_script(until: Seq) -> Script:
    return Script([("pre", None), ("w", until), ("compact", None), ("expire", None)])


@pytest.mark.parametrize("primary_key", [False, True])
def test_defect3_vanished_compaction_input_does_not_fail_the_write(primary_key: bool) -> None:
    """The writer planned a compaction from snapshot L; a dedicated compaction rewrites the same files and an expiry
    removes L and the compacted files; then the writer goes on. Its write must succeed, data committed."""
    # append: pause before the commit's pre-check reads L's manifests; primary key: before the in-write compaction
    # reads its input files
    until = Seq(is_op("open_output"), is_op("read_bytes", "/manifest/manifest-list")) if not primary_key \
        else Seq(is_op("open_input", "/bucket-"))
    script = _vanished_script(until)
    scenario = Scenario(f"defect3-{'pk' if primary_key else 'append'}", _vanished, primary_key=primary_key)
    r = run_once(scenario, 3, script)
    assert script.completed >= 2, "the script was not followed"
    assert r.ok, _explain(r)
    assert not r.tolerated, f"the write failed: {r.tolerated}"
    assert any(ack.actor == "w" for ack in r.acks), "the write was not acknowledged"


def test_the_ledger_adds_up_runs_on_the_same_code(tmp_path: pathlib.Path) -> None:
    from tests.simulation import ledger

    path = str(tmp_path / "ledger.json")
    first = ledger.load("code-a", path)
    run = ledger.start(first, first.next_seed())
    run.interleavings, run.next_seed = 40, 40
    ledger.save(first, path)
    other = ledger.load("code-b", path)
    ledger.start(other, 0).interleavings = 5
    ledger.save(other, path)
    again = ledger.load("code-a", path)
    assert (again.interleavings, again.next_seed()) == (40, 40)  # a second run goes on from seed 40
    run = ledger.start(again, again.next_seed())
    run.interleavings, run.next_seed = 60, 100
    ledger.save(again, path)
    assert ledger.load("code-a", path).interleavings == 100 and ledger.load("code-b", path).interleavings == 5
    files = ledger.source_closure()
    assert "table_engine/store/pins.py" in files and "tests/simulation/scheduler.py" in files
    assert not any(f.startswith(("provider/", "table_engine/spark/", "table_engine/ops/")) for f in files)
    assert ledger.code_key() == ledger.code_key()
