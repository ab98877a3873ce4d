"""Write / upsert / merge-on-read benchmark: raw pyarrow vs our engine vs pypaimon 2.1.0, side by side in one run.

Workload (numpy, seeded): ``--rows`` rows (default 1,000,000) with a BIGINT key ``id`` plus INT, DOUBLE, STRING
(10-20 chars), DATE, DECIMAL(10,2), TIMESTAMP(6) and BOOLEAN columns, written into a primary-key table with
``bucket=4`` in one commit; then an upsert of ``--upsert-rows`` rows (default rows/5: half existing keys, half new)
in one commit; then a full merge-on-read of the latest snapshot.

Systems:
  pyarrow   baseline: ``pq.write_table`` (zstd) of the same rows, ``pq.write_table`` of the upsert rows to a second
            file (plain append, no merging), ``pq.read_table`` of the first file.
  engine    ``table_engine`` (this project).
  pypaimon  pypaimon 2.1.0 in its own venv via ``tests/interop/pypaimon_driver.py bench``; the times are measured
            inside the pypaimon process (no interpreter start-up, no IPC transfer).

Best of ``--repeats`` (default 3) runs for pyarrow and the engine, ``--pypaimon-repeats`` (default 1) for pypaimon.
Throughput = rows handled by the phase / best wall seconds; ratios = system throughput / pyarrow throughput.

  python benchmarks/bench_write_read.py [--rows 1000000] [--out BENCHMARKS-latest.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parents[1]
DRIVER = REPO_ROOT / "tests" / "interop" / "pypaimon_driver.py"
RESULT_PREFIX = "@@RESULT@@ "
TABLE = "bench.t"
PHASES = ("write", "upsert", "read")

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("qty", pa.int32()),
        pa.field("price", pa.float64()),
        pa.field("name", pa.string()),
        pa.field("day", pa.date32()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("ts", pa.timestamp("us")),
        pa.field("flag", pa.bool_()),
    ]
)

_ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", dtype=np.uint8)


# ------------------------------------------------------------------------------------------------------------ data


def _strings(rng: np.random.Generator, n: int, low: int = 10, high: int = 20) -> pa.Array:
    lengths = rng.integers(low, high + 1, n).astype(np.int32)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = _ALPHABET[rng.integers(0, len(_ALPHABET), int(offsets[-1]))]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes()))


def _decimal_10_2(rng: np.random.Generator, n: int) -> pa.Array:
    unscaled = rng.integers(-(10**10) + 1, 10**10, n, dtype=np.int64)
    words = np.empty((n, 2), dtype=np.int64)  # decimal128: 16-byte little-endian two's complement
    words[:, 0] = unscaled
    words[:, 1] = np.where(unscaled < 0, -1, 0)
    return pa.Array.from_buffers(pa.decimal128(10, 2), n, [None, pa.py_buffer(words.tobytes())])


def make_rows(rng: np.random.Generator, ids: np.ndarray) -> pa.Table:
    n = len(ids)
    epoch_us = rng.integers(1_577_836_800_000_000, 1_893_456_000_000_000, n, dtype=np.int64)  # 2020 .. 2030
    columns = [
        pa.array(ids, type=pa.int64()),
        pa.array(rng.integers(-(2**31), 2**31, n, dtype=np.int32)),
        pa.array(rng.standard_normal(n) * 1000.0),
        _strings(rng, n),
        pa.array(rng.integers(0, 25_000, n, dtype=np.int32)).cast(pa.date32()),
        _decimal_10_2(rng, n),
        pa.array(epoch_us).cast(pa.timestamp("us")),
        pa.array(rng.integers(0, 2, n).astype(bool)),
    ]
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def make_workload(rows: int, upsert_rows: int, seed: int) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    base = make_rows(rng, rng.permutation(rows).astype(np.int64))
    existing = rng.choice(rows, size=upsert_rows // 2, replace=False).astype(np.int64)
    new = np.arange(rows, rows + (upsert_rows - len(existing)), dtype=np.int64)
    upsert_ids = np.concatenate([existing, new])
    rng.shuffle(upsert_ids)
    return base, make_rows(rng, upsert_ids)


# ------------------------------------------------------------------------------------------------------- systems


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def run_pyarrow(base: pa.Table, upsert: pa.Table, work: Path) -> dict[str, Any]:
    run_dir = Path(tempfile.mkdtemp(dir=work, prefix="pyarrow-"))
    try:
        path, path2 = run_dir / "base.parquet", run_dir / "upsert.parquet"
        write_s, _ = _timed(lambda: pq.write_table(base, path, compression="zstd"))
        upsert_s, _ = _timed(lambda: pq.write_table(upsert, path2, compression="zstd"))
        read_s, result = _timed(lambda: pq.read_table(path))
        return {"write_s": write_s, "upsert_s": upsert_s, "read_s": read_s, "rows_read": result.num_rows}
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def run_engine(base: pa.Table, upsert: pa.Table, work: Path, bucket: int) -> dict[str, Any]:
    from table_engine import Catalog

    warehouse = Path(tempfile.mkdtemp(dir=work, prefix="engine-"))
    try:
        table = Catalog(str(warehouse)).create_table(
            TABLE, schema=SCHEMA, primary_keys=["id"], options={"bucket": str(bucket)}
        )
        write_s, _ = _timed(lambda: table.write(base))
        upsert_s, _ = _timed(lambda: table.write(upsert))
        read_s, result = _timed(lambda: Catalog(str(warehouse)).get_table(TABLE).read())
        return {"write_s": write_s, "upsert_s": upsert_s, "read_s": read_s, "rows_read": result.num_rows}
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def _write_ipc(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _pypaimon_python() -> str:
    sys.path.insert(0, str(REPO_ROOT / "tests" / "interop"))
    try:
        from pypaimon_env import ensure_pypaimon_python
    finally:
        sys.path.pop(0)
    return str(ensure_pypaimon_python())


def run_pypaimon(python: str, data_file: Path, upsert_file: Path, work: Path, bucket: int) -> dict[str, Any]:
    warehouse = Path(tempfile.mkdtemp(dir=work, prefix="pypaimon-"))
    spec = {
        "command": "bench",
        "spec_data": {
            "warehouse": str(warehouse),
            "table": TABLE,
            "data": str(data_file),
            "upsert": str(upsert_file),
            "primary_keys": ["id"],
            "options": {"bucket": str(bucket)},
        },
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        proc = subprocess.run(
            [python, str(DRIVER), "--json", json.dumps(spec)],
            capture_output=True,
            text=True,
            env=env,
            timeout=3600,
            check=False,
        )
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"pypaimon bench failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    result: dict[str, Any] = json.loads(lines[-1][len(RESULT_PREFIX) :])
    return result


def best_of(runs: list[dict[str, Any]], rows: dict[str, int]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for phase in PHASES:
        times = [run[f"{phase}_s"] for run in runs]
        best = min(times)
        summary[phase] = {
            "seconds": best,
            "all_seconds": times,
            "rows": rows[phase],
            "rows_per_s": rows[phase] / best if best > 0 else float("inf"),
        }
    summary["rows_read"] = runs[0]["rows_read"]
    return summary


# ------------------------------------------------------------------------------------------------------ reporting


def machine_info(pypaimon_pyarrow: str | None) -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import table_engine

        engine_version = getattr(table_engine, "__version__", "unknown")
    except ImportError:
        engine_version = None
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyarrow": pa.__version__,
        "numpy": np.__version__,
        "engine_version": engine_version,
        "pypaimon": "2.1.0",
        "pypaimon_pyarrow": pypaimon_pyarrow,
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"Benchmark: {report['params']['rows']:,} rows write, {report['params']['upsert_rows']:,} rows upsert, "
        f"merge-on-read (PK table, bucket={report['params']['bucket']})",
        "",
        "| system | phase | rows | best s | rows/s | throughput vs pyarrow | runs |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    baseline = report["results"].get("pyarrow")
    for system, summary in report["results"].items():
        for phase in PHASES:
            entry = summary[phase]
            ratio = ""
            if baseline is not None:
                ratio = f"{entry['rows_per_s'] / baseline[phase]['rows_per_s']:.3f}x"
            lines.append(
                f"| {system} | {phase} | {entry['rows']:,} | {entry['seconds']:.3f} | {entry['rows_per_s']:,.0f} "
                f"| {ratio} | {len(entry['all_seconds'])} |"
            )
    m = report["machine"]
    lines += [
        "",
        f"Machine: {m['cpu_model']}, {m['cores']} cores; Python {m['python']}, pyarrow {m['pyarrow']} "
        f"(pypaimon {m['pypaimon']} on pyarrow {m['pypaimon_pyarrow']}); {m['date']}",
        "pyarrow baseline: write = pq.write_table(zstd); upsert = pq.write_table of the upsert rows to a second file "
        "(no merge); read = pq.read_table of the base file.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--upsert-rows", type=int, default=None, help="default: rows / 5")
    parser.add_argument("--bucket", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3, help="runs for pyarrow and the engine (best is reported)")
    parser.add_argument("--pypaimon-repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--skip-engine", action="store_true")
    parser.add_argument("--skip-pypaimon", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "BENCHMARKS-latest.json")
    args = parser.parse_args(argv)
    upsert_rows = args.upsert_rows if args.upsert_rows is not None else args.rows // 5

    base, upsert = make_workload(args.rows, upsert_rows, args.seed)
    expected_rows = args.rows + (upsert_rows - upsert_rows // 2)
    work = Path(tempfile.mkdtemp(prefix="bench-write-read-"))
    results: dict[str, Any] = {}
    pypaimon_pyarrow = None
    try:
        runs = []
        for i in range(args.repeats):
            runs.append(run_pyarrow(base, upsert, work))
            print(f"pyarrow run {i + 1}: {runs[-1]}", file=sys.stderr)
        results["pyarrow"] = best_of(runs, {"write": args.rows, "upsert": upsert_rows, "read": args.rows})

        if not args.skip_engine:
            runs = []
            for i in range(args.repeats):
                runs.append(run_engine(base, upsert, work, args.bucket))
                print(f"engine run {i + 1}: {runs[-1]}", file=sys.stderr)
                if runs[-1]["rows_read"] != expected_rows:
                    raise RuntimeError(f"engine read {runs[-1]['rows_read']} rows, expected {expected_rows}")
            results["engine"] = best_of(runs, {"write": args.rows, "upsert": upsert_rows, "read": expected_rows})

        if not args.skip_pypaimon:
            python = _pypaimon_python()
            data_file, upsert_file = work / "data.arrow", work / "upsert.arrow"
            _write_ipc(base, data_file)
            _write_ipc(upsert, upsert_file)
            runs = []
            for i in range(args.pypaimon_repeats):
                runs.append(run_pypaimon(python, data_file, upsert_file, work, args.bucket))
                print(f"pypaimon run {i + 1}: {runs[-1]}", file=sys.stderr)
                if runs[-1]["rows_read"] != expected_rows:
                    raise RuntimeError(f"pypaimon read {runs[-1]['rows_read']} rows, expected {expected_rows}")
            pypaimon_pyarrow = runs[0].get("pyarrow_version")
            results["pypaimon"] = best_of(runs, {"write": args.rows, "upsert": upsert_rows, "read": expected_rows})
    finally:
        shutil.rmtree(work, ignore_errors=True)

    ratios: dict[str, dict[str, float]] = {}
    for system in ("engine", "pypaimon"):
        if system in results:
            ratios[f"{system}/pyarrow"] = {
                phase: results[system][phase]["rows_per_s"] / results["pyarrow"][phase]["rows_per_s"]
                for phase in PHASES
            }
    if "engine" in results and "pypaimon" in results:
        ratios["engine/pypaimon"] = {
            phase: results["engine"][phase]["rows_per_s"] / results["pypaimon"][phase]["rows_per_s"] for phase in PHASES
        }
    report = {
        "benchmark": "bench_write_read",
        "params": {
            "rows": args.rows,
            "upsert_rows": upsert_rows,
            "upsert_existing_keys": upsert_rows // 2,
            "bucket": args.bucket,
            "repeats": args.repeats,
            "pypaimon_repeats": args.pypaimon_repeats,
            "seed": args.seed,
            "schema": [f"{f.name}: {f.type}{'' if f.nullable else ' not null'}" for f in SCHEMA],
            "expected_rows_after_upsert": expected_rows,
        },
        "machine": machine_info(pypaimon_pyarrow),
        "results": results,
        "ratios": ratios,
    }
    print(markdown(report))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
