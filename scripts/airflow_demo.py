"""``make demo`` and ``make airflow``: the DAG templates on embedded defaults.

Defaults: Airflow home ``./.airflow-demo``, the lake in ``./demo-lake`` (``warehouse/`` and ``landing/``), every
write, compaction and changelog consumption a Spark job on a local Spark Connect server (``local[*]``, started under
the home on 127.0.0.1 by :mod:`table_engine.spark.connect_server` (15002, or the free port the home was first
given), reused when it runs already; the
``spark_default`` connection is of type ``spark_connect``). ``--worker-jobs``: the laptop option, the jobs run with
the engine on the Airflow worker (no Spark at all for this demo's few rows); ``--spark-jobs``: each job is a
spark-submit on ``local[*]`` (12-23 s a DAG run). ``run`` and ``serve`` share the home and the lake but
not the SQLite metadata database (``demo-runs.db``, ``airflow.db``): the demo's runs and Asset events never
reach ``serve``'s scheduler. The API secret key and JWT secret are generated at the first start into
``<home>/demo-secrets.json`` (mode 0600), not fixed in this file.

* ``python -m scripts.airflow_demo run``: ``airflow db migrate``, then for each sample batch the layers as
  ``airflow dags test`` runs them (``DAG.test()``, here in one process: Airflow's start, the DAG files' parsing and
  the in-process execution API are paid once, not per run) (ODS -> DWD -> DWS -> ADS, in order, as the Asset
  schedules would run them), then the tables, snapshots and a sample of the ADS rows. After each DAG run it prints
  what the run committed (new snapshots, tags); each run's log goes to ``<home>/logs/demo-*.log``.
* ``python -m scripts.airflow_demo serve``: the Airflow UI on http://127.0.0.1:8080 with these DAGs
  (api-server, scheduler, dag-processor and triggerer as separate processes; Ctrl-C stops them). It first creates
  the lake's tables that do not exist yet, empty (``lake.ensure_tables``), so that the scheduled maintenance DAGs,
  which start at once, run (as no-ops) instead of failing before the first batch lands. Its connections
  ``paimon_default`` and ``spark_default`` are created in the metadata database (``airflow connections import``,
  skipping those that exist), so Admin -> Connections shows them, a user's edit there wins, and the form's Test
  button (``[core] test_connection = Enabled``) checks them. The UI asks for a login: user ``admin``, password
  generated at the first start, printed once and kept in ``<home>/simple_auth_manager_passwords.json.generated``.
  No log server is started (``--skip-serve-logs``): the api-server reads the task logs from ``<home>/logs``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator

REPO = pathlib.Path(__file__).resolve().parents[1]
# the example lake is defined next to the DAGs that use it; Airflow puts the DAG folder on sys.path, so does the demo
sys.path.insert(0, str(REPO / "dags"))

from example_lake import LAPTOP_SPARK_CONF, SMALL_LOCAL_SPARK_CONF, ensure_tables  # noqa: E402
from paimon_provider.utils.connection import form_extra  # noqa: E402

from table_engine.spark import connect_server  # noqa: E402

JOB_ROUTES = ("connect", "worker", "spark-submit")
"""Where the demo's Spark jobs run: a local Spark Connect server (default), the Airflow worker (``--worker-jobs``),
spark-submit per job (``--spark-jobs``)."""
CONNECT_SERVER_CONF = {"spark.sql.shuffle.partitions": "2", "spark.ui.port": "4050",
                       "spark.driver.extraJavaOptions": SMALL_LOCAL_SPARK_CONF["spark.driver.extraJavaOptions"]}
"""The demo's Spark Connect server: a few rows per job (2 shuffle partitions), its UI on http://127.0.0.1:4050, the
JVM options of local-mode Spark (its driver shares the laptop's cores with the jobs' Python tasks: ADR 0038)."""
CONNECT_SPARK_CONF = {"spark.sql.shuffle.partitions": "2"}
"""The Paimon connection's Spark conf over Connect: session conf only (the server fixes the rest at its start)."""

