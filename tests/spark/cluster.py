"""A standalone Spark cluster on 127.0.0.1 for tests and benchmarks: a master and ``workers`` workers started with
``spark-class`` (the wheel has no sbin scripts), stopped by PID (SIGTERM, then SIGKILL after 30 s) at the end."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.spark.conftest import BIN, spark_env


def free_port(preferred: int | None = None) -> int:
    """``preferred`` when it is free, else any free port of 127.0.0.1."""
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError("no free port")


def alive_workers(ui_port: int) -> int:
    """How many workers the master (web UI on ``ui_port``) counts alive."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except OSError:
        return 0


@contextmanager
def standalone_cluster(work: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                       timeout: float = 90) -> Iterator[str]:
    """``spark://127.0.0.1:<port>`` (7077 when free) with ``workers`` workers of ``cores`` cores and ``memory``
    each, all registered; logs in ``work``. RuntimeError (with the logs' tails) when it does not come up."""
    work.mkdir(parents=True, exist_ok=True)
    port, ui = free_port(7077), free_port()
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
                     str(free_port()), url], env=env, stdout=out, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout
        while alive_workers(ui) < workers:
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
