"""A/B: the engine's write path at two commits, side by side in one run (for refactors that must be no slower).

Each round runs the same workload once with the sources of ``--base`` (a git worktree made for the run) and once
with this checkout's, in alternating order, each in a fresh interpreter (``PYTHONPATH`` points at the tree), so
machine noise hits both alike. The workload (numpy, seeded): ``--rows`` rows (BIGINT key, INT, DOUBLE, STRING
columns) written in one commit into a primary-key table with a fixed bucket count (``bucket`` = 4) and into one
with dynamic buckets (``bucket`` = -1); then an upsert of ``rows / 5`` rows (half existing keys) into each. The
child reports the engine's seconds of each phase (table creation and data generation excluded).

  python benchmarks/bench_ab.py --base <commit> [--rows 1000000] [--rounds 5]

Prints the median seconds per phase of each side and the ratio new / base (below 1: the new code is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, tempfile, time
import numpy as np
import pyarrow as pa
from table_engine import Catalog

rows = int(sys.argv[1])
rng = np.random.default_rng(42)
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int32()), ("b", pa.float64()),
                    ("s", pa.string())])

def batch(keys):
    n = len(keys)
    return pa.table({"id": pa.array(keys, pa.int64()), "a": pa.array(rng.integers(0, 1 << 30, n, dtype=np.int32)),
                     "b": pa.array(rng.random(n)), "s": pa.array([f"v{k % 9973}" for k in keys])}, schema=schema)

first = batch(np.arange(rows, dtype=np.int64))
half = rows // 10
upsert = batch(np.concatenate([rng.choice(rows, half, replace=False), np.arange(rows, rows + half)]))
out = {}
with tempfile.TemporaryDirectory() as warehouse:
    catalog = Catalog(warehouse)
    for mode, bucket in (("fixed", "4"), ("dynamic", "-1")):
        t = catalog.create_table(f"db.{mode}", schema, primary_keys=["id"], options={"bucket": bucket})
        t0 = time.perf_counter()
        t.write(first)
        t1 = time.perf_counter()
        t.write(upsert)
        t2 = time.perf_counter()
        out[f"{mode} write"] = t1 - t0
        out[f"{mode} upsert"] = t2 - t1
print(json.dumps(out))
"""


def run_side(tree: Path, rows: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'provider'}"}
    done = subprocess.run([sys.executable, "-c", CHILD, str(rows)], env=env, capture_output=True, text=True,
                          timeout=1800, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    base_dir = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", str(base_dir / "tree"), args.base],
                   check=True, capture_output=True)
    sides = {"base": base_dir / "tree", "new": REPO_ROOT}
    seen: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    try:
        for i in range(args.rounds):
            order = ("base", "new") if i % 2 == 0 else ("new", "base")
            for side in order:
                seen[side].append(run_side(sides[side], args.rows))
            print(f"round {i + 1}/{args.rounds}: load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", str(base_dir / "tree")],
                       check=False, capture_output=True)
        shutil.rmtree(base_dir, ignore_errors=True)
    print(f"\n{args.rows:,} rows, {args.rounds} rounds, median seconds (base {args.base[:12]} vs this checkout)")
    print(f"{'phase':<16}{'base':>9}{'new':>9}{'new/base':>10}")
    for phase in seen["base"][0]:
        b = statistics.median(r[phase] for r in seen["base"])
        n = statistics.median(r[phase] for r in seen["new"])
        print(f"{phase:<16}{b:>9.3f}{n:>9.3f}{n / b:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
