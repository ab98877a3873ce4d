"""Real-process soak of the lifecycle concurrency scenario: the scenario of
``tests/table_engine/store/lifecycle/test_lifecycle_concurrency.py`` (writers, dedicated compaction, an expirer
keeping one snapshot, a pinned reader, each a process) run many times, each in a fresh warehouse, optionally under
CPU load: the rare interleavings that lose a commit need many runs and a loaded scheduler to show up (issue 35).

    python -m tests.soak_processes --loops 200 --cpu-load 2
    python -m tests.soak_processes --loops 20 --store s3 --table pk --out /tmp/soak

``--store s3`` starts its own moto server on 127.0.0.1 (:mod:`tests.s3_server`) and, per loop, a fault proxy
injecting a seeded fraction of 503s and dropped responses into metadata requests. ``--cpu-load K`` runs K niced
busy-loop processes beside the loops. One line per loop (loop, table kind, seconds, acknowledged commits, writes
that raised, lost commits, reads, failed reads, orphan files, snapshot ids published twice), then a summary; each
loop's actor logs and problems stay under ``--out`` (warehouses of clean local loops are removed). Exit code 1 if
any loop lost an acknowledged commit, had a failed read of a pinned snapshot, left orphans or broke any other check
of the scenario (every problem is listed).

Every process started here is bounded: the actors by the scenario's deadline (and they stop when this process is
gone), the busy loops by ``--max-seconds`` (and they end with this process too); the moto server and the proxy are
stopped on exit, SIGTERM included (a SIGKILL leaves the moto server: it has no parent watch).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from types import FrameType

from tests.fault_proxy import FaultProxy
from tests.s3_server import S3Server
from tests.table_engine.store.lifecycle.concurrency_actors import (
    Outcome,
    Scenario,
    Timeouts,
    check_table,
    create_table,
    metadata_fault_rules,
    run_actors,
)

#: a busy loop that lowers its own priority and ends by itself after argv[2] seconds, or when its parent is gone
_BUSY = "import os, sys, time\nos.nice(int(sys.argv[1]))\nparent = os.getppid()\n" \
        "end = time.monotonic() + float(sys.argv[2])\nwhile time.monotonic() < end and os.getppid() == parent:\n" \
        "    pass\n"


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.soak_processes", description=__doc__.split("\n\n")[0])
    p.add_argument("--loops", type=int, default=10, help="runs of the scenario (default 10)")
    p.add_argument("--store", choices=["local", "s3"], default="local")
    p.add_argument("--cpu-load", type=int, default=0, metavar="K", help="niced busy-loop processes beside the runs")
    p.add_argument("--cpu-nice", type=int, default=10, help="nice increment of the busy loops (default 10)")
    p.add_argument("--table", choices=["append", "pk", "both"], default="both",
                   help="table kind; both alternates append and primary-key loops (default)")
    p.add_argument("--out", help="directory for the loops' logs (default: a new temporary directory)")
    p.add_argument("--writers", type=int, default=2)
    p.add_argument("--commits", type=int, help="writes per writer (default 25 local, 8 on S3)")
    p.add_argument("--fault-fraction", type=float, default=0.02,
                   help="S3: fraction of metadata requests answered 503, and as many dropped (default 0.02)")
    p.add_argument("--seed", type=int, default=0, help="S3: seed of loop i's fault proxy is seed + i")
    p.add_argument("--max-seconds", type=float,
                   help="stop starting loops after this long (default 600 + 120 per loop); bounds the busy loops")
    p.add_argument("--keep", action="store_true", help="keep the warehouses of clean loops too")
    args = p.parse_args(argv)
    if args.loops < 1 or args.cpu_load < 0 or args.writers < 1:
        p.error("--loops and --writers must be positive, --cpu-load not negative")
    return args


@contextmanager
def _cpu_load(k: int, nice: int, seconds: float) -> Iterator[None]:
    """K busy loops, each ending by itself after ``seconds``, killed when the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", _BUSY, str(nice), str(seconds)]) for _ in range(k)]
    try:
        yield
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        for proc in procs:
            proc.wait(10)


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: actors, busy loops, proxy and moto are stopped by their finally blocks


def _line(i: int, kind: str, seconds: float, outcome: Outcome | None, problems: list[str], faults: int | None) -> str:
    if outcome is None:
        return f"loop {i:4d} {kind:6s} {seconds:6.1f} s  ERROR (the table could not be checked)"
    c = outcome.counts()
    flag = "PROBLEMS" if problems else "ok"
    lost = c["lost"] if outcome.readable else "??"  # an unreadable table: which commits are lost is unknown
    return (f"loop {i:4d} {kind:6s} {seconds:6.1f} s  acked {c['acked']:3d}  raised {c['raised']:2d}  "
            f"lost {lost:>2}  reads {c['reads']:4d}  failed reads {c['failed_reads']:2d}  "
            f"orphans {c['orphans']:2d}  reused ids {c['reused_ids']:2d}  "
            + ("" if faults is None else f"faults {faults:3d}  ") + flag)


