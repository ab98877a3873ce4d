"""A DAG run on an S3 warehouse with the credentials only in the ``paimon`` connection, and a hunt for the secret.

One ``dag.test()`` run against the session's S3 server (moto on 127.0.0.1): a Spark write (spark-submit on
``local[2]``), a metadata-only command (``create-tag``: the engine's CLI in a subprocess), a poking sensor and a
deferrable sensor whose trigger fires when a second snapshot lands. The test process holds no ``AWS_*`` keys: the
connection (``AIRFLOW_CONN_PAIMON_DEFAULT``, access key in its login, secret in its password) is the only source.

While the DAG runs, a thread reads ``/proc/<pid>/cmdline`` of every process descended from this one every 50 ms;
afterwards the test greps the task logs (``dag.test()`` runs tasks in this process and writes their logs to its
output, captured here; files under ``AIRFLOW_HOME/logs`` are grepped too, it writes none), the rendered template
fields, XComs, Asset event extras and the raw metadata database for the secret: it appears nowhere.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from example_lake import SMALL_LOCAL_SPARK_CONF

from tests import airflow_env
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(900)]

DAG_ID = "paimon_s3_credentials"
TABLE = "db.events"


def _ppid(pid: int) -> int | None:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


class CmdlineWatch:
    """Reads the argv of every descendant of this process every 50 ms until stopped."""

    def __init__(self, needles: tuple[str, ...]) -> None:
        self.needles = tuple(n.encode() for n in needles)
        self.leaks: list[str] = []
        self.seen: set[str] = set()  # argv[0..2] of the descendants seen, for the test to check it looked
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.polls = 0

    def __enter__(self) -> CmdlineWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _descendant(self, pid: int, me: int) -> bool:
        for _ in range(64):
            parent = _ppid(pid)
            if parent is None or parent <= 1:
                return False
            if parent == me:
                return True
            pid = parent
        return False

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.05):
            self.polls += 1
            for entry in pathlib.Path("/proc").iterdir():
                if not entry.name.isdigit() or not self._descendant(int(entry.name), me):
                    continue
                try:
                    argv = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                self.seen.add(" ".join(a.decode(errors="replace") for a in argv.split(b"\0")[:4]))
                if any(n in argv for n in self.needles):
                    self.leaks.append(argv.replace(b"\0", b" ").decode(errors="replace")[:300])


def build_dag(source: str) -> Any:
    from airflow.sdk import DAG
    from paimon_provider.operators import PaimonCreateTagOperator, PaimonWriteOperator
    from paimon_provider.sensors import PaimonSnapshotSensor

    with DAG(DAG_ID, schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        write = PaimonWriteOperator(task_id="write", table=TABLE, source=source, primary_keys=["id"],
                                    table_options={"bucket": "1"}, spark={"conf": SMALL_LOCAL_SPARK_CONF})
        tag = PaimonCreateTagOperator(task_id="tag", table=TABLE, tag="t1")
        poke = PaimonSnapshotSensor(task_id="poke", table=TABLE, poke_interval=1, timeout=120)
        wait = PaimonSnapshotSensor(task_id="wait", table=TABLE, deferrable=True, poke_interval=0.2, timeout=300,
                                    after_snapshot_id="{{ ti.xcom_pull(task_ids='write')['snapshot_id'] }}")
        write >> tag >> poke >> wait
    return dag


def sync_to_db(dag: Any, folder: pathlib.Path) -> None:
    """Serialize a DAG defined in this test into the metadata DB, as the DAG processor does for dags/ files
    (``dag.test()`` needs a serialized version)."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db

    DagBundlesManager().sync_bundles_to_db()  # the bundle row the DAG refers to
    folder.mkdir(exist_ok=True)
    bag = DagBag(dag_folder=str(folder))
    bag.bag_dag(dag)
    sync_bag_to_db(bag, "dags-folder", None)


