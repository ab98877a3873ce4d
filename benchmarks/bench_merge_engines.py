"""Merge-on-read benchmark of the merge engines: deduplicate, partial-update and aggregation vs a raw pyarrow read.

Workload (numpy, seeded): ``--rows`` rows in total (default 1,000,000) spread over ``--runs`` commits (default 5),
each commit a sorted run of ``rows/runs`` distinct keys drawn from ``rows/2`` possible keys, so most keys appear in
several runs. Columns: BIGINT key ``id``, BIGINT ``qty``, DOUBLE ``price``, STRING ``note``; partial-update rows
leave ~half of the values null. Tables: ``bucket = 1``, ``write-only`` (no compaction), so a read merges 5 sorted
runs. Engines:

  deduplicate     (default engine; newest version of each key wins)
  partial-update  (latest non-null value per column)
  aggregation     qty: sum, price: max, note: last_non_null_value

Baseline: ``pyarrow.parquet.read_table`` of the same data files (the raw rows, no merging). Best of ``--repeats``
(default 3); ratio = raw read seconds / merged read seconds (1.0 = as fast as reading the raw rows; the target is
>= 0.3). The machine is shared: numbers are noisy.

  python benchmarks/bench_merge_engines.py [--rows 1000000] [--runs 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import glob
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine import Catalog  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("qty", pa.int64()), ("price", pa.float64()), ("note", pa.string())])
ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.qty.aggregate-function": "sum",
                    "fields.price.aggregate-function": "max"},
}


def batches(rows: int, runs: int, sparse: bool, seed: int = 7) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    per_run = rows // runs
    out = []
    for _ in range(runs):
        ids = np.sort(rng.choice(rows // 2, per_run, replace=False)).astype(np.int64)
        qty = rng.integers(0, 1000, per_run)
        price = rng.random(per_run) * 100
        notes = np.array([f"note-{i % 977}" for i in range(per_run)], dtype=object)
        null = rng.random(per_run) < 0.5 if sparse else np.zeros(per_run, bool)
        out.append(pa.table({"id": ids, "qty": pa.array(qty, mask=null), "price": pa.array(price, mask=~null & sparse),
                             "note": pa.array(notes, pa.string())}, schema=SCHEMA))
    return out


def best(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-merge-"))
    try:
        catalog = Catalog(str(root))
        print(f"{args.rows:,} rows in {args.runs} sorted runs; best of {args.repeats}")
        print(f"{'engine':<16}{'raw read s':>12}{'merged read s':>15}{'rows out':>12}{'ratio':>8}")
        for name, opts in ENGINES.items():
            t = catalog.create_table(f"db.{name.replace('-', '_')}", SCHEMA, primary_keys=["id"],
                                     options={"bucket": "1", "write-only": "true", **opts})
            for b in batches(args.rows, args.runs, sparse=name == "partial-update"):
                t.write(b)
            files = sorted(glob.glob(f"{t.path}/bucket-0/*.parquet"))
            def raw_read(files: list[str] = files) -> pa.Table:
                return pa.concat_tables([pq.read_table(f) for f in files])

            raw_s, raw = best(raw_read, args.repeats)
            assert isinstance(raw, pa.Table) and raw.num_rows == args.rows // args.runs * args.runs
            merged_s, merged = best(t.read, args.repeats)
            assert isinstance(merged, pa.Table)
            print(f"{name:<16}{raw_s:>12.3f}{merged_s:>15.3f}{merged.num_rows:>12,}{raw_s / merged_s:>8.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
