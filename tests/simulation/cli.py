"""The command line of ``python -m tests.simulation``: explore interleavings until the time is up, in worker processes.

    python -m tests.simulation --seconds 600 --workers 2          # random seeds + exhaustive small scenarios
    python -m tests.simulation --seconds 99999 --interleavings 100000   # until 100,000 random interleavings
    python -m tests.simulation --seconds 60 --scenario append-race --seed 1000
    python -m tests.simulation --replay .soak/append-race-16-1234.json

Each failure is written to ``.soak/<scenario>-<seed>-<steps>.json`` (its decisions) and printed with the command
that replays it; the exit status is 1 if any invariant was broken. Progress is printed every ~30 s.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import multiprocessing as mp
import os
import sys
import time
from collections import Counter
from queue import Empty
from typing import Any

from tests.simulation import ledger as ledgers
from tests.simulation.explore import exhaustive, load_replay, replay, run_seed, save_failure
from tests.simulation.scenarios import EXHAUSTIVE_SCENARIOS, RANDOM_SCENARIOS, SCENARIOS, Result


def _summary(r: Result) -> dict[str, Any]:
    out: dict[str, Any] = {"scenario": r.scenario, "seed": r.seed, "ok": r.ok, "seconds": r.seconds,
                           "steps": len(r.record.decisions), "actors": r.actors}
    if not r.ok:
        out["violation"] = r.violation
        out["file"] = save_failure(r)
        out["tail"] = r.trace_tail()
    return out


RUN_TIMEOUT_SECONDS = 600
"""A run that takes longer is a harness hang (an actor blocked outside a scheduling point blocks the whole run):
the worker prints every stack and exits, and the soak reports that every worker died."""


def _worker(index: int, workers: int, deadline: float, scenarios: list[str], seed0: int,
            exhaustive_names: list[str], queue: Any, count: int = 0, target: int = 0, done: Any = None) -> None:
    logging.disable(logging.CRITICAL)  # expected warnings (dropped compactions...) would flood the output
    faulthandler.dump_traceback_later(RUN_TIMEOUT_SECONDS, exit=True)
    parent = os.getppid()

    def stopped() -> bool:
        """The soak was stopped (killed): nobody reads the results any more."""
        return os.getppid() != parent

    if index == 0:  # worker 0 starts with the bounded-exhaustive exploration of the small scenarios
        for name in exhaustive_names:
            for r in exhaustive(SCENARIOS[name], bound=1):
                _put(queue, _summary(r) | {"mode": "exhaustive"})
                if time.time() > deadline or stopped():
                    break
    k = 0
    while ((k < count) if count else time.time() < deadline) and not (target and done.value >= target):
        if stopped():
            break
        seed = seed0 + index + k * workers
        name = scenarios[k % len(scenarios)]
        _put(queue, _summary(run_seed(SCENARIOS[name], seed)) | {"mode": "random"})
        k += 1
    faulthandler.cancel_dump_traceback_later()
    queue.put(None)


def _put(queue: Any, item: dict[str, Any]) -> None:
    """Report a run, and give the next one :data:`RUN_TIMEOUT_SECONDS` again."""
    queue.put(item)
    faulthandler.dump_traceback_later(RUN_TIMEOUT_SECONDS, exit=True)


def _report(stats: Counter[str], per: dict[str, list[float]], actors: dict[str, int], failures: list[dict[str, Any]],
            elapsed: float) -> None:
    total = stats["runs"]
    print(f"[{elapsed:6.0f}s] interleavings {total} ({total / max(elapsed, 1e-9) * 60:.0f}/min), of 6+ actors "
          f"{stats['runs6']}, steps {stats['steps']}, failures {len(failures)}")
    for name in sorted(per):
        times = per[name]
        print(f"    {name:<16} actors {actors[name]}  runs {len(times):>6}  "
              f"mean {sum(times) / len(times) * 1000:6.0f} ms/interleaving")
    sys.stdout.flush()


def _record(ledger: ledgers.Ledger | None, run: ledgers.Run | None, started: float) -> None:
    """Save the run's progress so far (a soak that is stopped still counts what it explored)."""
    if ledger is not None and run is not None:
        run.seconds = round(time.time() - started, 1)
        ledgers.save(ledger)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.simulation", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=None, help="first seed (default: where the last soak on the same "
                   "code stopped, see tests/simulation/ledger.py; 0 with --scenario or --count)")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    p.add_argument("--scenario", choices=sorted(SCENARIOS), help="only this scenario (no exhaustive phase unless "
                   "it is a small one)")
    p.add_argument("--replay", help="a failure file written under .soak/")
    p.add_argument("--interleavings", type=int, default=0, help="stop once this many random interleavings (of "
                   "6-7 actors) have been explored, or at --seconds, whichever comes first")
    p.add_argument("--count", type=int, default=0, help="run exactly this many random seeds per worker (from "
                   "--seed, stepping by --workers) instead of until --seconds; no exhaustive phase")
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)  # expected warnings (dropped compactions...) would flood the output
    if args.replay:
        scenario, seed, decisions = load_replay(args.replay)
        r = replay(scenario, seed, decisions)
        print(f"{scenario.name} seed {seed}: {len(r.record.decisions)} decisions, {r.seconds:.2f} s")
        print(r.violation or "no violation")
        if not r.ok:
            print("trace tail:\n" + r.trace_tail(int(os.environ.get("SIM_TRACE_TAIL", "40"))))
        return 0 if r.ok else 1
    # only a full soak (every scenario, default seeds) adds to the ledger
    ledger = ledgers.load(ledgers.code_key()) if args.scenario is None and not args.count and args.seed is None \
        else None
    if args.seed is None:
        args.seed = ledger.next_seed() if ledger is not None else 0
    run = ledgers.start(ledger, args.seed) if ledger is not None else None
    if ledger is not None and run is not None:
        print(f"ledger {ledgers.LEDGER}: before this run, {ledger.before(run)}; seeds from {args.seed}")
    else:
        print("not recorded in the ledger (a scenario, a seed or a count was given)")
    scenarios = [args.scenario] if args.scenario else list(RANDOM_SCENARIOS)
    small = [n for n in EXHAUSTIVE_SCENARIOS if args.scenario in (None, n) and not args.count]
    started = time.time()
    deadline = started + args.seconds
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    done = ctx.Value("q", 0)  # random interleavings reported so far (workers stop at --interleavings)
    procs = [ctx.Process(target=_worker, args=(i, args.workers, deadline, scenarios, args.seed, small, queue,
                                               args.count, args.interleavings, done))
             for i in range(args.workers)]
    for proc in procs:
        proc.start()
    stats: Counter[str] = Counter()
    per: dict[str, list[float]] = {}
    actors: dict[str, int] = {}
    failures: list[dict[str, Any]] = []
    running, last = len(procs), time.time()
    while running:
        try:
            item = queue.get(timeout=5)
        except Empty:
            if not any(proc.is_alive() for proc in procs):
                print("every worker died (see above)")
                _record(ledger, run, started)
                return 2
            continue
        if item is None:
            running -= 1
            continue
        stats["runs"] += 1
        stats["runs6"] += item["actors"] >= 6
        if item["mode"] == "random":
            with done.get_lock():
                done.value += 1
        stats["steps"] += item["steps"]
        per.setdefault(f"{item['scenario']}/{item['mode']}", []).append(item["seconds"])
        actors[f"{item['scenario']}/{item['mode']}"] = item["actors"]
        if not item["ok"]:
            failures.append(item)
            print(f"FAILURE {item['scenario']} seed {item['seed']}: {item['violation'][:300]}\n"
                  f"    replay: python -m tests.simulation --replay {item['file']}")
        if run is not None:
            run.interleavings += item["mode"] == "random"
            run.exhaustive += item["mode"] == "exhaustive"
            if item["mode"] == "random":
                run.next_seed = max(run.next_seed, item["seed"] + 1)
            if not item["ok"]:
                run.failures.append(f"{item['scenario']} seed {item['seed']}: {item['file']}")
        if time.time() - last > 30:
            last = time.time()
            _report(stats, per, actors, failures, time.time() - started)
            _record(ledger, run, started)
    for proc in procs:
        proc.join()
    _report(stats, per, actors, failures, time.time() - started)
    _record(ledger, run, started)
    if ledger is not None:
        print(f"ledger: {ledger.summary()}")
    for f in failures:
        print(f"  {f['scenario']} seed {f['seed']}: python -m tests.simulation --replay {f['file']}")
    return 1 if failures else 0