LAYERS = ("paimon_lake_ods", "paimon_lake_dwd", "paimon_lake_dws", "paimon_lake_ads")
SERVE_DB = "airflow.db"
"""``make airflow``'s metadata database (SQLite, in the Airflow home): its scheduler's runs, asset events, logs."""
RUN_DB = "demo-runs.db"
"""``make demo``'s own metadata database: its ``DAG.test()`` runs and their asset events stay out of ``make airflow``'s
scheduler, which would otherwise turn them into DWD, DWS and ADS runs nobody triggered (the demo's lake is shared)."""


def demo_env(home: pathlib.Path, lake: pathlib.Path, port: int = 8080, spark_jobs: bool = False,
             metadata_db: str = SERVE_DB) -> dict[str, str]:
    """The environment of the demo Airflow: its home, the DAG folder, the metadata database ``<home>/<metadata_db>``
    (:data:`SERVE_DB` or :data:`RUN_DB`), a login, generated secrets (see :func:`demo_secrets`). The connections are
    not in it: :func:`demo_connections` (``serve`` creates them in the metadata database, ``run`` adds them as
    ``AIRFLOW_CONN_*`` variables of its own process)."""
    bin_dir = os.path.dirname(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "2",
        # the scheduler's pause between loops with nothing to do (default 1 s): each task of a run, and each run an
        # Asset starts, waits for the next loop; 0.2 s cuts a 4-layer cascade by a third for 4% of a core when idle
        # (BENCHMARKS.md, "What a user waits for in make airflow")
        "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.2",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        # a login: Airflow 3's simple auth manager, one admin whose password it keeps in the home
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{DEMO_USER}:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords_file(home)),
        "AIRFLOW__CORE__TEST_CONNECTION": "Enabled",  # the connection form's Test button
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / metadata_db}",
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "PAIMON_LANDING_DIR": str(lake / "landing"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
    })
    secret = demo_secrets(home)
    env.update({"AIRFLOW__API__SECRET_KEY": secret["api_secret_key"],
                "AIRFLOW__API_AUTH__JWT_SECRET": secret["jwt_secret"]})
    return env


DEMO_USER = "admin"


def passwords_file(home: pathlib.Path) -> pathlib.Path:
    """Where the simple auth manager keeps the demo login's password."""
    return home / "simple_auth_manager_passwords.json.generated"


