"""A real Airflow on loopback, as ``make airflow`` runs it (``scripts.airflow_demo.demo_env``: api-server,
scheduler, dag-processor, triggerer; here with the LocalExecutor and SQLite; its connections in the metadata
database), driven through its REST API.

One for the tests of ``tests/dags/`` that use it (the ``live`` fixture of ``tests/dags/conftest.py``, which runs them
last in that folder and stops the Airflow after them: idle, it still takes about a third of a core, parsing the DAG
files every few seconds): starting it costs about 15 s and 1.4 GB; it is always stopped (SIGTERM to each component's
process group, SIGKILL after 10 s: the dag-processor does not always exit on SIGTERM).
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from example_lake import SMALL_LOCAL_SPARK_CONF

from tests import airflow_env

SENSOR_DAG = '''
from __future__ import annotations

import datetime

from airflow.sdk import DAG

from paimon_provider.sensors import PaimonSnapshotSensor

with DAG("probe_wait_for_ods", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False):
    PaimonSnapshotSensor(task_id="wait", table="ods.order_events", commit_kind="APPEND", deferrable=True,
                         poke_interval=2, timeout=1800)
'''


STOP_GRACE_SECONDS = 10
COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveAirflow:
    def __init__(self, home: pathlib.Path, env: dict[str, str], port: int) -> None:
        self.home, self.env, self.port = home, env, port
        self.components: dict[str, subprocess.Popen[bytes]] = {}
        self.base = f"http://127.0.0.1:{port}"
        self.airflow = str(pathlib.Path(sys.executable).with_name("airflow"))

    def start(self, connections: dict[str, dict[str, Any]]) -> None:
        """Migrate the metadata database, create ``connections`` in it (as ``make airflow`` does: the UI shows
        them, its Test button checks them), start the components."""
        from scripts.airflow_demo import create_connections

        subprocess.run([self.airflow, "db", "migrate"], env=self.env, check=True, capture_output=True, timeout=600)
        create_connections(self.env, self.home, connections)
        for name in COMPONENTS:
            self.start_component(name)

    def start_component(self, name: str) -> None:
        """Start one component (``COMPONENTS``), its output appended to ``<home>/<name>.log``."""
        args = ["api-server", "--host", "127.0.0.1", "--port", str(self.port)] if name == "api-server" else [name]
        log = open(self.home / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        self.components[name] = subprocess.Popen([self.airflow, *args], env=self.env, stdout=log,
                                                 stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def stop_component(self, name: str) -> None:
        """Stop one component as :meth:`stop` does (e.g. the triggerer, to restart it with ``start_component``)."""
        self._terminate([self.components.pop(name)])

    @property
    def procs(self) -> list[subprocess.Popen[bytes]]:
        return list(self.components.values())

    def stop(self) -> None:
        self._terminate(self.procs)
        self.components.clear()

    @staticmethod
    def _terminate(procs: list[subprocess.Popen[bytes]]) -> None:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for p in procs:
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")

    def wait(self, what: str, check: Any, timeout: float, interval: float = 3.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = check()
            except (urllib.error.URLError, ConnectionError, OSError):
                value = None
            if value:
                return value
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                logs = "\n".join(f"--- {f.name}\n" + f.read_text(errors="replace")[-3000:]
                                 for f in sorted(self.home.glob("*.log")))
                raise AssertionError(f"timed out waiting for {what}\n{logs}")
            time.sleep(interval)

    def unpause(self, dag_id: str) -> None:
        status, body = self.call("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False})
        assert status == 200, body

    def pause(self, dag_id: str) -> None:
        status, body = self.call("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": True})
        assert status == 200, body

    def drop_other_runs(self, dag_id: str, run_id: str | None = None) -> None:
        """End the DAG's active runs other than ``run_id``: the run of the latest schedule interval that the
        scheduler adds as soon as an unpaused DAG has no active run (e.g. the moment the run a test drove ends,
        before the test can pause the DAG again). A queued one is deleted; a running one (which the API does not
        delete) is marked failed, as the UI's "Mark as failed" does, so that it holds no slot of
        ``max_active_runs`` and runs no further task."""
        for other in self.run_ids(dag_id, states=("queued", "running")):
            if other == run_id:
                continue
            path = f"/api/v2/dags/{dag_id}/dagRuns/{other}"
            if self.call("DELETE", path)[0] != 204:
                status, body = self.call("PATCH", path, {"state": "failed", "note": "not a run of the test"})
                assert status == 200, body

    def trigger(self, dag_id: str, conf: dict[str, Any]) -> str:
        """As the UI's Trigger button: unpause, then a run without a logical date."""
        self.unpause(dag_id)
        status, run = self.call("POST", f"/api/v2/dags/{dag_id}/dagRuns", {"logical_date": None, "conf": conf})
        assert status == 200, run
        assert run["logical_date"] is None
        return str(run["dag_run_id"])

    def db_flag(self, query: str) -> bool:
        """A boolean read from the live Airflow's SQLite metadata DB (what the REST API does not show)."""
        import contextlib
        import sqlite3

        with contextlib.closing(sqlite3.connect(self.home / "airflow.db", timeout=30)) as db:
            row = db.execute(query).fetchone()
        return bool(row and row[0])

    def run_ids(self, dag_id: str, states: tuple[str, ...] = ()) -> list[str]:
        """The ids of the DAG's runs (in ``states``, if given)."""
        status, body = self.call("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100")
        if status != 200:
            return []
        return [r["dag_run_id"] for r in body["dag_runs"] if not states or r["state"] in states]

    def run_state(self, dag_id: str, run_id: str) -> str | None:
        status, run = self.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")
        return run["state"] if status == 200 else None

    def task_state(self, dag_id: str, run_id: str, task_id: str) -> str | None:
        status, ti = self.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}")
        return ti.get("state") if status == 200 else None




