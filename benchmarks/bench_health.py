"""Table health on a table of many files (issue 28): ``Table.maintenance.health()`` reads metadata only.

The table is built with :func:`scale_tables.build_many_files_table` (``--files`` data files, default 100,000, over
``--partitions`` x ``--buckets``, committed in 50 commits through the engine's committer; only metadata is written,
the data files do not exist, which health never notices since it reads no data file). Timed, best of
``--repeats``: the whole table's health; one partition's (``p=7``: manifests of other partitions are skipped while
decoding); the health with the orphan listing (every manifest of every snapshot read, the table listed); and, for
scale, ``Table.plan()`` of the whole table (the same manifests, decoded into splits).

  python benchmarks/bench_health.py [--files 100000] [--partitions 1000] [--buckets 4] [--repeats 3] [--out F.json]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import finish_report  # noqa: E402
from scale_tables import build_many_files_table  # noqa: E402


def best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    seconds, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        seconds = min(seconds, time.perf_counter() - start)
    return seconds, out


def bench(root: Path, files: int, partitions: int, buckets: int, repeats: int) -> dict[str, Any]:
    start = time.perf_counter()
    table = build_many_files_table(str(root / "w"), partitions, buckets, files)
    build_s = time.perf_counter() - start
    whole_s, h = best(table.health, repeats)
    assert h.files == files and len(h.buckets) == partitions * buckets, (h.files, len(h.buckets))
    part_s, hp = best(lambda: table.maintenance.health("p=7"), repeats)
    assert hp.files == files // partitions
    orphans_s, ho = best(lambda: table.maintenance.health(orphans=True), 1)
    assert ho.orphans is not None and ho.orphans.files == 0
    plan_s, _ = best(table.plan, repeats)
    return {"files": files, "partitions": partitions, "buckets": buckets, "build_s": round(build_s, 1),
            "health_s": round(whole_s, 3), "health_one_partition_s": round(part_s, 3),
            "health_with_orphans_s": round(orphans_s, 3), "plan_s": round(plan_s, 3)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--buckets", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out")
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-health-"))
    try:
        result = bench(root, a.files, a.partitions, a.buckets, a.repeats)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    finish_report(result, a.out)
    print(f"health of a table of {result['files']} files: {result['health_s']} s "
          f"(one partition {result['health_one_partition_s']} s; plan {result['plan_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