def _private_json(path: pathlib.Path, make: dict[str, str]) -> tuple[dict[str, str], bool]:
    """The JSON object in ``path``; created from ``make`` (mode 0600) if absent. Also whether it was created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return dict(json.loads(path.read_text())), False
    with os.fdopen(fd, "w") as f:
        json.dump(make, f)
    return make, True


def demo_secrets(home: pathlib.Path) -> dict[str, str]:
    """The API secret key and JWT secret of this Airflow home: generated at the first start (``demo-secrets.json``,
    mode 0600), the same for every component and every later start."""
    return _private_json(home / "demo-secrets.json", {"api_secret_key": secrets.token_urlsafe(32),
                                                      "jwt_secret": secrets.token_urlsafe(32)})[0]


def demo_login(home: pathlib.Path) -> str:
    """The line telling the login: the password itself the first time (generated here, in the simple auth manager's
    password file), then where it is kept."""
    passwords, created = _private_json(passwords_file(home), {DEMO_USER: secrets.token_urlsafe(12)})
    if created:
        return (f"Login: user {DEMO_USER}, password {passwords[DEMO_USER]} (shown once; kept in "
                f"{passwords_file(home)})")
    return f"Login: user {DEMO_USER}, password in {passwords_file(home)}"


def demo_connections(lake: pathlib.Path, jobs: str = "worker",
                     home: pathlib.Path | None = None) -> dict[str, dict[str, object]]:
    """The demo's connections by id, as ``airflow connections import`` reads them: the Paimon warehouse of the lake
    and its Spark connection, by where the jobs run (:data:`JOB_ROUTES`): ``connect``, the local Spark Connect
    server (a ``spark_connect`` connection); ``worker``, Spark ``local[*]`` with jobs reading at most 8 MB on the
    driver (:data:`~example_lake.LAPTOP_SPARK_CONF`), so all of this demo's on the worker; ``spark-submit``, Spark
    ``local[*]`` with every job a Spark job. The Spark Connect server is the one of ``home`` (its port:
    :func:`~table_engine.spark.connect_server.port_for`)."""
    if jobs not in JOB_ROUTES:
        raise ValueError(f"jobs must be one of {JOB_ROUTES}, not {jobs!r}")
    if jobs == "connect" and home is None:
        raise ValueError("the connect route needs the home of its Spark Connect server")
    conf = {"connect": CONNECT_SPARK_CONF, "worker": LAPTOP_SPARK_CONF, "spark-submit": SMALL_LOCAL_SPARK_CONF}[jobs]
    spark: dict[str, object] = (
        {"conn_type": "spark_connect", "host": connect_server.url(connect_server.port_for(home))}
        if home is not None and jobs == "connect" else {"conn_type": "spark", "host": "local[*]"})
    return {
        "paimon_default": {"conn_type": "paimon", "extra": form_extra(
            str(lake / "warehouse"), spark_conn_id="spark_default", spark_conf=conf)},
        "spark_default": spark,
    }


@contextlib.contextmanager
def connect_server_for(home: pathlib.Path, jobs: str) -> Iterator[str | None]:
    """With ``jobs == "connect"``: the local Spark Connect server under ``home`` for the block (started, or reused
    when it runs already; stopped afterwards only when started here); its URL when started here, else None."""
    if jobs != "connect":
        yield None
        return
    started = connect_server.running_pid(home) is None
    port = connect_server.port_for(home)
    print(f"Spark Connect server {'starting' if started else 'running'} at {connect_server.url(port)} "
          f"(local[*]; this checkout's, log in {connect_server.log_dir(home)}) ...", flush=True)
    connect_server.start(home, port, conf=CONNECT_SERVER_CONF)
    try:
        yield connect_server.url(port) if started else None
    finally:
        if started:
            connect_server.stop(home)


def warm_up_server(url: str, warehouse: str) -> None:
    """Read the ODS table of ``warehouse`` through the ``paimon`` data source on the Spark Connect server at ``url``,
    so that its first job does not pay the server's cold start (its Python worker and the engine's imports there,
    the JVM's first compilations): the first cascade of ``make airflow`` took 24 s instead of 13-15 s without it.
    Best effort: a failure is only logged."""
    from example_lake import ODS

    from table_engine.spark.app import connect_session

    try:
        spark = connect_session(url, "paimon-warm-up")
        try:
            spark.read.format("paimon").option("warehouse", warehouse).load(ODS.name).count()
        finally:
            spark.stop()
    except Exception as e:  # noqa: BLE001 - the jobs start it then, as without the warm-up
        print(f"Spark Connect warm-up failed (the first job will start the server's workers): {e}", flush=True)


def create_connections(env: dict[str, str], home: pathlib.Path, connections: dict[str, dict[str, object]]) -> str:
    """Create ``connections`` in the metadata database, skipping any that exists (a user's edit in the UI wins):
    one ``airflow connections import``; its output."""
    path = home / "demo-connections.json"
    # An empty extra is left out: the import stores a non-empty one as JSON text, but passes {} as it is (SQLite
    # refuses a dict). A connection without a port gets port 0: the Test button of Airflow 3.3.2's connection list
    # sends Number(null) = 0 and the API refuses a port that differs from the stored one (apache/airflow#73298,
    # fixed after 3.3.2); the hook ignores the port.
    path.write_text(json.dumps({conn_id: {"port": 0, **{k: v for k, v in conn.items() if not (k == "extra" and not v)}}
                                for conn_id, conn in connections.items()}, indent=2))
    done = subprocess.run([airflow_bin(), "connections", "import", str(path)], env=env, check=True,
                          capture_output=True, text=True, timeout=300)
    # a restart meets the connections of the first start: not a failure, say so
    return re.sub(r"Could not import connection (\S+?): connection already exists",
                  r"Connection \1 exists already: kept as it is (edit it in Admin -> Connections)", done.stdout)


def run_env(home: pathlib.Path, lake: pathlib.Path, jobs: str = "worker") -> dict[str, str]:
    """``make demo``'s environment: :func:`demo_env` on its own metadata database (:data:`RUN_DB`), the connections
    as ``AIRFLOW_CONN_*`` variables of its own process."""
    env = demo_env(home, lake, spark_jobs=jobs == "spark-submit", metadata_db=RUN_DB)
    env.update({f"AIRFLOW_CONN_{conn_id.upper()}": json.dumps(conn)
                for conn_id, conn in demo_connections(lake, jobs, home).items()})
    return env


def serve_env(home: pathlib.Path, lake: pathlib.Path, port: int = 8080, spark_jobs: bool = False) -> dict[str, str]:
    """``make airflow``'s environment: :func:`demo_env` on :data:`SERVE_DB`, which ``make demo`` never writes."""
    return demo_env(home, lake, port, spark_jobs, metadata_db=SERVE_DB)


def airflow_bin() -> str:
    """The ``airflow`` executable next to this Python interpreter."""
    return str(pathlib.Path(sys.executable).with_name("airflow"))


def migrate(env: dict[str, str]) -> None:
    """``airflow db migrate`` of the demo's SQLite metadata database."""
    subprocess.run([airflow_bin(), "db", "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)


class DagRunner:
    """Runs the demo's DAGs in this process, as ``airflow dags test`` does (``DAG.test()``: the tasks run here, in
    order), each run's log in ``<home>/logs/demo-<dag>-<time>.log``. One process for every run: Airflow's imports,
    the DAG files' parsing and the in-process execution API are paid once, not once per ``airflow dags test``."""

    def __init__(self, env: dict[str, str], home: pathlib.Path) -> None:
        os.environ.clear()
        os.environ.update(env)  # before Airflow is first imported: it reads its configuration then
        self.home = home
        self.log_dir = home / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with self._logging_to(self.log_dir / "demo-dagbag.log"):
            from airflow.dag_processing.dagbag import DagBag

            self.dagbag = DagBag(dag_folder=str(REPO / "dags"))

    @staticmethod
    @contextlib.contextmanager
    def _logging_to(log: pathlib.Path) -> Iterator[None]:
        """Send this process's stdout and stderr (file descriptors 1 and 2: Spark's output too) to ``log``."""
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        with log.open("ab") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(saved[0])
                os.close(saved[1])

    def test(self, dag_id: str, conf: dict[str, object] | None = None) -> str:
        """One run of ``dag_id`` (``DAG.test``); its final state."""
        log = self.log_dir / f"demo-{dag_id}-{int(time.time())}.log"
        started = time.monotonic()
        state = "unknown"
        with self._logging_to(log):
            try:
                state = str(self.dagbag.dags[dag_id].test(run_conf=conf).state)
            except Exception:
                traceback.print_exc()
                state = "failed"
        shown = log.relative_to(REPO) if log.is_relative_to(REPO) else log
        print(f"  {dag_id:<18} {state:<8} {time.monotonic() - started:6.1f} s   (log: {shown})", flush=True)
        return state


def run(home: pathlib.Path, lake: pathlib.Path, jobs: str = "connect") -> int:
    """``make demo``: run the streaming-lake DAGs end to end as ``airflow dags test`` does, the Spark jobs where
    ``jobs`` says (:data:`JOB_ROUTES`); the exit code."""
    home.mkdir(parents=True, exist_ok=True)
    with connect_server_for(home, jobs):
        return _run(home, lake, jobs)


def _run(home: pathlib.Path, lake: pathlib.Path, jobs: str) -> int:
    from example_lake import BATCHES, DWS, report

    shutil.rmtree(lake, ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    env = run_env(home, lake, jobs)  # not make airflow's metadata database
    warehouse = str(lake / "warehouse")
    print(f"Airflow home {home} (SQLite {RUN_DB}, not make airflow's {SERVE_DB}), lake {lake}, Spark local[*] "
          "(connections paimon_default, spark_default)")
    if jobs == "connect":
        print("Every write, compaction and changelog consumption is a Spark job on the Spark Connect server "
              "(the task is its client; `make demo DEMO_ARGS=--worker-jobs` runs them on the Airflow worker, "
              "DEMO_ARGS=--spark-jobs as one spark-submit each).")
    elif jobs == "spark-submit":
        print("Every write, compaction and changelog consumption is a Spark job (spark-submit, local[*]).")
    else:
        print("Jobs reading at most 8 MB (all of this demo's) run with the engine on the Airflow worker, without "
              "spark-submit (spark.paimon.driver-job.max-input-size = 8 mb; `make demo` without --worker-jobs runs "
              "each as a Spark job on a Spark Connect server).")
    print(f"The DAGs of {REPO / 'dags'}: for each of {len(BATCHES)} sample batches, the layers ODS -> DWD -> DWS -> "
          "ADS in the order their Asset schedules start them, each run as `airflow dags test` runs it (DAG.test, "
          "all in this process).")
    started = time.monotonic()
    print("airflow db migrate ...", flush=True)
    migrate(env)
    dags = DagRunner(env, home)
    state = _table_state(warehouse)
    for batch in BATCHES:
        print(f"\nbatch {batch}:")
        for dag_id in LAYERS:
            if dag_id == "paimon_lake_ads" and DWS.name not in state:
                print(f"  {dag_id:<18} not run: {DWS.name} has no snapshot (the DWD compaction produced no "
                      "changelog for DWS to aggregate)")
                continue
            conf: dict[str, object] | None = {"batch": batch} if dag_id == "paimon_lake_ods" else None
            if dags.test(dag_id, conf) != "success":
                print(f"  {dag_id} failed: see its log above")
                return 1
            state = _print_changes(warehouse, state)
    print(f"\n{len(BATCHES) * len(LAYERS)} DAG runs in {time.monotonic() - started:.0f} s\n")
    print(report(warehouse))
    return 0


def _table_state(warehouse: str) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Latest snapshot id and tags of each lake table that has a snapshot."""
    from example_lake import LAKE_TABLES

    from table_engine.catalog import Catalog

    catalog = Catalog(warehouse)
    out: dict[str, tuple[int, tuple[str, ...]]] = {}
    for tdef in LAKE_TABLES:
        if not catalog.table_exists(tdef.name):
            continue
        table = catalog.get_table(tdef.name)
        latest = table.latest_snapshot_id()
        if latest is not None:
            out[tdef.name] = (latest, tuple(table.list_tags()))
    return out


def _print_changes(warehouse: str, before: dict[str, tuple[int, tuple[str, ...]]]) \
        -> dict[str, tuple[int, tuple[str, ...]]]:
    """Print the snapshots and tags each table gained since ``before``; the new state."""
    from table_engine.catalog import Catalog

    after = _table_state(warehouse)
    catalog = Catalog(warehouse)
    for name, (latest, tags) in after.items():
        first, old_tags = before.get(name, (0, ()))
        if latest > first:
            table = catalog.get_table(name)
            for snap in table.snapshots():
                if snap.id > first:
                    written = snap.delta_record_count if str(snap.commit_kind) != "COMPACT" else 0
                    changes = [f"{written} records written" if written else "",
                               f"{snap.changelog_record_count} changelog records" if snap.changelog_record_count
                               else ""]
                    print(f"  {'':<18} -> {name} snapshot {snap.id} {snap.commit_kind!s}"
                          f"{': ' if any(changes) else ''}{', '.join(c for c in changes if c)}")
        for tag in sorted(set(tags) - set(old_tags)):
            print(f"  {'':<18} -> {name} tag {tag}")
    return after


def serve_components(port: int) -> list[list[str]]:
    """The ``airflow`` sub-commands ``serve`` starts: the api-server on loopback, and no log server (the scheduler's
    and the triggerer's would listen on every interface; the api-server reads the logs from the local folder)."""
    return [["api-server", "--host", "127.0.0.1", "--port", str(port)], ["scheduler", "--skip-serve-logs"],
            ["dag-processor"], ["triggerer", "--skip-serve-logs"]]


def serve(home: pathlib.Path, lake: pathlib.Path, port: int, jobs: str = "connect") -> int:
    """Run the Airflow api-server, scheduler and dag-processor on the demo lake until interrupted (with the Spark
    Connect server when ``jobs`` is ``connect``); the exit code."""
    home.mkdir(parents=True, exist_ok=True)
    with connect_server_for(home, jobs) as started:
        return _serve(home, lake, port, jobs, warm_up=started)


def _serve(home: pathlib.Path, lake: pathlib.Path, port: int, jobs: str, warm_up: str | None = None) -> int:
    env = serve_env(home, lake, port, jobs == "spark-submit")
    migrate(env)
    for line in create_connections(env, home, demo_connections(lake, jobs, home)).splitlines():
        print(line, flush=True)
    # the maintenance DAGs are scheduled (and unpaused) at once: give them the lake's tables, empty, to run on
    ensure_tables(str(lake / "warehouse"))
    if warm_up is not None:  # a Spark Connect server started here: its first job need not start it cold
        threading.Thread(target=warm_up_server, args=(warm_up, str(lake / "warehouse")), daemon=True,
                         name="spark-connect-warm-up").start()
    procs: list[subprocess.Popen[bytes]] = []
    login = demo_login(home)
    components = serve_components(port)
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
        print(f"Airflow UI: http://127.0.0.1:{port} (logs in {home}/*.log). {login}. Trigger paimon_lake_ods with "
              "a batch number and watch the layers follow; the connections are in Admin -> Connections. Ctrl-C "
              "stops.", flush=True)
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
    """``python -m scripts.airflow_demo run|serve``; the exit code."""
    parser = argparse.ArgumentParser(prog="python -m scripts.airflow_demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("run", "serve"))
    parser.add_argument("--home", default=str(REPO / ".airflow-demo"), help="AIRFLOW_HOME")
    parser.add_argument("--lake", default=str(REPO / "demo-lake"), help="warehouse and landing directory")
    parser.add_argument("--port", type=int, default=8080, help="UI port (serve)")
    route = parser.add_mutually_exclusive_group()
    route.add_argument("--worker-jobs", dest="jobs", action="store_const", const="worker",
                       help="the laptop option: run this demo's small jobs with the engine on the Airflow worker, "
                            "no Spark (default: every job on a local Spark Connect server)")
    route.add_argument("--spark-jobs", dest="jobs", action="store_const", const="spark-submit",
                       help="run every write, compaction and changelog consumption as one spark-submit each")
    args = parser.parse_args(argv)
    home, lake = pathlib.Path(args.home).resolve(), pathlib.Path(args.lake).resolve()
    jobs = args.jobs or "connect"
    if args.action == "run":
        return run(home, lake, jobs)
    return serve(home, lake, args.port, jobs)


if __name__ == "__main__":
    raise SystemExit(main())
