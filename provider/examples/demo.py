"""``make demo-airflow`` and ``make airflow``: the DAG templates on embedded defaults.

Defaults: Airflow home ``./.airflow-demo`` (SQLite), the lake in ``./demo-lake`` (``warehouse/`` and ``landing/``),
Spark ``local[*]`` through the ``spark_default`` connection, connections given as environment variables.

* ``python -m provider.examples.demo run``: ``airflow db migrate``, then for each sample batch the layers with
  ``airflow dags test`` (ODS -> DWD -> DWS -> ADS, in order, as the Asset schedules would run them), then the
  tables, snapshots and a sample of the ADS rows. Each ``dags test`` log goes to ``<home>/logs/demo-*.log``.
* ``python -m provider.examples.demo serve``: the Airflow UI on http://127.0.0.1:8080 with these DAGs
  (api-server, scheduler, dag-processor and triggerer as separate processes; Ctrl-C stops them).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
LAYERS = ("paimon_lake_ods", "paimon_lake_dwd", "paimon_lake_dws", "paimon_lake_ads")


def demo_env(home: pathlib.Path, lake: pathlib.Path, port: int = 8080) -> dict[str, str]:
    """The environment of the demo Airflow: its home, the DAG folder, the connections."""
    bin_dir = os.path.dirname(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",  # a local demo: everyone is admin
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW__API__SECRET_KEY": "paimon-demo-secret-key",
        "AIRFLOW__API_AUTH__JWT_SECRET": "paimon-demo-jwt-secret-shared-by-the-components",
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps({"conn_type": "paimon", "extra": {
            "warehouse": str(lake / "warehouse"), "spark_conn_id": "spark_default",
            "spark_conf": {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}}}),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[*]"}),
        "PAIMON_LANDING_DIR": str(lake / "landing"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
    })
    return env


def airflow_bin() -> str:
    return str(pathlib.Path(sys.executable).with_name("airflow"))


def migrate(env: dict[str, str]) -> None:
    subprocess.run([airflow_bin(), "db", "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)


def dags_test(env: dict[str, str], home: pathlib.Path, dag_id: str, conf: dict[str, object] | None = None) -> str:
    """``airflow dags test``; the run's final state (from its log)."""
    log_dir = home / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"demo-{dag_id}-{int(time.time())}.log"
    cmd = [airflow_bin(), "dags", "test", dag_id]
    if conf:
        cmd += ["--conf", json.dumps(conf)]
    started = time.monotonic()
    with log.open("w") as out:
        subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    text = log.read_text(errors="replace")
    found = re.findall(r"DagRun Finished: dag_id=\S+.*?state=(\w+)", text)
    state = found[-1] if found else "unknown"
    shown = log.relative_to(REPO) if log.is_relative_to(REPO) else log
    print(f"  {dag_id:<18} {state:<8} {time.monotonic() - started:6.1f} s   (log: {shown})", flush=True)
    return state


def run(home: pathlib.Path, lake: pathlib.Path) -> int:
    from provider.examples.lake import BATCHES, DWS, report

    shutil.rmtree(lake, ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    env = demo_env(home, lake)
    print(f"Airflow home {home} (SQLite), lake {lake}, Spark local[*]")
    migrate(env)
    for batch in BATCHES:
        print(f"batch {batch}:")
        if dags_test(env, home, "paimon_lake_ods", {"batch": batch}) != "success":
            return 1
        for dag_id in LAYERS[1:3]:
            if dags_test(env, home, dag_id) != "success":
                return 1
        if not _has_snapshot(lake, DWS.name):
            print("  paimon_lake_ads    not run: dws.user_daily has no snapshot (the DWD compaction produced no "
                  "changelog for DWS to aggregate)")
            continue
        if dags_test(env, home, "paimon_lake_ads") != "success":
            return 1
    print()
    print(report(str(lake / "warehouse")))
    return 0


def _has_snapshot(lake: pathlib.Path, table: str) -> bool:
    from provider.metadata import TableLocation, latest_snapshot_info

    return latest_snapshot_info(TableLocation.of(str(lake / "warehouse"), table)) is not None


def serve(home: pathlib.Path, lake: pathlib.Path, port: int) -> int:
    home.mkdir(parents=True, exist_ok=True)
    env = demo_env(home, lake, port)
    migrate(env)
    procs: list[subprocess.Popen[bytes]] = []
    components = (["api-server", "--host", "127.0.0.1", "--port", str(port)], ["scheduler"], ["dag-processor"],
                  ["triggerer"])
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    try:
        for args in components:
            log = (home / f"{args[0]}.log").open("wb")
            procs.append(subprocess.Popen([airflow_bin(), *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True))
            log.close()
        print(f"Airflow UI: http://127.0.0.1:{port} (logs in {home}/*.log); trigger paimon_lake_ods with a batch "
              "number and watch the layers follow. Ctrl-C stops.", flush=True)
        while not stop and all(p.poll() is None for p in procs):
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
    failed = [p.args for p in procs if p.returncode not in (0, -signal.SIGTERM, None)]
    return 1 if failed and not stop else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m provider.examples.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("run", "serve"))
    parser.add_argument("--home", default=str(REPO / ".airflow-demo"), help="AIRFLOW_HOME")
    parser.add_argument("--lake", default=str(REPO / "demo-lake"), help="warehouse and landing directory")
    parser.add_argument("--port", type=int, default=8080, help="UI port (serve)")
    args = parser.parse_args(argv)
    home, lake = pathlib.Path(args.home).resolve(), pathlib.Path(args.lake).resolve()
    return run(home, lake) if args.action == "run" else serve(home, lake, args.port)


if __name__ == "__main__":
    raise SystemExit(main())
