"""An operator whose job fails on bad input ends with the job's one line ``error: <message>``: the last line of the
AirflowException (the task's failure reason in the task log). Run for real: the engine's CLI on the worker
(``runner=local``), no Spark."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from airflow.exceptions import AirflowException
from paimon_provider.hooks.spark import failure_reason
from paimon_provider.operators import PaimonCreateTagOperator, PaimonDeleteTagOperator

from table_engine.ops.result import JobResult
from tests.provider.operators.conftest import LOCAL, context


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", pa.schema([("id", pa.int64())]), primary_keys=["id"],
                                          options={"bucket": "1"})
    t.write(pa.table({"id": [1]}))
    return t


def test_a_job_failure_ends_with_the_one_line_reason(table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    op = PaimonDeleteTagOperator(task_id="dt", table="db.t", tag="nope", spark=LOCAL)  # found by the job only
    with pytest.raises(AirflowException) as info:
        op.execute(context())  # type: ignore[arg-type]
    last = str(info.value).strip().splitlines()[-1]
    assert last == f"error: tag 'nope' of table {table.path} does not exist", str(info.value)
    assert "failed: TagNotExistError" in str(info.value)  # found by the engine in the task's process
    assert "Traceback" not in str(info.value)
    assert last in capsys.readouterr().out  # logged as the task's error (structlog writes the task log to stdout)
    assert table.latest_snapshot_id() == 1


def test_an_argument_error_ends_with_the_one_line_reason(table: Any) -> None:
    op = PaimonCreateTagOperator(task_id="tag", table="db.t", tag="x", spark=LOCAL, extra_args=["--snapshot", "0"])
    with pytest.raises(AirflowException) as info:
        op.execute(context())  # type: ignore[arg-type]
    assert "exit code 2" in str(info.value)
    assert str(info.value).strip().splitlines()[-1] == \
        "error: table-engine create-tag: argument --snapshot: must be at least 1, got 0"
    assert table.list_tags() == []


def test_failure_reason() -> None:
    assert failure_reason(["x", "error: a", "y", "error: b", "{}"], None) == "error: b"
    assert failure_reason(["no line"], JobResult.from_dict({"status": "error", "error": "E: m"})) == "error: E: m"
    assert failure_reason(["no line"], JobResult.from_dict({"status": "ok"})) is None
