"""``PaimonTableCheckOperator`` run for real (the engine's CLI on the worker, no Spark) on a real table: the result in
XCom, the checks as an aligned table in the task log, a failed check failing the task at once with the two-line
failure, bad definitions, and templated checks."""

from __future__ import annotations

import datetime
import pathlib
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.operators import PaimonTableCheckOperator
from paimon_provider.operators.check import check_table_lines

from tests.provider.operators.conftest import context


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", pa.schema([("id", pa.int64()), ("dt", pa.string()),
                                                             ("email", pa.string())]),
                                          primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    t.write(pa.table({"id": [1, 2, 3], "dt": ["2026-11-20"] * 3, "email": ["a@x", None, "c@x"]}))
    return t


class TaskInstance(SimpleNamespace):
    """The task instance of :func:`context`, recording what the operator pushes to XCom."""

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value


def run_context() -> tuple[dict[str, Any], dict[str, Any]]:
    ctx = context()
    pushed: dict[str, Any] = {}
    ctx["ti"] = TaskInstance(**vars(ctx["ti"]), pushed=pushed)
    return ctx, pushed


GOOD = [{"check": "row_count", "min": 1}, {"check": "no_duplicate_keys"},
        {"check": "null_fraction", "column": "email", "max": 0.5}]


def test_passing_checks_return_their_results_and_log_a_table(table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ctx, pushed = run_context()
    result = PaimonTableCheckOperator(task_id="checks", table="db.t", checks=GOOD).execute(ctx)  # type: ignore[arg-type]
    assert result is not None and result["passed"] is True and result["snapshot_id"] == 1 and result["failed"] == []
    assert [c["name"] for c in result["checks"]] == ["row_count", "no_duplicate_keys", "null_fraction(email)"]
    assert pushed["checks"] == result["checks"]
    log = capsys.readouterr().out
    for line in check_table_lines(result["checks"]):
        assert line in log
    assert "null_fraction(email)  passed  0.3333    <= 0.5" in log


def test_fresh_and_usual_data_reported_to_the_declared_assets(table: Any) -> None:
    """Freshness and volume through the operator: passing, their results in the extra of each declared outlet's
    event (a downstream DAG scheduled on that Asset runs only on fresh data); a stale table fails the task."""
    from airflow.sdk import Asset

    ready = Asset("quality://db.t/fresh")
    ctx, _ = run_context()
    op = PaimonTableCheckOperator(task_id="fresh", table="db.t", outlets=[ready], checks=[
        {"check": "freshness", "max_age": "1 h"}, {"check": "volume"}])
    result = op.execute(ctx)  # type: ignore[arg-type]
    assert result is not None and result["passed"] is True
    extra = ctx["outlet_events"][ready].extra
    assert extra["table"] == "db.t" and extra["snapshot_id"] == 1
    assert [(c["name"], c["check"]) for c in extra["checks"]] == [("freshness", "freshness"), ("volume", "volume")]
    assert extra["checks"][1]["observed"] == 3  # the one commit's row delta (not judged: no earlier commit)
    stale = PaimonTableCheckOperator(task_id="stale", table="db.t", outlets=[ready],
                                     checks=[{"check": "freshness", "max_age": 1}])
    ctx, _ = run_context()
    with pytest.raises(AirflowFailException, match="1 of 1 checks failed on snapshot 1: freshness"):
        stale.execute(ctx)  # type: ignore[arg-type]
    assert "checks" not in ctx["outlet_events"][ready].extra


def test_the_log_table_is_aligned() -> None:
    lines = check_table_lines([
        {"name": "row_count", "passed": True, "observed": 12, "expected": ">= 1", "message": "12 rows"},
        {"name": "null_fraction(email)", "passed": False, "observed": 0.25, "expected": "<= 0.1", "message": "m"}])
    assert lines == ["check                 result  observed  expected  message",
                     "row_count             passed  12        >= 1      12 rows",
                     "null_fraction(email)  FAILED  0.25      <= 0.1    m"]


def test_a_failed_check_fails_the_task_at_once(table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ctx, pushed = run_context()
    op = PaimonTableCheckOperator(task_id="checks", table="db.t", checks=[
        *GOOD, {"check": "values_in_set", "column": "email", "values": ["a@x"], "name": "known emails"},
        {"check": "row_count", "max": 2, "name": "small"}])
    with pytest.raises(AirflowFailException) as info:
        op.execute(ctx)  # type: ignore[arg-type]
    lines = str(info.value).splitlines()
    assert lines == [
        "check of table db.t failed: 2 of 5 checks failed on snapshot 1: known emails, small (not retried: running "
        "it again cannot fix this)",
        "error: known emails: 1 of 3 rows with email not in the set: 'c@x' (expected 0 values outside {'a@x'}); "
        "small: 3 rows (expected <= 2)"]
    assert [c["passed"] for c in pushed["checks"]] == [True, True, True, False, False]
    log = capsys.readouterr().out
    assert "known emails          FAILED  1" in log
    assert lines[1] in log.rstrip().splitlines()[-1]  # the failure's reason is the log's last line
    assert table.latest_snapshot_id() == 1


def test_bad_definitions_fail_at_once(table: Any) -> None:
    op = PaimonTableCheckOperator(task_id="c", table="db.t", checks=[{"check": "null_fraction", "max": 0.1}])
    with pytest.raises(AirflowFailException) as info:
        op.execute(run_context()[0])  # type: ignore[arg-type]
    lines = str(info.value).splitlines()
    assert lines[0].startswith("check of table db.t failed: its arguments are invalid"), lines
    assert lines[-1] == "error: check: --checks check 1 (null_fraction): column is required", lines
    op = PaimonTableCheckOperator(task_id="c", table="db.t", checks=[{"check": "null_fraction", "column": "mail"}])
    with pytest.raises(AirflowFailException) as info:
        op.execute(run_context()[0])  # type: ignore[arg-type]
    assert str(info.value).splitlines()[-1].startswith(
        "error: check 'null_fraction(mail)' (null_fraction): unknown column 'mail'; columns are ['id', 'dt', 'email']")


def test_checks_are_templated(table: Any) -> None:
    from airflow.sdk import DAG, Param

    with DAG("check_probe", schedule=None, params={"min_rows": Param(3), "day": Param("2026-11-20"),
                                                   "checks": Param([{"check": "row_count", "max": 3}])}) as dag:
        op = PaimonTableCheckOperator(task_id="c", table="db.t", checks=[
            {"check": "row_count", "min": "{{ params.min_rows }}", "where": [["dt", "=", "{{ params.day }}"]]}])
        from_json_text = PaimonTableCheckOperator(task_id="j", table="db.t", checks="{{ params.checks | tojson }}")
    for task in (op, from_json_text):
        task.render_template_fields({"params": dag.params.dump(), "dag": dag})
    assert op.checks == [{"check": "row_count", "min": "3", "where": [["dt", "=", "2026-11-20"]]}]
    result = op.execute(run_context()[0])  # type: ignore[arg-type]
    assert result is not None and result["checks"][0]["observed"] == 3 and result["passed"]
    result = from_json_text.execute(run_context()[0])  # type: ignore[arg-type]
    assert result is not None and result["checks"][0]["expected"] == "<= 3" and result["passed"]


@pytest.mark.airflow
@pytest.mark.timeout(600)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Airflow's DAG run code and its dependencies (as tests/dags)
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_in_a_dag_run_the_checks_are_in_xcom_when_the_task_fails(
        airflow_db: None, table: Any, tmp_path: pathlib.Path) -> None:
    """A real ``dag.test()`` run: the audit task fails (not retried) and a downstream task (``all_done``) reads each
    check's result from XCom ``checks``."""
    from airflow.sdk import DAG, task

    from tests.dags.test_s3_credentials import sync_to_db

    seen: list[Any] = []
    with DAG("paimon_check_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        audit = PaimonTableCheckOperator(task_id="audit", table="db.t", retries=2, checks=[
            {"check": "row_count", "min": 1}, {"check": "null_fraction", "column": "email"}])

        @task(trigger_rule="all_done")
        def report(ti: Any = None) -> None:
            seen.append(ti.xcom_pull(task_ids="audit", key="checks"))

        audit >> report()
    sync_to_db(dag, tmp_path / "no-dags")
    dr = dag.test()
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert states == {"audit": "failed", "report": "success"}, states
    assert [(c["name"], c["passed"]) for c in seen[0]] == [("row_count", True), ("null_fraction(email)", False)]