def live_airflow_env(home: pathlib.Path, dags: pathlib.Path, lake: dict[str, str], port: int) -> dict[str, str]:
    """``make airflow``'s environment (``demo_env``) for a test: its own home, DAG folder and lake, DAGs paused at
    creation (a test unpauses only what it drives), quick DAG parsing and scheduling, Spark ``local[2]``."""
    from scripts.airflow_demo import demo_env

    env = demo_env(home, pathlib.Path(lake["warehouse"]).parent, port)
    env.update({
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",  # the test's API calls carry no login
        "AIRFLOW__API__SECRET_KEY": "test-secret-key",
        "AIRFLOW__API_AUTH__JWT_SECRET": "test-jwt-secret-for-the-live-airflow-test",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "10",
        "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
        "PAIMON_LANDING_DIR": lake["landing"],
        "PAIMON_WATCH_POLL_INTERVAL": "1",  # dags/example_external_commits.py: its watcher polls every second
    })
    return env


def start_live_airflow(root: pathlib.Path) -> tuple[LiveAirflow, dict[str, str]]:
    """Start the live Airflow under ``root`` (home, DAG folder: ``dags/`` plus the sensor probe, the lake with its
    tables created empty as ``make airflow`` does) and wait until it is healthy; the caller stops it."""
    from example_lake import ensure_tables

    home, dags = root / "airflow", root / "dags"
    home.mkdir()
    dags.mkdir()
    for f in airflow_env.DAGS_FOLDER.glob("*.py"):
        (dags / f.name).symlink_to(f)
    (dags / "probe_wait_for_ods.py").write_text(textwrap.dedent(SENSOR_DAG))
    lake = {"warehouse": str(root / "lake" / "warehouse"), "landing": str(root / "lake" / "landing")}
    ensure_tables(lake["warehouse"])
    port = free_port()
    airflow = LiveAirflow(home, live_airflow_env(home, dags, lake, port), port)
    try:
        airflow.start({
            "paimon_default": json.loads(airflow_env.paimon_connection(lake["warehouse"],
                                                                        spark_conf=SMALL_LOCAL_SPARK_CONF)),
            "spark_default": json.loads(airflow_env.spark_connection("local[2]"))})
        airflow.wait("the API server", lambda: airflow.call("GET", "/api/v2/monitor/health")[0] == 200, 180)
    except BaseException:
        airflow.stop()
        raise
    return airflow, lake
