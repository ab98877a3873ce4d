"""Postpone bucket compaction benchmark (issue 22).

The same ``--rows`` rows (default 1,000,000, in ``--commits`` commits, default 5; keys drawn from ``rows/2`` possible
keys, so commits overlap) are written to two primary-key tables:

- a postpone bucket table (``bucket`` = -2, ``postpone.default-bucket-num`` = ``--buckets``): the rows wait in
  ``bucket-postpone``; timed: ``compact()``, which assigns them to the buckets, merges them and commits (the
  compaction that publishes them);
- a fixed-bucket table (``bucket`` = ``--buckets``, ``write-only``): timed: ``compact(full=True)``.

Ratio = postpone compaction seconds / full compaction seconds; target: at most 2x. Also reported: the wall seconds
the postpone compaction spends decoding the postponed Avro files (the engine's Avro reader,
:mod:`table_engine.format.avro_data_file`, a window of files at a time in parallel) and the ratio without them.
Best of ``--repeats`` (default 3). The machine is shared: compare the ratio, not the seconds.

  python benchmarks/bench_postpone.py [--rows 1000000] [--commits 5] [--buckets 4] [--repeats 3] [--out F.json]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import finish_report  # noqa: E402

from table_engine import Catalog  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("qty", pa.int64()), ("price", pa.float64()), ("note", pa.string())])


def commits(rows: int, count: int, seed: int = 7) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    per = rows // count
    out = []
    for _ in range(count):
        ids = rng.choice(rows // 2, per, replace=False).astype(np.int64)
        notes = pa.array(np.char.add("note-", (ids % 977).astype(str)).astype(object), pa.string())
        out.append(pa.table({"id": ids, "qty": rng.integers(0, 1000, per), "price": rng.random(per) * 100,
                             "note": notes}, schema=SCHEMA))
    return out


def bench(root: Path, rows: int, count: int, buckets: int, repeats: int) -> dict[str, Any]:
    data = commits(rows, count)
    best = {"postpone": float("inf"), "fixed": float("inf")}
    out_rows = {}
    for r in range(repeats):
        catalog = Catalog(str(root / f"w{r}"))
        tables = {
            "postpone": catalog.create_table("db.p", SCHEMA, primary_keys=["id"], options={
                "bucket": "-2", "postpone.default-bucket-num": str(buckets)}),
            "fixed": catalog.create_table("db.f", SCHEMA, primary_keys=["id"], options={
                "bucket": str(buckets), "write-only": "true"}),
        }
        for t in tables.values():
            for b in data:
                t.write(b)
        for name, t in tables.items():
            with _DecodeTimer() as decode:
                start = time.perf_counter()
                sid = t.maintenance.compact() if name == "postpone" else t.maintenance.compact(full=True)
                seconds = time.perf_counter() - start
            if name == "postpone" and seconds < best[name]:
                best["decode"] = decode.seconds
            best[name] = min(best[name], seconds)
            assert sid is not None
            out_rows[name] = t.read().num_rows
        shutil.rmtree(root / f"w{r}", ignore_errors=True)
    assert out_rows["postpone"] == out_rows["fixed"], out_rows
    return {"rows_in": rows, "rows_out": out_rows["postpone"], "commits": count, "buckets": buckets,
            "postpone_compact_s": round(best["postpone"], 3), "fixed_full_compact_s": round(best["fixed"], 3),
            "ratio": round(best["postpone"] / best["fixed"], 2), "target_ratio_max": 2.0,
            "postponed_files_decode_s": round(best["decode"], 3),
            "ratio_without_decode": round(max(0.0, best["postpone"] - best["decode"]) / best["fixed"], 2)}


class _DecodeTimer:
    """Times the postpone compaction's decoding of postponed files: the wall time of its parallel reads (the
    engine's Avro reader, a window of files at a time on every core)."""

    def __init__(self) -> None:
        from table_engine.store.writing import postpone_compact

        self.module = postpone_compact
        self.original = postpone_compact.parallel_map
        self.seconds = 0.0

    def __enter__(self) -> _DecodeTimer:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return self.original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        self.module.parallel_map = timed  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        self.module.parallel_map = self.original  # type: ignore[assignment]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--commits", type=int, default=5)
    p.add_argument("--buckets", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out")
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-postpone-"))
    try:
        result = bench(root, a.rows, a.commits, a.buckets, a.repeats)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    finish_report(result, a.out)
    ok = result["ratio"] <= result["target_ratio_max"]
    print(f"postpone compaction / fixed-bucket full compaction: {result['ratio']}x "
          f"({'OK' if ok else 'ABOVE TARGET'}, target <= 2x); without decoding the Avro files: "
          f"{result['ratio_without_decode']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
