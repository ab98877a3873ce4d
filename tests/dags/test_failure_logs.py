"""A failed task's log in a real ``dag.test()`` run: ``paimon_compact``'s operator on a table that does not exist
fails before spark-submit (no process is started), and the operator's log ends with exactly two ERROR lines, the
summary and ``error: <the engine's one-line error>``, each once; the log has no duplicated line; Airflow's failure
record that follows has one stack frame of the provider's."""

from __future__ import annotations

import datetime
import pathlib
import re
import subprocess
from typing import Any

import pyarrow as pa
import pytest
from example_lake import SMALL_LOCAL_SPARK_CONF
from paimon_provider.operators import PaimonCompactOperator

from tests import airflow_env

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(600)]

DAG_ID = "paimon_failure_logs"
RECORD = re.compile(r"^\S+Z \[(\w+)\s*\] (.*?)\s* \[([\w.]+)\](?: .*)?$")


def build_dag() -> Any:
    from airflow.sdk import DAG

    with DAG(DAG_ID, schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        PaimonCompactOperator(task_id="compact", table="dwd.no_such_table", full=True,
                              spark={"conf": SMALL_LOCAL_SPARK_CONF})
    return dag


def test_an_unknown_table_fails_before_spark_with_a_two_line_log(
        airflow_db: None, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from table_engine import Catalog
    from tests.dags.test_s3_credentials import sync_to_db

    warehouse = str(tmp_path / "warehouse")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(warehouse))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    Catalog(warehouse).create_table("dwd.orders", pa.schema([("id", pa.int64())]))
    started: list[list[str]] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            started.append(list(map(str, args)))
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    dag = build_dag()
    sync_to_db(dag, tmp_path / "no-dags")
    capsys.readouterr()
    dr = dag.test()
    out = capsys.readouterr().out
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert states == {"compact": "failed"}, states
    jobs = [argv for argv in started if any("spark-submit" in a or "table_engine" in a for a in argv)]
    assert jobs == [], jobs  # no spark-submit (no JVM, no SparkContext), no job at all: the table was checked first
    records = [m.groups() for m in map(RECORD.match, out.splitlines()) if m is not None]
    task = [(level, text) for level, text, logger in records if logger.startswith("airflow.task.")]
    summary = ("compact of table dwd.no_such_table failed: TableNotExistError, found before starting any job (not "
               "retried: running it again cannot fix this)")
    error = f"error: table 'dwd.no_such_table' does not exist in {warehouse}"
    assert task[-2:] == [("error", summary), ("error", error)], task
    texts = [text for _, text in task]
    assert texts.count(summary) == 1 and texts.count(error) == 1 and len(texts) == len(set(texts)), texts
    # then Airflow's own failure record of the task runner: the exception's value is the same two lines
    after = [text for _, text, logger in records if logger == "task"]
    assert "Task failed with exception" in after, after
    assert out.rstrip().count(f"AirflowFailException: {summary}\n{error}") == 1
    # its traceback has the runner's frames and one of the provider's (the re-raise that cut the others off)
    traceback = out[out.index("Traceback (most recent call last):"):out.index("AirflowFailException: ")]
    frames = re.findall(r'^  File "([^"]+)", line \d+, in (\w+)$', traceback, re.MULTILINE)
    ours = [(path.rsplit("/", 1)[-1], fn) for path, fn in frames if "paimon_provider" in path]
    assert ours == [("base.py", "run")], frames
