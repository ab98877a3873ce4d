"""The engine against Paimon Java 1.0 in its own JVM, on the same rows and table options (issue 43).

Measures (each engine and Java on its own warehouse; schema ``id BIGINT NOT NULL`` (primary key), ``qty BIGINT``,
``price DOUBLE``, ``note STRING``; ``bucket = 4``, Parquet, zstd):

  write    ``--rows`` rows (distinct keys, shuffled) into a new table in one commit (engine: ``Table.write``;
           Java: ``BatchWriteBuilder`` -> ``write`` every row -> ``commit``)
  mor      a full read of a table of 5 sorted runs (5 commits of ``rows/5`` sorted keys drawn from ``rows/2``, so
           runs overlap; deduplicate; ``write-only`` so nothing compacts them); engine: ``Table.read``; Java: plan +
           read every row, every field touched
  compact  a full compaction of such a table (``copy(write-only=false)``: engine ``maintenance.compact(full=True)``,
           Java ``BatchTableWrite.compact(partition, bucket, true)`` for every bucket, then commit)
  expire   expiry of ``--expired`` (100) snapshots of a table of ``--retain`` + 100 commits, keeping ``--retain``
           (retain-min = retain-max, time retained 0, no delete limit)

What is timed: only the operation, on each side in its own process (the engine with ``time.perf_counter``, Java
with ``System.nanoTime`` inside one long-lived JVM per core count, benchmarks/java/PaimonBench.java). The rows are
generated once (numpy, ``--seed``) into Arrow IPC files that both sides load and convert before any timing; table
creation and the set-up commits are not timed. Warm-up: every case first runs ``--warmup`` times (default 2) on a
smaller data set (``--warmup-rows``, default rows/10) on both sides; those runs are reported apart and excluded.
Then ``--repeat`` (default 5) timed repetitions; the figures are MEDIANS. Core pinning: each side's process is
confined to the same N cores (CPU affinity) and sizes itself for N cores: the JVM with
``-XX:ActiveProcessorCount=N``; the engine (which has no thread option) by seeing ``os.cpu_count() == N`` before
``table_engine`` is imported (its CPU pools are ``min(4, cpus)``, its I/O pool ``max(8, 4 * cpus)``) and pyarrow's
CPU and I/O pools set to N. First N = 1, then 2 (``--cores``).

Ratio convention: ``ratio = Java median seconds / engine median seconds``; > 1 means the engine is faster.
Check (not timed): after each case the engine reads the last table each side made: both must hold the expected
count of rows and the same rows (plus: a COMPACT snapshot after compaction, ``--retain`` snapshots left after expiry).

  python benchmarks/bench_vs_java.py [--rows 1000000] [--repeat 5] [--warmup 2] [--cores 1,2] [--out F.json]
  (PAIMON_JAVA_PYTHON names the interpreter of the paimon-python-ali wheel, as for tests/interop.)
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
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.interop.paimon_java import paimon_type  # noqa: E402  (imports no table_engine: the worker pins first)

JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "PaimonBench.java"
JAVA_CLASS = "PaimonBench"
JVM_FLAGS = ["--add-opens=java.base/java.nio=ALL-UNNAMED"]  # Arrow Java's memory access (loading the rows)
RESULT_PREFIX = "@@RESULT@@ "
DATABASE = "bench"
CASES = ("write", "mor", "compact", "expire")
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("qty", pa.int64()),
                    pa.field("price", pa.float64()), pa.field("note", pa.string())])
PRIMARY_KEYS = ["id"]
WRITE_OPTIONS = {"bucket": "4", "file.format": "parquet", "file.compression": "zstd"}
RUN_OPTIONS = {**WRITE_OPTIONS, "write-only": "true"}
"""The five-run and expiry tables: ``write-only`` keeps every commit's sorted run (no compaction, no commit-time
expiry) on both sides, so both start each timed operation from the same table shape."""
RUNS = 5
MAX_DELETES = 2**31 - 1
RATIO = "java_median_s / engine_median_s (> 1: the engine is faster)"


class BenchError(RuntimeError):
    """A side failed, or the engine and Java did not end with the expected rows."""


# ------------------------------------------------------------------------------------------------------ the rows


@dataclass
class DataSet:
    """The rows of every case, one ``pa.Table`` per commit."""

    write: pa.Table
    runs: list[pa.Table]
    commits: list[pa.Table]

    def expected_rows(self) -> dict[str, int]:
        distinct = len(np.unique(np.concatenate([r.column("id").to_numpy() for r in self.runs])))
        return {"write": self.write.num_rows, "mor": distinct, "compact": distinct,
                "expire": sum(c.num_rows for c in self.commits)}

    def save(self, directory: Path) -> dict[str, str]:
        """One Arrow IPC file per case, one record batch per commit; the paths by case."""
        directory.mkdir(parents=True, exist_ok=True)
        files = {"write": [self.write], "runs": self.runs, "expire": self.commits}
        out = {}
        for name, tables in files.items():
            path = directory / f"{name}.arrow"
            with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, SCHEMA) as writer:
                for t in tables:
                    writer.write_batch(t.combine_chunks().to_batches()[0])
            out[name] = str(path)
        return out


def _rows(rng: np.random.Generator, ids: np.ndarray[Any, Any]) -> pa.Table:
    n = len(ids)
    qty = pa.array(rng.integers(0, 1000, n), mask=rng.random(n) < 0.1)
    price = pa.array(rng.random(n) * 100)
    note = pa.array(np.char.add("note-", (ids % 977).astype(str)), pa.string())
    return pa.Table.from_arrays([pa.array(ids.astype(np.int64)), qty, price, note], schema=SCHEMA)


def make_data(rows: int, seed: int, expired: int, retain: int) -> DataSet:
    """Deterministic rows (numpy ``seed``): ``rows`` shuffled distinct keys; 5 sorted runs of ``rows/5`` keys from
    ``rows/2``; ``retain + expired`` commits of ``rows/expired`` new keys each."""
    rng = np.random.default_rng(seed)
    write = _rows(rng, rng.permutation(rows))
    per_run = max(1, rows // RUNS)
    space = max(per_run, rows // 2)
    runs = [_rows(rng, np.sort(rng.choice(space, per_run, replace=False))) for _ in range(RUNS)]
    per_commit = max(1, rows // expired)
    commits = [_rows(rng, np.arange(i * per_commit, (i + 1) * per_commit)) for i in range(retain + expired)]
    return DataSet(write, runs, commits)


def load_commits(path: str) -> list[pa.Table]:
    """The record batches of an IPC file of :meth:`DataSet.save`, one table each."""
    with pa.memory_map(path, "r") as source:
        reader = ipc.open_file(source)
        return [pa.Table.from_batches([reader.get_batch(i)]) for i in range(reader.num_record_batches)]


# -------------------------------------------------------------------------------------------- the two processes


def _confine(cpus: list[int]) -> Callable[[], None]:
    def preexec() -> None:
        os.sched_setaffinity(0, cpus)
    return preexec


def _result(proc: subprocess.CompletedProcess[str], who: str) -> dict[str, Any]:
    lines = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if proc.returncode != 0 or not lines:
        raise BenchError(f"{who} failed (exit {proc.returncode})\n--- stdout\n{proc.stdout[-4000:]}"
                         f"\n--- stderr\n{proc.stderr[-8000:]}")
    parsed: dict[str, Any] = json.loads(lines[-1][len(RESULT_PREFIX):])
    return parsed


def bridge_jar() -> Path:
    """The paimon-python-ali jar (Paimon 1.0 + Hadoop) of tests/interop, its venv made if needed."""
    from tests.interop.paimon_java_env import find_bridge_jar

    return find_bridge_jar()


def paimon_version(jar: Path) -> str:
    with zipfile.ZipFile(jar) as z:
        props = z.read("META-INF/maven/org.apache.paimon/paimon-core/pom.properties").decode()
    return next((line.split("=", 1)[1] for line in props.splitlines() if line.startswith("version=")), "?")


def compile_bench(jar: Path, out_dir: Path, timeout: float = 300.0) -> Path:
    """``javac`` PaimonBench.java against ``jar`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["javac", "-nowarn", "-encoding", "UTF-8", "-cp", str(jar), "-d", str(out_dir), str(JAVA_SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise BenchError(f"javac failed ({proc.returncode}):\n{proc.stderr[-8000:]}")
    return out_dir


def run_java(jar: Path, classes: Path, spec: dict[str, Any], cpus: list[int], heap: str, tmp: Path,
             timeout: float) -> dict[str, Any]:
    """All cases in ONE JVM sized for and confined to ``cpus``; its result with seconds instead of nanos."""
    tmp.mkdir(parents=True, exist_ok=True)
    cmd = ["java", *JVM_FLAGS, f"-XX:ActiveProcessorCount={len(cpus)}", f"-Xms{heap}", f"-Xmx{heap}",
           f"-Djava.io.tmpdir={tmp}", "-cp", f"{jar}:{classes}", JAVA_CLASS, "-"]
    proc = subprocess.run(cmd, input=json.dumps(spec), capture_output=True, text=True, timeout=timeout,
                          check=False, cwd=str(tmp), preexec_fn=_confine(cpus))
    result = _result(proc, "Paimon Java")
    for case in result["cases"].values():
        case["warmup_s"] = [ns / 1e9 for ns in case.pop("warmup_ns")]
        case["s"] = [ns / 1e9 for ns in case.pop("ns")]
    result["jvm_command_flags"] = cmd[1:cmd.index("-cp")]
    return result


def run_engine(spec: dict[str, Any], cpus: list[int], tmp: Path, timeout: float) -> dict[str, Any]:
    """All cases in one engine process (this script's ``--engine-worker``) confined to and sized for ``cpus``."""
    tmp.mkdir(parents=True, exist_ok=True)
    spec_path = tmp / "engine-spec.json"
    spec_path.write_text(json.dumps({**spec, "cpus": cpus}))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--engine-worker", str(spec_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=str(ROOT), preexec_fn=_confine(cpus))
    return _result(proc, "the engine worker")


# ---------------------------------------------------------------------------------------------- the engine side


def pin_engine(cpus: list[int]) -> dict[str, int]:
    """Confine this process to ``cpus`` and make the engine size its pools for ``len(cpus)`` cores: it has no option
    for that, it reads ``os.cpu_count()`` when its modules are imported, so this must run before ``table_engine`` is
    imported. Returns the sizes in effect (read back from the engine's modules)."""
    if any(name == "table_engine" or name.startswith("table_engine.") for name in sys.modules):
        raise BenchError("pin_engine must run before table_engine is imported")
    n = len(cpus)
    os.sched_setaffinity(0, cpus)
    os.cpu_count = lambda: n  # what the JVM's -XX:ActiveProcessorCount does for Java
    pa.set_cpu_count(n)
    pa.set_io_thread_count(n)
    from table_engine.io import executor
    from table_engine.store.compaction import compact
    from table_engine.store.reading import read
    from table_engine.store.writing import bucket_writer

    return {"cpus": n, "arrow_cpu_threads": pa.cpu_count(), "arrow_io_threads": pa.io_thread_count(),
            "read_threads": getattr(read, "_READ_THREADS", -1),
            "write_threads": getattr(bucket_writer, "_WRITE_THREADS", -1),
            "compact_threads": getattr(compact, "_COMPACT_THREADS", -1),
            "io_pool_threads": executor.WORKERS}


class EngineBench:
    """The engine's half of PaimonBench.java: the same cases, set-ups and timing boundaries."""

    def __init__(self, spec: dict[str, Any]) -> None:
        from table_engine import Catalog

        self.spec = spec
        self.catalog = Catalog(spec["warehouse"])
        self.retain = int(spec["retain"])

    def create(self, name: str, options: dict[str, str]) -> Any:
        return self.catalog.create_table(f"{DATABASE}.{name}", SCHEMA, primary_keys=PRIMARY_KEYS, options=options)

    def runs_table(self, name: str, commits: list[pa.Table]) -> Any:
        table = self.create(name, self.spec["runOptions"])
        for data in commits:
            table.write(data)
        return table

    def write(self, name: str, data: pa.Table) -> float:
        table = self.create(name, self.spec["writeOptions"])
        start = time.perf_counter()
        table.write(data)
        return time.perf_counter() - start

    @staticmethod
    def read_all(table: Any) -> tuple[float, int]:
        start = time.perf_counter()
        rows = table.read()
        return time.perf_counter() - start, int(rows.num_rows)

    @staticmethod
    def compact(table: Any) -> float:
        start = time.perf_counter()
        table.copy({"write-only": "false"}).maintenance.compact(full=True)
        return time.perf_counter() - start

    def expire(self, table: Any) -> tuple[float, int]:
        start = time.perf_counter()
        result = table.expire_snapshots(retain_min=self.retain, retain_max=self.retain, time_retained=0,
                                        max_deletes=MAX_DELETES)
        return time.perf_counter() - start, len(result.expired_snapshot_ids)

    def run_case(self, name: str, warm: dict[str, list[pa.Table]], timed: dict[str, list[pa.Table]]) -> dict[str, Any]:
        out: dict[str, Any] = {"warmup_s": [], "s": [], "tables": [], "rows": [], "expired": []}
        warmup, repeat = int(self.spec["warmup"]), int(self.spec["repeat"])
        if name == "mor":  # reads do not change the table: one table per data set
            w = self.runs_table("mor_w", warm["runs"])
            out["warmup_s"] = [self.read_all(w)[0] for _ in range(warmup)]
            t = self.runs_table("mor_r", timed["runs"])
            for _ in range(repeat):
                seconds, rows = self.read_all(t)
                out["s"].append(seconds)
                out["rows"].append(rows)
            out["tables"].append("mor_r")
            return out
        for i in range(warmup + repeat):
            is_warm = i < warmup
            table = f"{name}_w{i}" if is_warm else f"{name}_r{i - warmup}"
            data = warm if is_warm else timed
            if name == "write":
                seconds = self.write(table, data["write"][0])
            elif name == "compact":
                seconds = self.compact(self.runs_table(table, data["runs"]))
            elif name == "expire":
                seconds, expired = self.expire(self.runs_table(table, data["expire"]))
                if not is_warm:
                    out["expired"].append(expired)
            else:
                raise BenchError(f"unknown case {name}")
            out["warmup_s" if is_warm else "s"].append(seconds)
            if not is_warm:
                out["tables"].append(table)
        return out


def engine_worker(spec_path: str) -> int:
    """The engine process: pin, load the rows, run the cases, print the result line."""
    spec = json.loads(Path(spec_path).read_text())
    threads = pin_engine([int(c) for c in spec["cpus"]])
    warm = {k: load_commits(v) for k, v in spec["warmupData"].items()}
    timed = {k: load_commits(v) for k, v in spec["timedData"].items()}
    bench = EngineBench(spec)
    cases = {name: bench.run_case(name, warm, timed) for name in spec["cases"]}
    print(RESULT_PREFIX + json.dumps({"threads": threads, "cases": cases}), flush=True)
    return 0


# ------------------------------------------------------------------------------------------ checks and results


def check(case: str, java_wh: Path, engine_wh: Path, java: dict[str, Any], engine: dict[str, Any],
          expected: int, retain: int, expired: int) -> dict[str, Any]:
    """Untimed: the engine reads the last table of each side; both must hold ``expected`` rows, the same rows, and
    the case's own invariant."""
    from table_engine import Catalog

    out: dict[str, Any] = {"expected_rows": expected}
    problems = []
    contents = []
    for side, wh, res in (("java", java_wh, java), ("engine", engine_wh, engine)):
        table = Catalog(str(wh)).get_table(f"{DATABASE}.{res['tables'][-1]}")
        data = table.read().sort_by("id")
        contents.append(data)
        rows = data.num_rows
        out[f"{side}_table_rows_read_by_engine"] = rows
        if rows != expected:
            problems.append(f"{side} table has {rows} rows")
        if case == "mor" and any(r != expected for r in res["rows"]):
            problems.append(f"{side}'s own reads returned {res['rows']} rows")
        if case == "compact":
            latest = table.latest_snapshot()
            kind = str(latest.commit_kind) if latest is not None else "no snapshot"
            if kind != "COMPACT":
                problems.append(f"{side}'s last snapshot is {kind}, not COMPACT")
        if case == "expire":
            first, last = table.earliest_snapshot_id(), table.latest_snapshot_id()
            kept = 0 if first is None or last is None else last - first + 1
            out[f"{side}_snapshots_left"] = kept
            if kept != retain or any(e != expired for e in res["expired"]):
                problems.append(f"{side} kept {kept} snapshots, expired {res['expired']}")
    out["same_rows"] = contents[0].equals(contents[1])
    if not out["same_rows"]:
        problems.append("the two tables hold different rows")
    out["ok"] = not problems
    out["problems"] = problems
    return out


def measure(java: dict[str, Any], engine: dict[str, Any]) -> dict[str, Any]:
    java_s, engine_s = statistics.median(java["s"]), statistics.median(engine["s"])
    return {"engine_median_s": engine_s, "java_median_s": java_s, "ratio": java_s / engine_s if engine_s else None,
            "engine_s": engine["s"], "java_s": java["s"], "engine_warmup_s": engine["warmup_s"],
            "java_warmup_s": java["warmup_s"]}


def markdown(result: dict[str, Any]) -> str:
    lines = [f"{result['rows']:,} rows; medians of {result['repeat']} after {result['warmup']} warm-up runs on "
             f"{result['warmup_rows']:,} rows; Paimon Java {result['paimon_version']}; ratio = {RATIO}", "",
             "| measure | cores | engine s | Java s | ratio | rows check |", "|---|---:|---:|---:|---:|---|"]
    for config in result["configs"]:
        for case, m in config["measures"].items():
            ok = "ok" if config["checks"][case]["ok"] else "FAILED"
            ratio = "-" if m["ratio"] is None else f"{m['ratio']:.2f}x"
            lines.append(f"| {case} | {config['cores']} | {m['engine_median_s']:.3f} | {m['java_median_s']:.3f} | "
                         f"{ratio} | {ok} |")
    return "\n".join(lines)


def run_config(n: int, args: argparse.Namespace, spec: dict[str, Any], expected: dict[str, int], jar: Path,
               classes: Path, work: Path) -> dict[str, Any]:
    available = sorted(os.sched_getaffinity(0))
    if n > len(available):
        raise BenchError(f"{n} cores asked, {len(available)} available")
    cpus = available[:n]
    java_wh, engine_wh = work / f"java-{n}", work / f"engine-{n}"
    start = time.perf_counter()
    java = run_java(jar, classes, {**spec, "warehouse": str(java_wh)}, cpus, args.java_heap, work / f"jvm-{n}",
                    args.timeout)
    middle = time.perf_counter()
    engine = run_engine({**spec, "warehouse": str(engine_wh)}, cpus, work / f"engine-tmp-{n}", args.timeout)
    process_s = {"java": middle - start, "engine": time.perf_counter() - middle}
    checks = {case: check(case, java_wh, engine_wh, java["cases"][case], engine["cases"][case], expected[case],
                          args.retain, args.expired) for case in spec["cases"]}
    measures = {case: measure(java["cases"][case], engine["cases"][case]) for case in spec["cases"]}
    return {"cores": n, "cpus": cpus, "jvm": java["jvm"], "engine_threads": engine["threads"],
            "process_wall_s": process_s, "measures": measures, "checks": checks}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--warmup-rows", type=int, default=None, help="default: max(1000, rows / 10)")
    ap.add_argument("--cores", default="1,2", help="core counts, in order (default 1,2)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--expired", type=int, default=100, help="snapshots the expiry case expires")
    ap.add_argument("--retain", type=int, default=10, help="snapshots the expiry keeps")
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--java-heap", default="4g")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per process")
    ap.add_argument("--work-dir", type=Path, default=None, help="kept; default: a temporary directory, removed")
    ap.add_argument("--out", type=Path, default=None, help="the JSON result")
    ap.add_argument("--engine-worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.engine_worker:
        return engine_worker(args.engine_worker)
    cases = [c for c in args.cases.split(",") if c]
    if unknown := sorted(set(cases) - set(CASES)):
        ap.error(f"unknown cases {unknown}")
    warmup_rows = args.warmup_rows or max(1000, args.rows // 10)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench-java-"))
    try:
        jar = bridge_jar()
        classes = compile_bench(jar, work / "classes")
        timed_data, warm_data = (make_data(n, args.seed + i, args.expired, args.retain)
                                 for i, n in enumerate((args.rows, warmup_rows)))
        spec = {"fields": [{"name": f.name, "type": paimon_type(f.type, f.nullable)} for f in SCHEMA],
                "primaryKeys": PRIMARY_KEYS, "writeOptions": WRITE_OPTIONS, "runOptions": RUN_OPTIONS,
                "cases": cases, "warmup": args.warmup, "repeat": args.repeat, "retain": args.retain,
                "timedData": timed_data.save(work / "data"), "warmupData": warm_data.save(work / "data-warmup")}
        expected = timed_data.expected_rows()
        result: dict[str, Any] = {
            "benchmark": "bench_vs_java", "ratio": RATIO, "rows": args.rows, "repeat": args.repeat,
            "warmup": args.warmup, "warmup_rows": warmup_rows, "expired": args.expired, "retain": args.retain,
            "seed": args.seed, "write_options": WRITE_OPTIONS, "run_options": RUN_OPTIONS,
            "paimon_version": paimon_version(jar), "jar": str(jar), "configs": []}
        for n in (int(c) for c in args.cores.split(",") if c):
            print(f"{n} core(s): Paimon Java, then the engine ...", file=sys.stderr, flush=True)
            result["configs"].append(run_config(n, args, spec, expected, jar, classes, work))
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(result, indent=2))
        print(markdown(result))
        failed = [f"{c['cores']} core(s) {case}: {'; '.join(v['problems'])}" for c in result["configs"]
                  for case, v in c["checks"].items() if not v["ok"]]
        for line in failed:
            print(f"CHECK FAILED: {line}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