def _one_loop(i: int, kind: str, args: argparse.Namespace, out: pathlib.Path, s3: S3Server | None,
              bucket: str | None, timeouts: Timeouts) -> tuple[Outcome | None, list[str], int | None]:
    """Run loop ``i`` and check it: the outcome (None if the table could not be checked), its problems, and the
    number of faults the proxy injected (None on a local disk)."""
    loop_dir = out / f"loop-{i:04d}-{kind}"
    (loop_dir / "actors").mkdir(parents=True)
    commits = args.commits or (8 if s3 else 25)
    scn = Scenario(warehouse=str(loop_dir / "warehouse"), log_dir=str(loop_dir / "actors"),
                   primary_key=kind == "pk", writers=args.writers, commits=commits,
                   deadline=time.time() + timeouts.total())
    problems: list[str] = []
    outcome: Outcome | None = None
    faults: int | None = None
    with ExitStack() as stack:
        proxy: FaultProxy | None = None
        if s3 is not None:
            proxy = stack.enter_context(FaultProxy(s3.endpoint, seed=args.seed + i))
            scn = replace(scn, warehouse=f"s3://{bucket}/{uuid.uuid4().hex}/warehouse", storage_faults=True,
                          options=s3.options(endpoint=proxy.endpoint))
        create_table(scn)
        if proxy is not None:
            for rule in metadata_fault_rules(args.fault_fraction):
                proxy.add(rule)
        try:
            run_actors(scn, timeouts)
        except Exception as e:  # an actor died or a wait timed out (AssertionError): still check the table
            problems.append(f"run failed: {type(e).__name__}: {e}")
        if proxy is not None:
            proxy.clear_rules()
            faults = proxy.count(fault="status") + proxy.count(fault="drop")
        try:
            outcome = check_table(scn)
            problems += outcome.problems()
        except Exception as e:
            problems.append(f"check failed: {type(e).__name__}: {e}")
    (loop_dir / "problems.txt").write_text("".join(f"{p}\n" for p in problems))
    if not problems and not args.keep and s3 is None:
        shutil.rmtree(loop_dir / "warehouse", ignore_errors=True)
    return outcome, problems, faults


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="soak-processes-"))
    out.mkdir(parents=True, exist_ok=True)
    max_seconds = args.max_seconds or 600 + 120 * args.loops
    started = time.monotonic()
    timeouts = Timeouts(ready=120, writers=300, settle=60, stop=60)
    kinds = {"append": ["append"], "pk": ["pk"], "both": ["append", "pk"]}[args.table]
    signal.signal(signal.SIGTERM, _sigterm)
    print(f"soak: {args.loops} loops, store {args.store}, table {args.table}, cpu load {args.cpu_load}, "
          f"logs in {out}", flush=True)
    totals = {"loops": 0, "acked": 0, "raised": 0, "lost": 0, "reads": 0, "failed_reads": 0, "orphans": 0,
              "reused_ids": 0}
    bad: list[int] = []
    with ExitStack() as stack:
        s3 = bucket = None
        if args.store == "s3":
            s3 = S3Server().start()
            stack.callback(s3.stop)
            bucket = s3.new_bucket()
        stack.enter_context(_cpu_load(args.cpu_load, args.cpu_nice, max_seconds))
        with open(out / "loops.jsonl", "a", encoding="utf-8") as summary:
            for i in range(args.loops):
                if time.monotonic() - started > max_seconds:
                    print(f"stopping: --max-seconds {max_seconds:.0f} reached after {i} loops", flush=True)
                    bad.append(-1)
                    break
                kind = kinds[i % len(kinds)]
                t0 = time.monotonic()
                outcome, problems, faults = _one_loop(i, kind, args, out, s3, bucket, timeouts)
                seconds = time.monotonic() - t0
                print(_line(i, kind, seconds, outcome, problems, faults), flush=True)
                for p in problems:
                    print(f"    {p}", flush=True)
                totals["loops"] += 1
                if outcome is not None:
                    for k, v in outcome.counts().items():
                        totals[k] += v
                if problems:
                    bad.append(i)
                summary.write(json.dumps({"loop": i, "kind": kind, "seconds": round(seconds, 2), "faults": faults,
                                          **(outcome.counts() if outcome else {}), "problems": problems}) + "\n")
                summary.flush()
    elapsed = time.monotonic() - started
    print(f"summary: {totals['loops']} loops in {elapsed:.0f} s, {totals['acked']} acknowledged commits "
          f"({totals['raised']} writes raised), {totals['lost']} lost, {totals['reads']} reads, "
          f"{totals['failed_reads']} failed reads, {totals['orphans']} orphan files, "
          f"{totals['reused_ids']} snapshot ids published twice; "
          f"{len([b for b in bad if b >= 0])} loops with problems {[b for b in bad if b >= 0]}; logs in {out}",
          flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
