"""Failures that retrying cannot fix fail the task at once (AirflowFailException, no retry): bad arguments before
anything runs, and the engine's bad-input errors reported by the job (``"retryable": false``). The failure names
the command and the table, its last line is the engine's one-line error. Run for real: the engine's CLI on the
worker (``runner=local``), no Spark."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from airflow.sdk.exceptions import AirflowException, AirflowFailException
from paimon_provider.operators import (
    PaimonCompactOperator,
    PaimonExpireSnapshotsOperator,
    PaimonRollbackOperator,
)
from paimon_provider.utils.arguments import partition_texts

from table_engine.ops.result import JobResult
from tests.provider.operators.conftest import LOCAL, context


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", pa.schema([("id", pa.int64()), ("dt", pa.string())]),
                                          primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    t.write(pa.table({"id": [1], "dt": ["2026-11-20"]}))
    t.write(pa.table({"id": [2], "dt": ["2026-11-20"]}))
    return t


def fails_at_once(op: Any) -> list[str]:
    with pytest.raises(AirflowFailException) as info:
        op.execute(context())
    return str(info.value).splitlines()


def test_an_unknown_table_fails_at_once(table: Any) -> None:
    lines = fails_at_once(PaimonRollbackOperator(task_id="rb", table="db.missing", snapshot_id=1, spark=LOCAL))
    assert lines[0].startswith("rollback of table db.missing failed: ") and "not retried" in lines[0], lines
    assert lines[-1].startswith("error: table 'db.missing' does not exist"), lines


def test_a_bad_snapshot_id_fails_at_once(table: Any) -> None:
    lines = fails_at_once(PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id=9, spark=LOCAL))
    assert lines[-1] == f"error: snapshot 9 of table {table.path} does not exist", lines
    assert table.latest_snapshot_id() == 2


def test_bad_arguments_fail_before_anything_runs(table: Any) -> None:
    lines = fails_at_once(PaimonExpireSnapshotsOperator(task_id="e", table="db.t", older_than="5 fortnights ago",
                                                        spark=LOCAL))
    assert lines[0].startswith("expire-snapshots of table db.t failed: its arguments are invalid"), lines
    assert lines[-1].startswith("error: older_than: ") and "'5 fortnights'" in lines[-1], lines
    lines = fails_at_once(PaimonCompactOperator(task_id="c", table="db.t", partitions="dt", spark=LOCAL))
    assert lines[-1] == "error: partition spec 'dt' must look like 'k=v,k2=v2' (item 'dt')", lines
    assert table.latest_snapshot_id() == 2


def test_rollback_needs_exactly_one_target_up_front(table: Any) -> None:
    lines = fails_at_once(PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id="1", tag="t1",
                                                 spark=LOCAL))
    assert "exactly one of version, snapshot_id and tag, got snapshot_id 1, tag 't1'" in lines[-1], lines
    lines = fails_at_once(PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id="None", tag="None",
                                                 spark=LOCAL))
    assert "got none of them" in lines[-1], lines
    lines = fails_at_once(PaimonRollbackOperator(task_id="rb", table="db.t", version="2", tag="t1", spark=LOCAL))
    assert "got version '2', tag 't1'" in lines[-1], lines
    assert table.latest_snapshot_id() == 2


def test_rollback_by_snapshot_id_alone_or_tag_alone(table: Any) -> None:
    table.create_tag("first", 1)
    # what templates render from a form with the other field left empty (None -> "None")
    PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id="2", tag="None", spark=LOCAL).execute(
        context())  # type: ignore[arg-type]
    assert table.latest_snapshot_id() == 2
    PaimonRollbackOperator(task_id="rb", table="db.t", snapshot_id="None", tag="first", spark=LOCAL).execute(
        context())  # type: ignore[arg-type]
    assert table.latest_snapshot_id() == 1


def test_rollback_by_version_snapshot_id_or_tag(table: Any) -> None:
    """The rollback form's one field: digits are a snapshot id, other text a tag (as Paimon's procedure)."""
    table.create_tag("first", 1)
    table.create_tag("20261127", 2)  # an automatic daily tag (tag.period-formatter = without_dashes)
    with pytest.raises(Exception, match="snapshot 20261127"):  # digits: a snapshot id, as Paimon's procedure
        PaimonRollbackOperator(task_id="rb", table="db.t", version="20261127", spark=LOCAL).execute(
            context())  # type: ignore[arg-type]
    PaimonRollbackOperator(task_id="rb", table="db.t", version=" tag:20261127 ", spark=LOCAL).execute(
        context())  # type: ignore[arg-type]
    assert table.latest_snapshot_id() == 2
    PaimonRollbackOperator(task_id="rb", table="db.t", version="1", spark=LOCAL).execute(
        context())  # type: ignore[arg-type]
    assert table.latest_snapshot_id() == 1 and table.list_tags() == ["first"]


def test_empty_optional_fields_render_as_none() -> None:
    assert partition_texts("None") == [] and partition_texts("") == [] and partition_texts(None) == []
    op = PaimonExpireSnapshotsOperator(task_id="e", table="db.t", older_than="None", retain_min="None")
    cmd = op.build_command("/wh")
    assert cmd.older_than_millis is None and cmd.retain_min is None


def test_retryable_failures_are_not_failed_at_once() -> None:
    assert JobResult.worth_retrying(JobResult.from_dict({"status": "error", "retryable": True}), 1)
    assert not JobResult.worth_retrying(JobResult.from_dict({"status": "error", "retryable": False}), 1)
    assert not JobResult.worth_retrying(None, 2)  # arguments that do not parse
    assert JobResult.worth_retrying(None, 137)  # killed, crashed: may succeed next time
    assert issubclass(AirflowFailException, AirflowException)


def test_a_table_feature_the_engine_cannot_maintain_fails_at_once(table: Any) -> None:
    """The capability gate's UnsupportedTableFeatureError is not retryable: the task fails without retries."""
    import json
    import pathlib

    schema_file = pathlib.Path(table.path) / "schema" / "schema-0"
    data = json.loads(schema_file.read_text())
    data["options"]["bucket-function.type"] = "mod"  # as Paimon 1.3+ writers declare it
    schema_file.write_text(json.dumps(data))
    lines = fails_at_once(PaimonExpireSnapshotsOperator(task_id="e", table="db.t", spark=LOCAL))
    assert lines[0].startswith("expire-snapshots of table db.t failed: ") and "not retried" in lines[0], lines
    assert lines[-1].startswith("error: table db.t uses bucket-function.type (option 'bucket-function.type' = "
                                "'mod'), a feature of Paimon 1.3"), lines
    assert lines[-1].endswith("the engine can only read this table"), lines
    assert table.latest_snapshot_id() == 2
