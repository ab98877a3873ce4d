"""Scale benchmark (issue 14): growth curves of commit, planning, memory and expiry, with PASS/FAIL per goal.

1. History: small upserts (10 rows, keys from 10,000) into a primary-key table with default options, one
   ``Table.new_write`` + ``Table.commit`` (fresh commit user, as ``Table.write``) per step, until the table has
   ``--snapshots`` snapshots (default 10,000). Each commit is timed and its file reads counted (a counting FileIO
   under the catalog). At each checkpoint N (10, 100, 1000, 3000, 10000) the median and mean over the commits made
   with N..N+window-1 snapshots present (``--window``, default 50: the reads per commit are a sawtooth, high in the
   commits that carry a compaction, low in the others). Goals: median commit time at the last checkpoint <= 1.2x
   the one at 10; mean metadata files read per commit at every checkpoint <= 1.25x the one at 10.
2. Planning: tables of 1,000 partitions x 4 buckets with 10k, 30k and 100k data files (``build_many_files_table``:
   from ``benchmarks/scale_tables.py``); median of 3
   full plans and one-partition plans. Goals: one-partition plan <= 5% of the full plan (100k files); full plan
   time grows linearly in files (log-log slope <= 1.2).
3. Memory: a primary-key table (``bucket`` = 1, default options) of 1 M, 3 M, 10 M rows, each operation in a fresh
   process whose peak RSS (its VmHWM; else ru_maxrss from wait4) is taken: the write (1 M-row batches into one
   writer, one commit), the read as batches (``to_batches``), a full compaction (after 10% updates written
   ``write-only``). Goals: read RSS at the largest size <= 1.25x that at the smallest; write and compaction of the
   largest < 1.5 GiB.
4. Expiry: on the history table, expire the oldest k snapshots (k = 10, 100, 1000, one after the other, with
   ``retain_max`` = count - k): time and metadata reads. Goal (issue 14): O(k) reads, i.e. reads per expired
   snapshot at the smallest k <= 3x those at the largest k.

``--quick`` (2-3 minutes): 1,000 snapshots (windows of 20 commits), 100 partitions with 1k/3k/10k files,
100k/300k/1M rows, k = 10, 100. Results: ``--out`` JSON (default .bench/scale.json); plots (PNG) into ``--plots``
when matplotlib is importable (else later: ``python benchmarks/scale_plots.py JSON DIR`` with any Python that has
matplotlib). The machine is shared: compare ratios.

  python benchmarks/bench_scale.py [--quick] [--out .bench/scale.json] [--plots benchmarks/plots] [--only SECTIONS]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale_support import GIB, counts, machine_info, machine_line, run_for_peak_rss  # noqa: E402
from scale_tables import build_many_files_table  # noqa: E402

from table_engine import Catalog  # noqa: E402
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER  # noqa: E402
from table_engine.io.counting import CountingFileIO  # noqa: E402
from table_engine.io.file_io import LocalFileIO  # noqa: E402

SECTIONS = ("history", "planning", "memory", "expiry")
RSS_SCHEMA = pa.schema([("id", pa.int64()), ("qty", pa.int64()), ("price", pa.float64()), ("note", pa.string())])
BATCH_ROWS = 1_000_000


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


# ---------------------------------------------------------------- 1. history


def bench_history(root: Path, snapshots: int, checkpoints: list[int], window: int) -> tuple[dict[str, Any], Any]:
    fio = CountingFileIO(LocalFileIO())
    catalog = Catalog(str(root / "history"), file_io=fio)
    schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
    table = catalog.create_table("db.history", schema, primary_keys=["id"])
    rng = np.random.default_rng(3)
    commits: list[dict[str, Any]] = []
    present = 0  # snapshots in the table before the commit
    start = time.perf_counter()
    step = 0
    while present < checkpoints[-1] + window:
        ids = rng.choice(10_000, 10, replace=False).astype(np.int64)
        data = pa.table({"id": ids, "v": np.full(10, step, np.int64)}, schema=schema)
        t0 = time.perf_counter()
        writer = table.new_write()
        writer.write(data)
        messages = writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
        fio.reset()
        t1 = time.perf_counter()
        sid = table.commit(messages)
        t2 = time.perf_counter()
        commits.append({"snapshots_before": present, "commit_s": t2 - t1, "write_s": t2 - t0, **counts(fio)})
        commits[-1]["added"] = (sid or present) - present  # 2 when the writer's compaction was committed too
        present = sid if sid is not None else present
        step += 1
        if step % 1000 == 0:
            print(f"  history: {step} commits, {present} snapshots, {time.perf_counter() - start:.0f} s", flush=True)
    points = []
    for n in checkpoints:
        win = [c for c in commits if n <= c["snapshots_before"] < n + window]
        plain = [c for c in win if c["added"] == 1]
        compacting = [c for c in win if c["added"] != 1]
        points.append({"snapshots": n, "commits": len(win),
                       "median_commit_ms": 1000 * median([c["commit_s"] for c in win]),
                       "median_write_commit_ms": 1000 * median([c["write_s"] for c in win]),
                       "compacting_share": 1 - len(plain) / len(win) if win else math.nan,
                       "median_plain_commit_ms": 1000 * median([c["commit_s"] for c in plain]),
                       "median_plain_metadata_reads": median([c["metadata_reads"] for c in plain]),
                       "median_compacting_commit_ms": 1000 * median([c["commit_s"] for c in compacting]),
                       "median_compacting_metadata_reads": median([c["metadata_reads"] for c in compacting]),
                       "mean_commit_ms": 1000 * statistics.fmean([c["commit_s"] for c in win]) if win else math.nan,
                       "median_metadata_reads": median([c["metadata_reads"] for c in win]),
                       "mean_metadata_reads": statistics.fmean([c["metadata_reads"] for c in win]) if win else math.nan,
                       "max_metadata_reads": max((c["metadata_reads"] for c in win), default=0),
                       "median_snapshot_reads": median([c["reads"].get("snapshot", 0) for c in win]),
                       "median_probes": median([c["probes"] for c in win]),
                       "median_listings": median([c["listings"] for c in win])})
    for p in points:
        print(f"  {p['snapshots']:>6} snapshots: commit {p['median_commit_ms']:.1f} ms (write+commit "
              f"{p['median_write_commit_ms']:.1f} ms), metadata reads median {p['median_metadata_reads']:g} "
              f"mean {p['mean_metadata_reads']:.1f} max {p['max_metadata_reads']} "
              f"(snapshot files {p['median_snapshot_reads']:g}), probes {p['median_probes']:g}, "
              f"listings {p['median_listings']:g}; {100 * p['compacting_share']:.0f}% of the commits carry a "
              f"compaction, the others: {p['median_plain_commit_ms']:.1f} ms, "
              f"{p['median_plain_metadata_reads']:g} reads")
    result = {"commits": len(commits), "final_snapshots": present, "seconds": time.perf_counter() - start,
              "window": window, "checkpoints": points,
              "per_commit_snapshots_before": [c["snapshots_before"] for c in commits],
              "per_commit_ms": [round(1000 * c["commit_s"], 2) for c in commits],
              "per_commit_metadata_reads": [c["metadata_reads"] for c in commits]}
    return result, (table, fio)


# ---------------------------------------------------------------- 2. planning


def timed_median(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return median(times), out


def bench_planning(root: Path, partitions: int, buckets: int, sizes: list[int], repeats: int) -> dict[str, Any]:
    points = []
    for files in sizes:
        path = root / f"many-{files}"
        t0 = time.perf_counter()
        table = build_many_files_table(str(path), partitions, buckets, files)
        build_s = time.perf_counter() - t0
        full_s, splits = timed_median(table.plan, repeats)
        one_s, one = timed_median(lambda t=table: t.plan(filter=[("p", "=", partitions // 2)]), repeats)
        planned = sum(len(s.files) for s in splits)
        point = {"files": files, "planned_files": planned, "partitions": partitions, "buckets": buckets,
                 "build_s": build_s, "full_plan_s": full_s, "one_partition_plan_s": one_s,
                 "one_partition_files": sum(len(s.files) for s in one), "ratio": one_s / full_s}
        points.append(point)
        print(f"  {files:>7} files ({partitions} partitions x {buckets} buckets; built in {build_s:.0f} s): full plan "
              f"{full_s:.3f} s, one partition {one_s:.3f} s ({100 * point['ratio']:.1f}%)", flush=True)
        shutil.rmtree(path, ignore_errors=True)
    xs = np.log([p["files"] for p in points])
    ys = np.log([p["full_plan_s"] for p in points])
    slope = float(np.polyfit(xs, ys, 1)[0]) if len(points) > 1 else math.nan
    print(f"  full plan time ~ files^{slope:.2f}")
    return {"points": points, "loglog_slope": slope}


# ---------------------------------------------------------------- 3. memory (children)


def child(op: str, warehouse: str, rows: int) -> dict[str, Any]:
    out = _child_op(op, warehouse, rows)
    try:  # this process's own high-water mark: ru_maxrss would also count the parent's pages before exec
        status = Path("/proc/self/status").read_text()
        out["vmhwm_bytes"] = 1024 * int(next(ln for ln in status.splitlines() if ln.startswith("VmHWM:")).split()[1])
    except (OSError, StopIteration):
        pass
    return out


def _child_op(op: str, warehouse: str, rows: int) -> dict[str, Any]:
    catalog = Catalog(warehouse)
    t0 = time.perf_counter()
    if op == "baseline":
        return {"seconds": 0.0}
    if op == "write":
        table = catalog.create_table("db.rss", RSS_SCHEMA, primary_keys=["id"], options={"bucket": "1"})
        writer = table.new_write()
        batches = max(rows // BATCH_ROWS, 1)
        for i in range(batches):  # interleaved keys: every batch spans the whole key range
            ids = np.arange(i, rows, batches, dtype=np.int64)
            writer.write(_rows(ids, seed=i))
        table.commit(writer.prepare_commit(BATCH_COMMIT_IDENTIFIER))
        return {"seconds": time.perf_counter() - t0}
    table = catalog.get_table("db.rss")
    if op == "read":
        n = sum(b.num_rows for b in table.to_batches())
        return {"seconds": time.perf_counter() - t0, "rows": n}
    if op == "update":  # 10% updates kept on level 0 (write-only), so the compaction below merges two runs
        ids = np.arange(0, rows, 10, dtype=np.int64)
        table.copy({"write-only": "true"}).write(_rows(ids, seed=99))
        return {"seconds": time.perf_counter() - t0}
    if op == "compact":
        sid = table.maintenance.compact(full=True)
        return {"seconds": time.perf_counter() - t0, "snapshot": sid}
    raise ValueError(op)


def _rows(ids: np.ndarray, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    notes = pa.array(np.char.add("note-", (ids % 977).astype(str)).astype(object), pa.string())
    return pa.table({"id": ids, "qty": rng.integers(0, 1000, len(ids)), "price": rng.random(len(ids)) * 100,
                     "note": notes}, schema=RSS_SCHEMA)


def bench_memory(root: Path, sizes: list[int]) -> dict[str, Any]:
    def run(op: str, warehouse: Path, rows: int) -> dict[str, Any]:
        rss, out = run_for_peak_rss([sys.executable, __file__, "--child", op, str(warehouse), str(rows)], 3600)
        info = json.loads(out.strip().splitlines()[-1])
        return {"peak_rss_bytes": info.get("vmhwm_bytes", rss), "ru_maxrss_bytes": rss, **info}

    baseline = run("baseline", root / "rss-baseline", 0)
    print(f"  idle process (imports only): {baseline['peak_rss_bytes'] / 2**20:.0f} MiB")
    points = []
    for rows in sizes:
        wh = root / f"rss-{rows}"
        point: dict[str, Any] = {"rows": rows}
        for op in ("write", "read", "update", "compact"):
            r = run(op, wh, rows)
            if op != "update":
                point[op] = r
        points.append(point)
        print(f"  {rows:>10,} rows: peak RSS write {point['write']['peak_rss_bytes'] / 2**20:.0f} MiB "
              f"({point['write']['seconds']:.1f} s), read {point['read']['peak_rss_bytes'] / 2**20:.0f} MiB "
              f"({point['read']['seconds']:.1f} s), compaction {point['compact']['peak_rss_bytes'] / 2**20:.0f} MiB "
              f"({point['compact']['seconds']:.1f} s)", flush=True)
        shutil.rmtree(wh, ignore_errors=True)
    return {"baseline_rss_bytes": baseline["peak_rss_bytes"], "points": points}


# ---------------------------------------------------------------- 4. expiry


def bench_expiry(history: Any, ks: list[int]) -> dict[str, Any]:
    table, fio = history
    points = []
    for k in ks:
        count = len(table.snapshots())
        fio.reset()
        t0 = time.perf_counter()
        result = table.expire_snapshots(retain_max=count - k, retain_min=1, max_deletes=k)
        seconds = time.perf_counter() - t0
        reads, by_kind = fio.metadata_reads(), counts(fio)["reads"]
        after = len(table.snapshots())
        points.append({"k": k, "snapshots_before": count, "expired": count - after, "seconds": seconds,
                       "metadata_reads": reads, "reads": by_kind, "deleted_files": result.deleted_files})
        print(f"  expire {count - after} of {count} snapshots: {seconds:.2f} s, {reads} metadata files read",
              flush=True)
    return {"points": points}


# ---------------------------------------------------------------- goals, output


def goals(res: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def goal(name: str, ok: bool, measured: str, target: str) -> None:
        out.append({"goal": name, "pass": bool(ok), "measured": measured, "target": target})

    if "history" in res:
        cps = res["history"]["checkpoints"]
        first, last = cps[0], cps[-1]
        # a commit either only adds the new files or also carries the writer's compaction (which reads the bucket's
        # live files); with default options the share of the second kind grows as the table fills, so each kind is
        # compared with itself, and the overall median is reported beside them
        kinds = [("plain", "median_plain"), ("compacting", "median_compacting")]
        ratios = {k: last[f"{m}_commit_ms"] / first[f"{m}_commit_ms"] for k, m in kinds}
        overall = last["median_commit_ms"] / first["median_commit_ms"]
        goal("commit_time_flat", all(r <= 1.2 for r in ratios.values()),
             "median commit at " + f"{first['snapshots']} -> {last['snapshots']} snapshots: " + ", ".join(
                 f"{k} {first[f'{m}_commit_ms']:.1f} -> {last[f'{m}_commit_ms']:.1f} ms ({ratios[k]:.2f}x)"
                 for k, m in kinds)
             + f"; all commits {first['median_commit_ms']:.1f} -> {last['median_commit_ms']:.1f} ms ({overall:.2f}x, "
             f"commits carrying a compaction {100 * first['compacting_share']:.0f}% -> "
             f"{100 * last['compacting_share']:.0f}%)", "<= 1.2x per kind of commit")
        reads = {k: [c[f"{m}_metadata_reads"] for c in cps] for k, m in kinds}
        goal("metadata_reads_flat", all(max(r) <= 1.25 * r[0] for r in reads.values()),
             "median metadata files read per commit " + "; ".join(
                 f"{k}: " + ", ".join(f"{r:g}@{c['snapshots']}" for r, c in zip(rs, cps)) for k, rs in reads.items()),
             "every checkpoint <= 1.25x the first, per kind of commit")
    if "planning" in res:
        pts = res["planning"]["points"]
        big = pts[-1]
        goal("one_partition_plan", big["ratio"] <= 0.05,
             f"{1000 * big['one_partition_plan_s']:.0f} ms vs full {1000 * big['full_plan_s']:.0f} ms at "
             f"{big['files']:,} files ({100 * big['ratio']:.1f}%)", "<= 5%")
        slope = res["planning"]["loglog_slope"]
        goal("full_plan_linear", slope <= 1.2, f"full plan time ~ files^{slope:.2f}", "exponent <= 1.2")
    if "memory" in res:
        pts = res["memory"]["points"]
        small, big = pts[0], pts[-1]
        r = big["read"]["peak_rss_bytes"] / small["read"]["peak_rss_bytes"]
        goal("read_rss_flat", r <= 1.25,
             f"read peak RSS {big['read']['peak_rss_bytes'] / 2**20:.0f} MiB at {big['rows']:,} rows vs "
             f"{small['read']['peak_rss_bytes'] / 2**20:.0f} MiB at {small['rows']:,} ({r:.2f}x)", "<= 1.25x")
        for op in ("write", "compact"):
            rss = big[op]["peak_rss_bytes"]
            goal(f"{op}_rss_bounded", rss < 1.5 * GIB, f"{op} peak RSS {rss / GIB:.2f} GiB at {big['rows']:,} rows",
                 "< 1.5 GiB")
    if "expiry" in res and len(res["expiry"]["points"]) > 1:
        pts = res["expiry"]["points"]
        lo, hi = pts[0], pts[-1]
        per_lo, per_hi = lo["metadata_reads"] / max(lo["expired"], 1), hi["metadata_reads"] / max(hi["expired"], 1)
        goal("expiry_reads_linear_in_k", per_lo <= 3 * per_hi,
             f"metadata reads per expired snapshot {per_lo:.1f} (k={lo['expired']}) vs {per_hi:.1f} "
             f"(k={hi['expired']})", "<= 3x")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=Path, default=Path(".bench/scale.json"))
    ap.add_argument("--plots", type=Path, default=Path("benchmarks/plots"))
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--window", type=int, help="commits per checkpoint (default 50; 20 with --quick)")
    ap.add_argument("--plot-only", type=Path, metavar="JSON", help="only draw the plots of an earlier run")
    ap.add_argument("--child", nargs=3, metavar=("OP", "WAREHOUSE", "ROWS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], int(args.child[2]))))
        return 0
    if args.plot_only:
        return _plot(json.loads(args.plot_only.read_text()), args.plots)
    sections = [s for s in args.only.split(",") if s]
    if "expiry" in sections and "history" not in sections:
        ap.error("expiry runs on the history table: --only must include history")
    if args.quick:
        checkpoints, partitions, sizes, rows, ks = [10, 100, 1000], 100, [1000, 3000, 10_000], \
            [100_000, 300_000, 1_000_000], [10, 100]
    else:
        checkpoints, partitions, sizes, rows, ks = [10, 100, 1000, 3000, 10_000], 1000, [10_000, 30_000, 100_000], \
            [1_000_000, 3_000_000, 10_000_000], [10, 100, 1000]
    window = args.window or (20 if args.quick else 50)
    res: dict[str, Any] = {"machine": machine_info(), "quick": args.quick}
    print(f"scale benchmark ({'quick' if args.quick else 'full'}): {machine_line(res['machine'])}, "
          f"load average {res['machine']['load_average_start']}", flush=True)
    root = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    t_start = time.perf_counter()
    try:
        history = None
        if "history" in sections:
            print(f"1. commit time vs snapshots (to {checkpoints[-1]:,})", flush=True)
            res["history"], history = bench_history(root, checkpoints[-1], checkpoints, window)
        if "planning" in sections:
            print(f"2. plan time vs files ({partitions} partitions x 4 buckets)", flush=True)
            res["planning"] = bench_planning(root, partitions, 4, sizes, 3)
        if "memory" in sections:
            print("3. peak RSS vs rows (fresh process per operation)", flush=True)
            res["memory"] = bench_memory(root, rows)
        if "expiry" in sections and history is not None:
            print("4. expiry time vs snapshots expired", flush=True)
            res["expiry"] = bench_expiry(history, ks)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    res["machine"]["load_average_end"] = os.getloadavg()
    res["seconds"] = time.perf_counter() - t_start
    res["goals"] = goals(res)
    print(f"goals ({res['seconds']:.0f} s in all; load average at the end {res['machine']['load_average_end']}):")
    for g in res["goals"]:
        print(f"  {'PASS' if g['pass'] else 'FAIL'} {g['goal']}: {g['measured']} (target {g['target']})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(f"results: {args.out}")
    _plot(res, args.plots)
    return 0


def _plot(res: dict[str, Any], out_dir: Path) -> int:
    try:
        import scale_plots
    except ImportError as e:  # matplotlib missing: the JSON is there, plot later with --plot-only
        print(f"plots skipped ({e}); draw them with any Python that has matplotlib: "
              f"python benchmarks/scale_plots.py <json> {out_dir}")
        return 0
    for path in scale_plots.plot_all(res, out_dir):
        print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