def wait_until_deferred_then_write(warehouse: str, options: dict[str, str], stop: threading.Event,
                                   errors: list[BaseException]) -> None:
    """Once ``wait`` has deferred (its first check saw no newer snapshot), commit snapshot 2 for its trigger.
    The test's own access to the store uses in-memory catalog options, never the environment."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from table_engine import Catalog

    try:
        while not stop.wait(0.05):
            with create_session() as session:
                row = session.execute(select(TaskInstance.state, TaskInstance.start_date).where(
                    TaskInstance.dag_id == DAG_ID, TaskInstance.task_id == "wait")).first()
            # dag.test() marks a deferred task QUEUED while it runs the trigger inline; before its first run the
            # task has no start date
            if row is not None and row[1] is not None and str(row[0]) in ("deferred", "queued"):
                Catalog(warehouse, options).get_table(TABLE).write(pa.table({"id": [100], "v": ["late"]}))
                return
    except BaseException as e:  # noqa: BLE001 - reported by the test
        errors.append(e)


@pytest.fixture
def s3_lake(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, s3_server: S3Server,
            s3_warehouse: str) -> Iterator[dict[str, str]]:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_s3_connection(s3_warehouse,
                                                                                       s3_server.endpoint))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    airflow_env.without_aws_environment(monkeypatch)
    source = tmp_path / "landing" / "part-0.parquet"
    source.parent.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}), source)
    yield {"warehouse": s3_warehouse, "source": str(source.parent)}


def metadata_db_bytes() -> list[tuple[pathlib.Path, bytes]]:
    """The bytes of the session's SQLite metadata database and its WAL, read by another process: opening and
    closing a database file in this process would drop the POSIX locks this process's SQLite connections hold on it
    (POSIX releases every lock of a process on a file when any of its descriptors of the file closes), so another
    process (a lineage runner) could checkpoint and delete the WAL under them: "database disk image is malformed"."""
    db = pathlib.Path(os.environ["AIRFLOW_HOME"]) / "airflow.db"
    out = []
    for path in (db, db.with_name("airflow.db-wal")):
        proc = subprocess.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb')"
                               ".read())", str(path)], capture_output=True, timeout=60, check=False)
        if proc.returncode == 0:
            out.append((path, proc.stdout))
    return out


def _db_texts(dag_id: str = DAG_ID) -> dict[str, str]:
    """What the run of ``dag_id`` left in the metadata DB that users see: rendered fields, XComs, Asset event
    extras."""
    from airflow.models.asset import AssetEvent
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rtif = RenderedTaskInstanceFields
        rendered = session.execute(select(rtif.task_id, rtif.rendered_fields)
                                   .where(rtif.dag_id == dag_id)).all()
        xcoms = session.execute(select(XComModel.task_id, XComModel.key, XComModel.value)
                                .where(XComModel.dag_id == dag_id)).all()
        extras = session.execute(select(AssetEvent.extra).where(AssetEvent.source_dag_id == dag_id)).all()
    return {"rendered": json.dumps([list(r) for r in rendered], default=str),
            "xcom": json.dumps([list(x) for x in xcoms], default=str),
            "asset_extras": json.dumps([e[0] for e in extras], default=str)}


def test_a_dag_run_on_s3_gets_credentials_from_the_connection_and_leaks_them_nowhere(
        airflow_db: None, s3_lake: dict[str, str], s3_options: dict[str, str], tmp_path: pathlib.Path,
        capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    from table_engine import Catalog

    assert not [n for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN") if n in os.environ]
    # the connection's definition is the only place the secret is
    assert not [k for k, v in os.environ.items() if SECRET_KEY in v and k != "AIRFLOW_CONN_PAIMON_DEFAULT"]
    dag = build_dag(s3_lake["source"])
    sync_to_db(dag, tmp_path / "no-dags")
    # the ORM is configured in this thread first: importing/configuring Airflow's models from two threads at once
    # deadlocks (the writer thread queries while dag.test() imports them)
    import airflow.models.taskinstance
    import airflow.serialization.definitions.dag  # noqa: F401
    from sqlalchemy.orm import configure_mappers

    configure_mappers()
    stop, errors = threading.Event(), []  # type: ignore[var-annotated]
    writer = threading.Thread(target=wait_until_deferred_then_write,
                              args=(s3_lake["warehouse"], s3_options, stop, errors), daemon=True)
    writer.start()
    try:
        with CmdlineWatch((SECRET_KEY, ACCESS_KEY)) as watch:
            dr = dag.test()
    finally:
        stop.set()
        writer.join(timeout=60)
    assert not errors, errors
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", states

    # the run did its work on S3
    table = Catalog(s3_lake["warehouse"], s3_options).get_table(TABLE)
    assert sorted(table.read().column("id").to_pylist()) == [1, 2, 3, 100]
    assert table.list_tags() == ["t1"] and table.tag_snapshot("t1").id == 1
    texts = _db_texts()
    xcom = json.loads(texts["xcom"])
    values = {task: json.loads(v) if isinstance(v, str) else v for task, key, v in xcom if key == "return_value"}
    assert values["write"]["snapshot_id"] == 1
    assert values["wait"]["snapshot_id"] == 2  # the trigger found the snapshot committed after the deferral

    # the watch saw the jobs' processes, and no argv held a credential
    assert watch.polls > 10 and any("spark-submit" in s or "SparkSubmit" in s for s in watch.seen), watch.seen
    assert watch.leaks == []
    # nowhere a user (or another user of the host) can read
    for what, text in texts.items():
        assert SECRET_KEY not in text, what
    logs = pathlib.Path(os.environ["AIRFLOW_HOME"]) / "logs"
    log_files = [p for p in logs.rglob("*") if p.is_file()] if logs.exists() else []
    for path in log_files:
        assert SECRET_KEY not in path.read_text(errors="replace"), path
    with capfd.disabled():
        print(f"\nchecked {watch.polls} argv polls of {len(watch.seen)} processes, {len(log_files)} log files")
    out, err = capfd.readouterr()
    assert "spark-submit" in out + err  # the task output (the hook logs the job's argv and output)
    # that the deferred sensor's trigger ran is shown above: snapshot 2 is only written once ``wait`` has deferred,
    # and ``wait`` returned it (where Airflow's own log lines go depends on the logging set up by earlier tests)
    assert SECRET_KEY not in out and SECRET_KEY not in err and SECRET_KEY not in caplog.text
    for path, data in metadata_db_bytes():
        assert SECRET_KEY.encode() not in data, path
