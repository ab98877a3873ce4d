"""Merge-on-write benchmark: reading a deletion-vector table vs merging on read.

A primary-key table (``bucket`` = 1, ``write-only``) gets ``--rows`` rows (default 1,000,000), a full compaction,
then an update of ``--update`` of its keys (default 10%), compacted by a minor compaction: with
``deletion-vectors.enabled`` the update lands one level below the base file and the base file's old versions are
marked in a deletion vector. Timed (best of ``--repeats``):

* ``dv_read``: batch read of the DV table (no merge: each file read, its vector applied);
* ``dv_merge_on_read``: the same files read with ``deletion-vectors.merge-on-read`` (merged, vectors applied);
* ``mor_read``: a plain merge-on-read table with the same two writes, uncompacted (base + update merged);
* ``minor_compaction_dv``: the update's lookup compaction (marks the vector); ``full_compaction_no_dv``: what the
  plain table pays instead to become merge-free (a full compaction: copy-on-write).

Ratios are what to compare (the machine is shared).

  python benchmarks/bench_deletion_vectors.py [--rows 1000000] [--update 0.1] [--repeats 3] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine import Catalog  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("qty", pa.int64()), ("price", pa.float64()), ("note", pa.string())])


def rows_of(ids: np.ndarray, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    notes = pa.array(np.char.add("note-", (ids % 977).astype(str)).astype(object), pa.string())
    return pa.table({"id": ids.astype(np.int64), "qty": rng.integers(0, 1000, len(ids)),
                     "price": rng.random(len(ids)) * 100, "note": notes}, schema=SCHEMA)


def best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    out: Any = None
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--update", type=float, default=0.1)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out")
    a = p.parse_args()
    base = rows_of(np.arange(a.rows), 1)
    upd_ids = np.sort(np.random.default_rng(2).choice(a.rows, int(a.rows * a.update), replace=False))
    update = rows_of(upd_ids, 3)
    wh = tempfile.mkdtemp(prefix="bench-dv-")
    try:
        cat = Catalog(wh)
        opts = {"bucket": "1", "write-only": "true"}
        dv = cat.create_table("db.dv", SCHEMA, primary_keys=["id"],
                              options={**opts, "deletion-vectors.enabled": "true"})
        mor = cat.create_table("db.mor", SCHEMA, primary_keys=["id"], options=opts)
        for t in (dv, mor):
            t.write(base)
            t.maintenance.compact(full=True)
            t.write(update)
        mor_copy = cat.create_table("db.mor2", SCHEMA, primary_keys=["id"], options=opts)
        mor_copy.write(base)
        mor_copy.maintenance.compact(full=True)
        mor_copy.write(update)
        compact_dv, _ = best(lambda: dv.maintenance.compact(), 1)
        compact_mor, _ = best(lambda: mor_copy.maintenance.compact(full=True), 1)
        levels = sorted({f.level for s in dv.plan() for f in s.files})
        dv_read, n1 = best(lambda: dv.read().num_rows, a.repeats)
        dv_mor_view = dv.copy({"deletion-vectors.merge-on-read": "true"})
        dv_mor, n2 = best(lambda: dv_mor_view.read().num_rows, a.repeats)
        mor_read, n3 = best(lambda: mor.read().num_rows, a.repeats)
        assert n1 == n2 == n3 == a.rows, (n1, n2, n3)
        result = {
            "rows": a.rows, "update_fraction": a.update, "dv_levels": levels,
            "dv_read_s": round(dv_read, 3), "dv_merge_on_read_s": round(dv_mor, 3), "mor_read_s": round(mor_read, 3),
            "ratio_mor_over_dv": round(mor_read / dv_read, 2),
            "ratio_dv_merge_on_read_over_dv": round(dv_mor / dv_read, 2),
            "minor_compaction_dv_s": round(compact_dv, 3), "full_compaction_no_dv_s": round(compact_mor, 3),
        }
        print(json.dumps(result, indent=2))
        if a.out:
            Path(a.out).write_text(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(wh, ignore_errors=True)


if __name__ == "__main__":
    main()
