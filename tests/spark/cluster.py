"""A standalone Spark cluster on 127.0.0.1 for tests and benchmarks: a master and ``workers`` workers started with
``spark-class`` (the wheel has no sbin scripts), stopped by PID (SIGTERM, then SIGKILL after 30 s) at the end."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.spark.conftest import BIN, spark_env


def free_ports(count: int, preferred: int | None = None) -> list[int]:
    """``count`` distinct free ports of 127.0.0.1, the first ``preferred`` when it is free: every socket stays bound
    until all are chosen, so two of them can never be the same port."""
    held: list[socket.socket] = []
    try:
        for i in range(count):
            s = socket.socket()
            held.append(s)
            try:
                s.bind(("127.0.0.1", preferred if i == 0 and preferred else 0))
            except OSError:
                s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()


_WEB_UI = re.compile(rb"MasterWebUI.*?started at http://[^:\s]+:(\d+)")


def master_ui(master_log: Path, requested: int) -> str:
    """The master's web UI on 127.0.0.1 at the port its log states (Spark moves to the next port when the requested
    one was taken in between), else at the requested port."""
    try:
        found = _WEB_UI.search(master_log.read_bytes())
    except OSError:
        found = None
    return f"http://127.0.0.1:{int(found.group(1)) if found else requested}"


def alive_workers(ui: str) -> int:
    """How many workers the master (web UI at ``ui``) counts alive; 0 while it does not answer with its JSON."""
    try:
        with urllib.request.urlopen(f"{ui}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


@contextmanager
def standalone_cluster(work: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                       timeout: float = 90) -> Iterator[str]:
    """``spark://127.0.0.1:<port>`` (7077 when free) with ``workers`` workers of ``cores`` cores and ``memory``
    each, all registered; logs in ``work``. RuntimeError (with the logs' tails) when it does not come up."""
    work.mkdir(parents=True, exist_ok=True)
    port, ui, *worker_uis = free_ports(2 + workers, preferred=7077)
    env = spark_env({"SPARK_WORKER_DIR": str(work / "work"), "SPARK_LOG_DIR": str(work)})
    spark_class = str(BIN / "spark-class")
    logs = ["master.log"] + [f"worker-{i}.log" for i in range(workers)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(work / logs[0], "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(ui)], env=env, stdout=out, stderr=subprocess.STDOUT))
        url = f"spark://127.0.0.1:{port}"
        for i in range(workers):
            with open(work / logs[i + 1], "wb") as out:
                procs.append(subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores",
                     str(cores), "--memory", memory, "--work-dir", str(work / f"work-{i}"), "--webui-port",
                     str(worker_uis[i]), url], env=env, stdout=out, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout
        while alive_workers(master_ui(work / logs[0], ui)) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                tails = "".join(f"--- {f}\n{Path(work, f).read_text(errors='replace')[-3000:]}" for f in logs)
                raise RuntimeError(f"the standalone cluster did not come up:\n{tails}")
            time.sleep(0.5)
        yield url
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
