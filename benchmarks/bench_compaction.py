"""Compaction and file-index benchmark (issue: compaction, deletion vectors, file indexes and lifecycle).

1. Full compaction of a primary-key table (``bucket`` = 1, ``write-only``) holding ``--rows`` rows (default
   1,000,000) in ``--runs`` sorted runs (default 5; keys drawn from ``rows/2`` possible keys, so runs overlap),
   side by side with its floor: raw pyarrow reading the same data files and writing the rows once
   (``pq.write_table``, zstd). Ratio = compaction seconds / floor seconds; target: at most 3x.
2. Point lookup with a bloom filter: an append table of ``--files`` files (default 100, one commit each, 10,000
   rows per file) whose STRING column ``name`` holds random tokens (min/max stats cannot prune) and has
   ``file-index.bloom-filter.columns`` = name, ``write-only`` (writers would compact the files). Counts the files
   the scan plans for ``name = <one existing value>`` (target: at most 2) and times the lookup against a full read.

Best of ``--repeats`` (default 3). The machine is shared: compare the ratios, not the seconds.

  python benchmarks/bench_compaction.py [--rows 1000000] [--runs 5] [--files 100] [--repeats 3] [--out F.json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine import Catalog  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("qty", pa.int64()), ("price", pa.float64()), ("note", pa.string())])


def runs(rows: int, count: int, seed: int = 11) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    per_run = rows // count
    out = []
    for _ in range(count):
        ids = np.sort(rng.choice(rows // 2, per_run, replace=False)).astype(np.int64)
        notes = pa.array(np.char.add("note-", (ids % 977).astype(str)).astype(object), pa.string())
        out.append(pa.table({"id": ids, "qty": rng.integers(0, 1000, per_run), "price": rng.random(per_run) * 100,
                             "note": notes}, schema=SCHEMA))
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def bench_full_compaction(catalog: Catalog, root: Path, rows: int, count: int, repeats: int) -> dict[str, Any]:
    data = runs(rows, count)
    best_compact, best_floor, rows_out = float("inf"), float("inf"), 0
    for r in range(repeats):
        t = catalog.create_table(f"db.compact_{r}", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "write-only": "true"})
        for b in data:
            t.write(b)
        files = sorted(glob.glob(f"{t.path}/bucket-0/*.parquet"))
        assert len(files) == count, files
        out_file = root / f"floor-{r}.parquet"

        def floor(files: list[str] = files, out_file: Path = out_file) -> None:
            table = pa.concat_tables([pq.read_table(f) for f in files])
            pq.write_table(table, out_file, compression="zstd", compression_level=1)

        floor_s, _ = timed(floor)
        compact_s, _ = timed(lambda t=t: t.maintenance.compact(full=True))
        rows_out = t.read().num_rows
        best_compact, best_floor = min(best_compact, compact_s), min(best_floor, floor_s)
    print(f"full compaction of {rows:,} rows in {count} sorted runs -> {rows_out:,} rows: "
          f"{best_compact:.3f} s; floor (pyarrow read + write) {best_floor:.3f} s; "
          f"ratio {best_compact / best_floor:.2f}x (target <= 3x)")
    return {"rows": rows, "runs": count, "rows_out": rows_out, "compact_s": best_compact, "floor_s": best_floor,
            "ratio": best_compact / best_floor}


def bench_point_lookup(catalog: Catalog, files: int, repeats: int) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    t = catalog.create_table("db.lookup", pa.schema([("id", pa.int64()), ("name", pa.string())]),
                             options={"file-index.bloom-filter.columns": "name",
                                      "write-only": "true"})  # keep the 100 files: writers would compact them
    per_file = 10_000
    probe = ""
    for k in range(files):
        tokens = np.char.add("t", rng.integers(0, 2**62, per_file).astype(str)).astype(object)
        if k == files // 2:
            probe = str(tokens[1234])
        t.write(pa.table({"id": pa.array(np.arange(k * per_file, (k + 1) * per_file), pa.int64()),
                          "name": pa.array(tokens, pa.string())}))
    flt = [("name", "=", probe)]
    planned = sum(len(s.files) for s in t.plan(flt))
    lookup_s = min(timed(lambda: t.read(filter=flt))[0] for _ in range(repeats))
    scan_s = min(timed(t.read)[0] for _ in range(repeats))
    hits = t.read(filter=flt).num_rows
    print(f"point lookup on {files} files ({files * per_file:,} rows) with a bloom filter: {planned} file(s) read "
          f"(target <= 2), {hits} row(s); {lookup_s * 1000:.1f} ms vs full read {scan_s * 1000:.1f} ms")
    return {"files": files, "files_read": planned, "hits": hits, "lookup_s": lookup_s, "full_read_s": scan_s}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-compaction-"))
    try:
        catalog = Catalog(str(root / "warehouse"))
        result = {
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
            "load_average": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "full_compaction": bench_full_compaction(catalog, root, args.rows, args.runs, args.repeats),
            "point_lookup": bench_point_lookup(catalog, args.files, args.repeats),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
