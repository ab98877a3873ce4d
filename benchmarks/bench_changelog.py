"""Changelog producer benchmark (issue: merge engines and changelog).

A primary-key table (``bucket`` = 4) gets one commit of ``--rows`` rows (default 500,000), then ``--commits``
commits (default 4) of ``--upserts`` rows each (default 100,000; keys drawn from 1.2 x rows, so most exist), every
commit through ``Table.write`` (the writer compacts at commit). Times the first commit and the upserts for each
``changelog-producer`` (none, input, lookup, lookup with aggregation, full-compaction with ``delta-commits`` = 1) and
counts the changelog rows. The machine is shared: compare producers with each other, not the seconds.

  python benchmarks/bench_changelog.py [--rows 500000] [--upserts 100000] [--commits 4] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine import Catalog  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())])
CASES: list[tuple[str, dict[str, str]]] = [
    ("none", {"changelog-producer": "none"}),
    ("input", {"changelog-producer": "input"}),
    ("lookup", {"changelog-producer": "lookup"}),
    ("lookup + aggregation", {"changelog-producer": "lookup", "merge-engine": "aggregation",
                              "fields.n.aggregate-function": "sum"}),
    ("full-compaction", {"changelog-producer": "full-compaction", "full-compaction.delta-commits": "1"}),
]


def batch(ids: np.ndarray, prefix: str) -> pa.Table:
    return pa.table({"id": ids, "v": pa.array(np.char.add(prefix, (ids % 97).astype(str))), "n": ids * 2},
                    schema=SCHEMA)


def run(rows: int, upserts: int, commits: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(1)
    base = batch(np.arange(rows, dtype=np.int64), "v")
    ups = [batch(rng.choice(int(rows * 1.2), upserts, replace=False).astype(np.int64), "u") for _ in range(commits)]
    out = []
    for name, options in CASES:
        with tempfile.TemporaryDirectory() as d:
            t = Catalog(d).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "4", **options})
            t0 = time.perf_counter()
            t.write(base)
            t1 = time.perf_counter()
            for u in ups:
                t.write(u)
            t2 = time.perf_counter()
            changelog_rows = sum(s.changelog_record_count or 0 for s in t.snapshots())
        out.append({"case": name, "first_commit_s": round(t1 - t0, 3), "upserts_s": round(t2 - t1, 3),
                    "changelog_rows": changelog_rows})
        print(f"{name:22s} first commit {t1 - t0:6.2f} s   {commits} x {upserts} upserts {t2 - t1:6.2f} s   "
              f"changelog rows {changelog_rows}")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=500_000)
    p.add_argument("--upserts", type=int, default=100_000)
    p.add_argument("--commits", type=int, default=4)
    p.add_argument("--out")
    a = p.parse_args()
    result = run(a.rows, a.upserts, a.commits)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
