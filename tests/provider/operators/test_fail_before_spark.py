"""Inputs the worker checks cheaply from the table's schema (an unknown table, a partition naming a column that is
not a partition column) fail the task before spark-submit, with the worker route's one-line error; a failed task's
log ends with exactly two ERROR lines, the summary and ``error: <the engine's one-line error>``, each once, and has
no duplicated line. Run for real: ``execute`` of the operators (no process is started for the checked inputs; the
engine's CLI on the worker for the control), the task log as structlog writes it (stdout)."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pyarrow as pa
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.hooks.spark import job_log_record
from paimon_provider.operators import (
    PaimonCompactOperator,
    PaimonCreateBranchOperator,
    PaimonCreateTagOperator,
    PaimonDeleteTagOperator,
    PaimonExpireSnapshotsOperator,
    PaimonRollbackOperator,
    PaimonWriteOperator,
)

from tests.provider.operators.conftest import LOCAL, context

LOG_LINE = re.compile(r"^\S+Z \[(?P<level>\w+)\s*\] (?P<text>.*?) \[[\w.]+\](?: loc=\S+)?$")


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", pa.schema([("id", pa.int64()), ("dt", pa.string())]),
                                          primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    t.write(pa.table({"id": [1], "dt": ["2026-11-20"]}))
    return t


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argv of every job process (spark-submit, the engine's CLI) this test's code starts (each one really
    runs)."""
    argvs: list[list[str]] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            argv = list(map(str, args))
            if any("spark-submit" in a or "table_engine" in a for a in argv):
                argvs.append(argv)
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    return argvs


def task_log(out: str) -> list[tuple[str, str]]:
    """(level, text) of each record of the captured task log."""
    records = []
    for line in out.splitlines():
        m = LOG_LINE.match(line)
        if m is not None:
            records.append((m.group("level"), m.group("text")))
    return records


def fail(op: Any, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], list[tuple[str, str]]]:
    capsys.readouterr()
    with pytest.raises(AirflowFailException) as info:
        op.execute(context())
    return str(info.value).splitlines(), task_log(capsys.readouterr().out)


def ends_with_the_two_lines(message: list[str], log: list[tuple[str, str]]) -> None:
    assert len(message) == 2 and message[1].startswith("error: "), message
    assert log[-2:] == [("error", message[0]), ("error", message[1])], log[-4:]
    texts = [text for _, text in log]
    assert texts.count(message[0]) == 1 and texts.count(message[1]) == 1, texts
    assert len(texts) == len(set(texts)), f"a duplicated line: {texts}"


