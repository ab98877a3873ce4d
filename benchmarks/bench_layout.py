"""Sort compaction benchmark (issue 40): its rate against bin-pack compaction, the files a filter reads after each
order, and the peak memory of a sort.

One append table (``bucket`` = -1, ``write-only``, ``target-file-size`` 8 MB) of ``--rows`` rows (default
10,000,000) in ``--batches`` appends (default 200: small files, which a bin-pack compaction rewrites) of four
columns: ``user_id`` and ``event_time`` (BIGINT, uniform),
``amount`` (DOUBLE), ``note`` (STRING). Copies of it are compacted side by side in one run:

1. **rate**: a full bin-pack compaction (the same files into ``target-file-size`` files) against a sort compaction
   by ``order`` / ``zorder`` / ``hilbert`` of ``user_id,event_time``: rows per second, ratio = sort rate / bin-pack
   rate (target: at least 0.5 for zorder);
2. **pruning**: the files planned for ``user_id < 10%`` and ``event_time < 10%`` of their ranges after each layout,
   as a share of the files of the table (target: at most 25% of what the unsorted table reads, for zorder);
3. **memory**: the peak RSS growth during each compaction (its process's RSS sampled every 5 ms over the
   compaction only), with
   ``write-buffer-size`` = ``--buffer`` (default: a quarter of the data's Arrow size, so that the partition is 4x the
   buffer and the sort spills runs and merges them).

The machine is shared: compare the ratios, not the seconds.

Each layout's compaction runs ``--repeat`` + 1 times (default 3) on copies of one table, each in a fresh process,
the layouts alternated: the first round samples the RSS, the others are timed (their median).

  python benchmarks/bench_layout.py [--rows 10000000] [--batches 200] [--repeat 3] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine import Catalog  # noqa: E402

SCHEMA = pa.schema([("user_id", pa.int64()), ("event_time", pa.int64()), ("amount", pa.float64()),
                    ("note", pa.string())])
RANGE = 1 << 40


def batches(rows: int, count: int, seed: int = 40) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    per = rows // count
    notes = pa.array([f"note-{i}" for i in range(1000)])
    return [pa.table({"user_id": rng.integers(0, RANGE, per), "event_time": rng.integers(0, RANGE, per),
                      "amount": rng.random(per) * 100, "note": notes.take(rng.integers(0, 1000, per))},
                     schema=SCHEMA) for _ in range(count)]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _compact(warehouse: str, layout: str, sample_rss: bool) -> tuple[float, float]:
    """In a worker process: compact (bin-pack) or sort the table; its seconds and, with ``sample_rss``, its peak RSS
    growth in MB (the RSS sampled every 5 ms while it runs, over the RSS just before; the sampling thread takes the
    GIL 200 times a second, which slows a sort's threads: such a run is not timed)."""
    import threading

    table = Catalog(warehouse).get_table("db.t")
    table.plan()
    base, peak, done = _rss_mb(), [0.0], threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], _rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_rss:
        sampler.start()
    start = time.perf_counter()
    if layout == "bin-pack":
        table.maintenance.compact(full=True)
    else:
        table.maintenance.compact(order_strategy=layout, order_by="user_id,event_time")
    seconds = time.perf_counter() - start
    done.set()
    if sample_rss:
        sampler.join()
    return seconds, max(peak[0], _rss_mb()) - base


def files_read(table: Any, column: str) -> int:
    return sum(len(s.files) for s in table.plan(filter=[(column, "<", RANGE // 10)]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--buffer", type=int, default=None, help="write-buffer-size in bytes (default: data / 4)")
    ap.add_argument("--repeat", type=int, default=3, help="compactions of each layout, alternated (median time)")
    ap.add_argument("--out")
    args = ap.parse_args()
    data = batches(args.rows, args.batches)
    arrow_mb = sum(b.nbytes for b in data) / 2 ** 20
    buffer = args.buffer or int(arrow_mb * 2 ** 20 / 4)
    home = tempfile.mkdtemp(prefix="bench-layout-")
    layouts = ("bin-pack", "order", "zorder", "hilbert")
    results: dict[str, Any] = {"rows": args.rows, "arrow_mb": round(arrow_mb, 1), "repeat": args.repeat,
                               "buffer_mb": round(buffer / 2 ** 20, 1), "machine": platform.node(),
                               "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d"), "layouts": {}}
    try:
        template = os.path.join(home, "template")
        table = Catalog(template).create_table("db.t", SCHEMA, options={
            "bucket": "-1", "write-only": "true", "target-file-size": "8 mb", "write-buffer-size": str(buffer)})
        for b in data:
            table.write(b)
        del data
        unsorted = {c: files_read(table, c) for c in ("user_id", "event_time")}
        runs: dict[str, list[float]] = {layout: [] for layout in layouts}
        rss: dict[str, float] = {}
        for rep in range(args.repeat + 1):  # the layouts alternate: a slow spell of the machine hits them alike
            for layout in layouts:
                copy = os.path.join(home, layout)
                shutil.copytree(template, copy)
                # the compaction in a fresh process: its peak RSS over its own baseline (imports, the table opened)
                # in the first round, its time in the others
                with mp.get_context("spawn").Pool(1) as pool:
                    seconds, growth = pool.apply(_compact, (copy, layout, rep == 0))
                if rep == 0:
                    rss[layout] = growth
                else:
                    runs[layout].append(seconds)
                if rep == 0:
                    t = Catalog(copy).get_table("db.t")
                    results["layouts"][layout] = {
                        "files": sum(len(s.files) for s in t.plan()),
                        **{f"{c}_files_read": files_read(t, c) for c in unsorted},
                        **{f"{c}_files_read_unsorted": n for c, n in unsorted.items()}}
                shutil.rmtree(copy, ignore_errors=True)
        for layout in layouts:
            seconds = statistics.median(runs[layout])
            results["layouts"][layout].update({"seconds": round(seconds, 2), "rows_per_s": round(args.rows / seconds),
                                               "all_seconds": [round(s, 2) for s in runs[layout]],
                                               "rss_growth_mb": round(rss[layout], 1)})
            print(layout, results["layouts"][layout], flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    base = results["layouts"]["bin-pack"]["rows_per_s"]
    print(f"\n{args.rows:,} rows ({arrow_mb:.0f} MB of Arrow data, write-buffer-size {buffer / 2 ** 20:.0f} MB), "
          f"{results['date']}, {results['cpus']} cores, median of {args.repeat} alternated runs")
    print("| layout | rate vs bin-pack | files read: user_id < 10% | files read: event_time < 10% | peak RSS growth |")
    print("| --- | --- | --- | --- | --- |")
    for layout, row in results["layouts"].items():
        share = {c: row[f"{c}_files_read"] / max(1, row[f"{c}_files_read_unsorted"]) for c in ("user_id", "event_time")}
        print(f"| {layout} | {row['rows_per_s'] / base:.2f}x | {row['user_id_files_read']} of {row['files']} "
              f"({share['user_id']:.0%} of unsorted) | {row['event_time_files_read']} ({share['event_time']:.0%}) | "
              f"{row['rss_growth_mb']:.0f} MB |")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
