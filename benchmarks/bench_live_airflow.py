"""Task latency in a live ``make airflow`` (issue 36): what a user waits for after pressing Trigger.

Starts ``python -m scripts.airflow_demo serve`` (exactly ``make airflow``: api-server, scheduler, dag-processor,
triggerer, the connections, the lake's tables created empty; by default the Spark Connect route with its server) in
a temporary home and lake on a free loopback port, logs in as the demo's admin, and through the REST API, as the
UI's Trigger button does:

* **metadata-only task**: ``paimon_expire_snapshots`` on one table (the engine's command on the worker, no Spark),
  ``--runs`` times. Per run: the task's own duration (its ``start_date`` -> ``end_date``: the task process, Airflow's
  task runner, the DAG file's parse, the command) and trigger -> run success (plus the scheduler's queueing);
* **bad input found in the warehouse**: ``paimon_rollback`` of ``dwd.orders`` to snapshot 99, which does not
  exist: the ``rollback`` task's duration until it failed (the worker's check reads the table; no process starts);
* **4-layer cascade**: ``paimon_lake_ods`` with sample batch 1, 2, 3 in turn (``--cascades``); per batch the time
  from the trigger to the success of the ``paimon_lake_ads`` run its Assets started (ODS -> DWD -> DWS -> ADS), and
  each layer's run duration.

The first start of the Airflow (migrations, parsing the DAG files) is timed apart and not in the samples. Targets
(issue 36, idle machine): metadata-only task <= 3 s end to end, cascade <= 20 s.

``python benchmarks/bench_live_airflow.py [--runs 5] [--cascades 3] [--worker-jobs] [--out .bench/live.json]``
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LAYERS = ("paimon_lake_ods", "paimon_lake_dwd", "paimon_lake_dws", "paimon_lake_ads")
METADATA_DAG = "paimon_expire_snapshots"
METADATA_TABLE = "ods.order_events"
ROLLBACK_DAG = "paimon_rollback"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Api:
    """The REST API of the live Airflow, as the demo's admin."""

    def __init__(self, base: str) -> None:
        self.base, self.token = base, ""

    def login(self, password: str) -> None:
        status, body = self.call("POST", "/auth/token", {"username": "admin", "password": password})
        if status not in (200, 201):
            raise RuntimeError(f"login failed: {status} {body}")
        self.token = body["access_token"]

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except (urllib.error.URLError, ConnectionError, OSError) as e:
            return 0, str(e)

    def trigger(self, dag_id: str, conf: dict[str, Any]) -> str:
        status, run = self.call("POST", f"/api/v2/dags/{dag_id}/dagRuns", {"logical_date": None, "conf": conf})
        if status != 200:
            raise RuntimeError(f"trigger {dag_id}: {status} {run}")
        return str(run["dag_run_id"])

    def run(self, dag_id: str, run_id: str) -> dict[str, Any] | None:
        status, run = self.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")
        return run if status == 200 else None

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        status, body = self.call("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100&order_by=-run_after")
        return list(body["dag_runs"]) if status == 200 else []

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        status, body = self.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        return list(body["task_instances"]) if status == 200 else []


