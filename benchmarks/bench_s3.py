"""S3 benchmark: our engine vs pyarrow writing and reading the same Parquet through the same local S3 API server, side
by side in one run; and the requests one small commit costs in a table with 10 and with 1,000 snapshots.

Server: moto's standalone server on 127.0.0.1 (``tests/s3_server.py``, as in the tests), one bucket.
Workload: ``--rows`` rows (default 1,000,000) of the write/read benchmark's schema (BIGINT key plus INT, DOUBLE,
STRING, DATE, DECIMAL, TIMESTAMP, BOOLEAN; numpy, seeded), written into an append table in one commit, then read.

Systems:
  pyarrow   baseline: ``pq.write_table`` (zstd) to ``pyarrow.fs.S3FileSystem`` (endpoint_override, scheme http, path
            style), ``pq.read_table`` from it.
  engine    ``table_engine`` (this project) on an ``s3://`` warehouse: ``Table.write`` (one commit: data file,
            manifest, manifest lists, snapshot) and ``Table.read`` (snapshot, manifests, data file).

Best of ``--repeats`` (default 3); ratios = engine throughput / pyarrow throughput (issue 13 targets: read >= 0.8x,
write >= 0.4x). Requests per commit: one 1-row commit into a ``write-only`` table (append and primary key) with 10
and with 1,000 snapshots, counted by operation by the loopback proxy of the tests (``tests/fault_proxy.py``).

  python benchmarks/bench_s3.py [--rows 1000000] [--out .bench/s3.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO_ROOT), str(REPO_ROOT / "benchmarks")]

from bench_write_read import SCHEMA, make_rows  # noqa: E402

from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server  # noqa: E402

PHASES = ("write", "read")
TARGETS = {"write": 0.4, "read": 0.8}


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def run_pyarrow(server: S3Server, bucket: str, data: pa.Table) -> dict[str, float]:
    from pyarrow import fs

    s3 = fs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION,
                         endpoint_override=f"127.0.0.1:{server.port}", scheme="http", force_virtual_addressing=False)
    path = f"{bucket}/pyarrow-{uuid.uuid4().hex[:8]}/data.parquet"
    write_s, _ = _timed(lambda: pq.write_table(data, path, filesystem=s3, compression="zstd"))
    read_s, got = _timed(lambda: pq.read_table(path, filesystem=s3))
    assert got.num_rows == data.num_rows
    return {"write_s": write_s, "read_s": read_s}


def run_engine(server: S3Server, bucket: str, data: pa.Table) -> dict[str, float]:
    from table_engine import Catalog

    cat = Catalog(f"s3://{bucket}/engine-{uuid.uuid4().hex[:8]}", server.options())
    table = cat.create_table("bench.t", data.schema)
    write_s, _ = _timed(lambda: table.write(data))
    read_s, got = _timed(lambda: table.read())
    assert got.num_rows == data.num_rows
    return {"write_s": write_s, "read_s": read_s}


def requests_per_commit(server: S3Server, bucket: str) -> dict[str, dict[str, dict[str, int]]]:
    """{table kind: {"10": counts by operation, "1000": counts}} of one 1-row commit."""
    from table_engine import Catalog
    from tests.fault_proxy import FaultProxy
    from tests.table_engine.store.committing.s3_support import grow_snapshots

    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    out: dict[str, dict[str, dict[str, int]]] = {}
    with FaultProxy(server.endpoint) as proxy:
        for kind, pk in (("append", False), ("primary key", True)):
            out[kind] = {}
            for snapshots in (10, 1000):
                cat = Catalog(f"s3://{bucket}/requests-{uuid.uuid4().hex[:8]}", server.options(proxy.endpoint))
                opts = {"write-only": "true", **({"bucket": "1"} if pk else {})}
                t = cat.create_table("bench.t", schema, primary_keys=["id"] if pk else [], options=opts)
                grow_snapshots(t, snapshots)
                proxy.reset()
                t.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["x"]}))
                counts = proxy.counts()
                out[kind][str(snapshots)] = {op: counts.get(op, 0) for op in ("PUT", "GET", "LIST", "HEAD", "DELETE")}
    return out


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    import obstore

    return {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "cpu_model": cpu, "cores": os.cpu_count(),
            "python": platform.python_version(), "pyarrow": pa.__version__, "numpy": np.__version__,
            "obstore": getattr(obstore, "__version__", "?"), "load_average": os.getloadavg()}


def markdown(report: dict[str, Any]) -> str:
    rows = report["params"]["rows"]
    lines = [f"S3 (moto on 127.0.0.1): {rows:,} rows, append table, one commit; best of "
             f"{report['params']['repeats']}", "",
             "| phase | pyarrow s | engine s | engine vs pyarrow | target |", "| --- | ---: | ---: | ---: | ---: |"]
    for phase in PHASES:
        p, e = report["results"]["pyarrow"][phase], report["results"]["engine"][phase]
        lines.append(f"| {phase} | {p:.3f} | {e:.3f} | {p / e:.3f}x | >= {TARGETS[phase]}x |")
    lines += ["", "Requests of one 1-row commit (`write-only` table):", "",
              "| table | snapshots | PUT | GET | LIST | HEAD | DELETE | total |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind, by_count in report["requests_per_commit"].items():
        for snapshots, c in by_count.items():
            lines.append(f"| {kind} | {int(snapshots):,} | {c['PUT']} | {c['GET']} | {c['LIST']} | {c['HEAD']} | "
                         f"{c['DELETE']} | {sum(c.values())} |")
    m = report["machine"]
    lines += ["", f"Machine: {m['cpu_model']}, {m['cores']} cores, load {m['load_average']}; Python {m['python']}, "
              f"pyarrow {m['pyarrow']}, obstore {m['obstore']}; {m['date']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--skip-requests", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    data = make_rows(rng, rng.permutation(args.rows).astype(np.int64))
    assert data.schema == SCHEMA
    server = S3Server().start()
    try:
        bucket = server.new_bucket()
        runs: dict[str, list[dict[str, float]]] = {"pyarrow": [], "engine": []}
        for i in range(args.repeats):  # alternate, so that both see the same machine load
            runs["pyarrow"].append(run_pyarrow(server, bucket, data))
            runs["engine"].append(run_engine(server, bucket, data))
            print(f"run {i + 1}: pyarrow {runs['pyarrow'][-1]} engine {runs['engine'][-1]}", file=sys.stderr)
        results = {system: {phase: min(r[f"{phase}_s"] for r in rs) for phase in PHASES}
                   for system, rs in runs.items()}
        requests = {} if args.skip_requests else requests_per_commit(server, bucket)
    finally:
        server.stop()
    report = {"params": {"rows": args.rows, "repeats": args.repeats, "seed": args.seed}, "results": results,
              "all_runs": runs,
              "ratios": {phase: results["pyarrow"][phase] / results["engine"][phase] for phase in PHASES},
              "requests_per_commit": requests, "machine": machine_info()}
    print(markdown(report))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