def test_an_unknown_table_fails_before_spark_submit(table: Any, started: list[list[str]],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    message, log = fail(PaimonCompactOperator(task_id="c", table="db.no_such_table", full=True), capsys)
    assert started == []  # no spark-submit, no JVM: the Spark route was not taken
    assert message[0] == ("compact of table db.no_such_table failed: TableNotExistError, found before starting any "
                          "job (not retried: running it again cannot fix this)"), message
    # the worker route's error line, word for word
    assert message[1] == f"error: table 'db.no_such_table' does not exist in {table.path.rsplit('/db.db/', 1)[0]}"
    ends_with_the_two_lines(message, log)
    message, _ = fail(PaimonRollbackOperator(task_id="rb", table="db.no_such_table", snapshot_id=1,
                                             spark={"runner": "spark"}), capsys)
    assert started == [] and message[1].startswith("error: table 'db.no_such_table' does not exist"), message


def test_an_unknown_partition_column_fails_before_spark_submit(table: Any, started: list[list[str]],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    message, log = fail(PaimonCompactOperator(task_id="c", table="db.t", partitions="day=2026-11-20"), capsys)
    assert started == [], started
    assert message[1].startswith("error: ") and "'day'" in message[1], message
    ends_with_the_two_lines(message, log)
    assert table.latest_snapshot_id() == 1


def test_a_bad_table_option_fails_before_spark_submit(table: Any, started: list[list[str]],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    message, log = fail(PaimonWriteOperator(task_id="w", table="db.new", source="/nowhere", primary_keys=["id"],
                                            table_options={"bucket": "1", "merge-engine": "dedup"}), capsys)
    assert started == [], started
    assert message[1].startswith("error: ") and "merge-engine" in message[1], message
    ends_with_the_two_lines(message, log)


def test_a_missing_snapshot_or_tag_to_start_from_fails_before_any_process(
        table: Any, started: list[list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    """A rollback to a snapshot or tag that does not exist, a tag of a missing snapshot, a branch from a missing
    tag: the job's own error, found on the worker before any process starts; the table untouched."""
    message, log = fail(PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id=7, spark=LOCAL), capsys)
    assert message[1] == f"error: snapshot 7 of table {table.path} does not exist", message
    ends_with_the_two_lines(message, log)
    message, _ = fail(PaimonRollbackOperator(task_id="rb", table="db.t", tag="nope", spark=LOCAL), capsys)
    assert message[1] == f"error: tag 'nope' of table {table.path} does not exist", message
    message, _ = fail(PaimonCreateTagOperator(task_id="ct", table="db.t", tag="x", snapshot_id=9, spark=LOCAL), capsys)
    assert message[1] == f"error: snapshot 9 of table {table.path} does not exist", message
    message, _ = fail(PaimonCreateBranchOperator(task_id="cb", table="db.t", branch="b", tag="nope", spark=LOCAL),
                      capsys)
    assert message[1] == f"error: tag 'nope' of table {table.path} does not exist", message
    assert started == [], started
    assert table.latest_snapshot_id() == 1 and table.tags() == [] and table.list_branches() == []
    # what exists passes the check: the job runs, in the task's process (a rollback to the latest changes nothing)
    result = PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id=1, spark=LOCAL).execute(context())
    assert result is not None and result["status"] == "ok", result
    assert started == [] and table.latest_snapshot_id() == 1


def test_a_job_failure_log_ends_with_the_two_lines_once(table: Any, started: list[list[str]],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    message, log = fail(PaimonDeleteTagOperator(task_id="dt", table="db.t", tag="nope", spark=LOCAL), capsys)
    # the control: the table exists, the engine ran the command in the task's process (no process) and it failed
    assert started == [], started
    assert message[1] == f"error: tag 'nope' of table {table.path} does not exist", message
    ends_with_the_two_lines(message, log)
    assert message[0] == "delete-tag of table db.t failed: TagNotExistError (not retried: running it again cannot " \
        "fix this)", message
    assert sum("running it with the engine in this task's process" in text for _, text in log) == 1, log
    # with env_vars (only a process of its own has them) the engine's CLI runs as a process, and fails the same way
    message, log = fail(PaimonDeleteTagOperator(task_id="dt", table="db.t", tag="nope",
                                                spark={**LOCAL, "env_vars": {"TZ": "UTC"}}), capsys)
    assert len(started) == 1 and message[1] == f"error: tag 'nope' of table {table.path} does not exist", message
    ends_with_the_two_lines(message, log)
    assert ("error", f"table_engine.cli: delete-tag db.t failed: tag 'nope' of table {table.path} does not exist") \
        in log, log
    assert sum(text.startswith("command: ") for _, text in log) == 1, log


def test_a_form_field_is_named_as_the_form_shows_it(table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    message, log = fail(PaimonExpireSnapshotsOperator(task_id="e", table="db.t", older_than="5 fortnights ago",
                                                      spark=LOCAL), capsys)
    assert "--older-than" not in message[1] and "older_than: '5 fortnights ago': '5 fortnights' before 'ago' is " \
        "not a duration" in message[1], message
    ends_with_the_two_lines(message, log)


def test_job_log_record() -> None:
    assert job_log_record("2026-11-27 10:52:42,123 ERROR table_engine.cli: compact db.t failed: x") == \
        (40, "table_engine.cli: compact db.t failed: x")
    assert job_log_record("26/11/27 10:52:42 WARN NativeCodeLoader: no native") == (30, "NativeCodeLoader: no native")
    assert job_log_record("error: x")[0] is None
    assert job_log_record('{"command": "compact", "status": "error"}')[0] is None
    assert job_log_record("plain output") == (20, "plain output")


def test_spark_jobs_run_without_pyspark_pandas_warning(table: Any, paimon_conn: str) -> None:
    import sys

    from paimon_provider.hooks.spark import PaimonSparkHook
    from paimon_provider.utils.job_spec import SparkJobSpec

    from table_engine.ops import Compact

    sub = PaimonSparkHook().build_submission(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")))
    assert sub.route == "spark-submit"
    # the environment the job's Python processes get: PySpark's pandas check says nothing there
    check = "from pyspark.sql.pandas.utils import require_minimum_pandas_version as r; r()"
    done = subprocess.run([sys.executable, "-c", check], env=sub.env, capture_output=True, text=True,
                          check=True)
    assert "FutureWarning" not in done.stderr, done.stderr