def wait_for(what: str, check: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return (datetime.datetime.fromisoformat(end) - datetime.datetime.fromisoformat(start)).total_seconds()


def finished(api: Api, dag_id: str, run_id: str) -> dict[str, Any] | None:
    run = api.run(dag_id, run_id)
    if run and run["state"] == "failed":
        raise RuntimeError(f"{dag_id} {run_id} failed")
    return run if run and run["state"] == "success" else None


@contextlib.contextmanager
def live_airflow(root: pathlib.Path, jobs: str) -> Iterator[tuple[Api, float, int]]:
    """``make airflow`` under ``root``: its API logged in, the seconds until every layer DAG was parsed, and the pid
    of ``make airflow``'s process (its components are its children)."""
    from scripts.airflow_demo import passwords_file

    home, lake, port = root / "home", root / "lake", free_port()
    args = [sys.executable, "-m", "scripts.airflow_demo", "serve", "--home", str(home), "--lake", str(lake),
            "--port", str(port)] + (["--worker-jobs"] if jobs == "worker" else [])
    started = time.monotonic()
    log = (root / "serve.log").open("wb")
    proc = subprocess.Popen(args, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")})
    try:
        api = Api(f"http://127.0.0.1:{port}")
        wait_for("the API server", lambda: api.call("GET", "/api/v2/monitor/health")[0] == 200, 600, 0.5)
        password = json.loads(passwords_file(home).read_text())["admin"]
        api.login(password)
        for dag_id in (*LAYERS, METADATA_DAG, ROLLBACK_DAG):
            wait_for(f"DAG {dag_id} parsed", lambda d=dag_id: api.call("GET", f"/api/v2/dags/{d}")[0] == 200, 600,
                     0.5)
        ready = time.monotonic() - started
        yield api, ready, proc.pid
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of process ``root`` and its descendants so far (from ``/proc``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = pathlib.Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo += children.get(pid, [])
    return total


def idle_cpu(pid: int, seconds: float = 30.0) -> float:
    """The share of one core the Airflow uses while nothing runs (CPU seconds over ``seconds`` of wall time)."""
    before = tree_cpu_seconds(pid)
    time.sleep(seconds)
    return (tree_cpu_seconds(pid) - before) / seconds


def metadata_task(api: Api) -> dict[str, float | None]:
    """One run of the metadata-only DAG: its task's duration and trigger -> run success."""
    started = time.monotonic()
    run_id = api.trigger(METADATA_DAG, {"tables": [METADATA_TABLE]})
    run = wait_for(f"{METADATA_DAG} {run_id}", lambda: finished(api, METADATA_DAG, run_id), 300)
    total = time.monotonic() - started
    tis = [ti for ti in api.task_instances(METADATA_DAG, run_id) if ti.get("state") == "success"]
    task = max((seconds(ti.get("start_date"), ti.get("end_date")) or 0.0 for ti in tis), default=None)
    return {"task": task, "run": seconds(run.get("start_date"), run.get("end_date")), "trigger_to_success": total}


def bad_rollback(api: Api) -> dict[str, float | None]:
    """A rollback to a snapshot that does not exist: the failed ``rollback`` task's duration, trigger -> failed."""
    started = time.monotonic()
    run_id = api.trigger(ROLLBACK_DAG, {"table": "dwd.orders", "version": "99"})

    def ended() -> dict[str, Any] | None:
        run = api.run(ROLLBACK_DAG, run_id)
        return run if run and run["state"] in ("failed", "success") else None

    run = wait_for(f"{ROLLBACK_DAG} {run_id}", ended, 300)
    total = time.monotonic() - started
    if run["state"] != "failed":
        raise RuntimeError(f"a rollback to snapshot 99 did not fail: {run}")
    tis = {ti["task_id"]: ti for ti in api.task_instances(ROLLBACK_DAG, run_id)}
    ti = tis.get("rollback", {})
    return {"task": seconds(ti.get("start_date"), ti.get("end_date")), "trigger_to_failed": total}


def cascade(api: Api, batch: int) -> dict[str, float | None]:
    """One batch through the four layers: trigger -> the ADS run it started succeeded; each layer run's duration."""
    before = {dag_id: {r["dag_run_id"] for r in api.runs(dag_id)} for dag_id in LAYERS[1:]}
    started = time.monotonic()
    ods = api.trigger(LAYERS[0], {"batch": batch})
    out: dict[str, float | None] = {}
    run = wait_for(f"ODS {ods}", lambda: finished(api, LAYERS[0], ods), 600)
    out[LAYERS[0]] = seconds(run.get("start_date"), run.get("end_date"))
    for dag_id in LAYERS[1:]:
        def new_run(d: str = dag_id) -> dict[str, Any] | None:
            fresh = [r for r in api.runs(d) if r["dag_run_id"] not in before[d]]
            if any(r["state"] == "failed" for r in fresh):
                raise RuntimeError(f"{d} failed")
            return next((r for r in fresh if r["state"] == "success"), None)

        run = wait_for(f"{dag_id} after batch {batch}", new_run, 600)
        out[dag_id] = seconds(run.get("start_date"), run.get("end_date"))
    out["trigger_to_ads_success"] = time.monotonic() - started
    return out


def summary(samples: list[dict[str, float | None]]) -> dict[str, dict[str, float]]:
    keys = samples[0].keys() if samples else []
    out = {}
    for k in keys:
        values = [s[k] for s in samples if s[k] is not None]
        if values:
            out[k] = {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
                      "max": round(max(values), 2), "n": len(values)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="metadata-only task runs")
    parser.add_argument("--cascades", type=int, default=3, help="4-layer cascades (sample batches 1..3, cycled)")
    parser.add_argument("--worker-jobs", dest="jobs", action="store_const", const="worker", default="connect",
                        help="make airflow DEMO_ARGS=--worker-jobs (default: the Spark Connect route, as make airflow)")
    parser.add_argument("--out", help="JSON results")
    parser.add_argument("--keep", help="run in this (new) directory and keep it: the Airflow home's logs")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    if args.keep:
        pathlib.Path(args.keep).mkdir(parents=True, exist_ok=False)
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory(
            prefix="bench-live-airflow-")) as tmp, live_airflow(pathlib.Path(tmp), args.jobs) as (api, ready, pid):
        print(f"make airflow ready (every layer DAG parsed) in {ready:.1f} s", flush=True)
        idle = idle_cpu(pid)
        print(f"idle: {idle:.0%} of a core", flush=True)
        meta = []
        for i in range(args.runs):
            meta.append(metadata_task(api))
            print(f"metadata-only task {i + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in meta[-1].items()
                                                                 if v is not None), flush=True)
        bad = []
        for i in range(args.runs):
            bad.append(bad_rollback(api))
            print(f"bad rollback {i + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in bad[-1].items()
                                                          if v is not None), flush=True)
        flows = []
        for i in range(args.cascades):
            flows.append(cascade(api, i % 3 + 1))
            print(f"cascade {i + 1} (batch {i % 3 + 1}): " + ", ".join(
                f"{k} {v:.1f} s" for k, v in flows[-1].items() if v is not None), flush=True)
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_before": load_before, "load_after": os.getloadavg()},
        "jobs": args.jobs, "ready_seconds": round(ready, 1), "idle_core_share": round(idle, 3),
        "metadata_task": summary(meta), "bad_rollback": summary(bad), "cascade": summary(flows),
        "targets": {"metadata_task_end_to_end_s": 3, "bad_input_s": 1, "cascade_s": 20},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
