"""``PaimonCreateTagOperator`` run for real (the engine's CLI on the worker, no Spark): a table with no snapshot yet
skips the task, a table that does not exist fails it."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from airflow.exceptions import AirflowException
from airflow.sdk.exceptions import AirflowSkipException
from paimon_provider.operators import PaimonCreateTagOperator

from tests.provider.operators.conftest import LOCAL, context


@pytest.fixture
def empty_table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    return Catalog(paimon_conn).create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                             options={"bucket": "2"})


def test_create_tag_skips_on_a_table_with_no_snapshot(empty_table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    op = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily-2026-11-22", time_retained="7 d",
                                 spark=LOCAL)
    with pytest.raises(AirflowSkipException, match="no snapshot yet"):
        op.execute(context())  # type: ignore[arg-type]
    assert "db.t has no snapshot yet: nothing to tag" in capsys.readouterr().out  # the task log (structlog)
    assert empty_table.list_tags() == []


def test_create_tag_tags_once_there_is_a_snapshot(empty_table: Any) -> None:
    empty_table.write(pa.table({"id": [1], "dt": ["2026-11-22"]}))
    op = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily-2026-11-22", spark=LOCAL)
    result = op.execute(context())  # type: ignore[arg-type]
    assert result is not None and result["tag"] == "daily-2026-11-22" and result["snapshot_id"] == 1
    assert empty_table.list_tags() == ["daily-2026-11-22"]


def test_create_tag_fails_on_a_missing_table_or_snapshot(empty_table: Any) -> None:
    op = PaimonCreateTagOperator(task_id="t", table="db.missing", tag="x", spark=LOCAL)
    with pytest.raises(AirflowException, match="TableNotExistError"):
        op.execute(context())  # type: ignore[arg-type]
    op = PaimonCreateTagOperator(task_id="t2", table="db.t", tag="x", snapshot_id=3, spark=LOCAL)
    with pytest.raises(AirflowException, match="SnapshotNotExistError"):
        op.execute(context())  # type: ignore[arg-type]
