"""Data-evolution read benchmark (issue 23).

pypaimon 2.1.0 (``tests/interop/pypaimon_driver.py data_evolution_bench``, in its own venv: ``$PYPAIMON_PYTHON``)
writes a data-evolution table of ``--rows`` rows (default 1,000,000) and 8 columns in one commit, then updates 2
columns by row id in 4 commits (each writes one overlay file of its column over the whole row range). The baseline
is the same table compacted (the engine's data-evolution compaction of a copy, when the gate allows it; else the same
final rows written by pypaimon as whole rows, the layout a compaction produces: ``baseline`` says which).

Timed with the engine (best of ``--repeats``, default 7): a projection of an untouched column (``c3``) and a full
read, on both (and, for reference, on the final rows written whole by pypaimon, whose Parquet writer settings differ
from the engine's). Speed ratio = baseline seconds / data-evolution seconds; targets: projection >= 0.8x, full read
>= 0.4x. The machine is shared: compare the ratios, not the seconds.

  python benchmarks/bench_data_evolution.py [--rows 1000000] [--repeats 7] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import finish_report  # noqa: E402

from table_engine import Catalog  # noqa: E402
from table_engine.errors import UnsupportedTableFeatureError  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DRIVER = REPO_ROOT / "tests" / "interop" / "pypaimon_driver.py"
RESULT_PREFIX = "@@RESULT@@ "
TARGETS = {"projection": 0.8, "full": 0.4}


def make_tables(warehouse: Path, rows: int) -> None:
    python = os.environ.get("PYPAIMON_PYTHON", str(REPO_ROOT / ".venv-pypaimon" / "bin" / "python"))
    spec = {"command": "data_evolution_bench", "warehouse": str(warehouse), "rows": rows}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([python, str(DRIVER), "--json", json.dumps(spec)], capture_output=True, text=True, env=env,
                          timeout=3600, check=False)
    if proc.returncode != 0 or RESULT_PREFIX not in proc.stdout:
        raise RuntimeError(f"pypaimon failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")


def best(fn: Callable[[], Any], repeats: int) -> float:
    out = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - start)
    return out


def bench(root: Path, rows: int, repeats: int) -> dict[str, Any]:
    warehouse = root / "warehouse"
    make_tables(warehouse, rows)
    catalog = Catalog(str(warehouse))
    evolved = catalog.get_table("db.evolved")
    shutil.copytree(warehouse / "db.db" / "evolved", warehouse / "db.db" / "compacted")
    try:
        compacted = catalog.get_table("db.compacted")
        start = time.perf_counter()
        compacted.maintenance.compact(full=True)
        compact_s: float | None = time.perf_counter() - start
        baseline = "db.compacted (the engine's data-evolution compaction of a copy)"
    except UnsupportedTableFeatureError:
        compacted, compact_s = catalog.get_table("db.whole"), None
        baseline = "db.whole (the final rows written whole by pypaimon; the engine cannot compact yet)"
    files = {name: len(t.plan()[0].files) for name, t in (("evolved", evolved), ("baseline", compacted))}
    assert evolved.read().sort_by("id").equals(compacted.read().sort_by("id"))
    result: dict[str, Any] = {"rows": rows, "files": files, "baseline": baseline,
                              "compact_s": None if compact_s is None else round(compact_s, 3)}
    whole = catalog.get_table("db.whole")
    for name, cols in (("projection", ["c3"]), ("full", None)):
        evolved_s = best(lambda c=cols: evolved.read(columns=c), repeats)
        base_s = best(lambda c=cols: compacted.read(columns=c), repeats)
        whole_s = best(lambda c=cols: whole.read(columns=c), repeats)
        result[name] = {"evolved_s": round(evolved_s, 4), "compacted_s": round(base_s, 4),
                        "speed_ratio": round(base_s / evolved_s, 2), "target_min": TARGETS[name],
                        "pypaimon_whole_s": round(whole_s, 4), "ratio_vs_pypaimon_whole": round(whole_s / evolved_s, 2)}
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--out")
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-dataevo-"))
    try:
        result = bench(root, a.rows, a.repeats)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    finish_report(result, a.out)
    for name in TARGETS:
        r = result[name]
        ok = r["speed_ratio"] >= r["target_min"]
        print(f"{name}: data evolution reads at {r['speed_ratio']}x the speed of the compacted table "
              f"({'OK' if ok else 'BELOW TARGET'}, target >= {r['target_min']}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
