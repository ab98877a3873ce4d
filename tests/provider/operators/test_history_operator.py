"""``PaimonTableHistoryOperator``: builds the ``history`` command from templated text, runs it on the worker (in the
task's process) and logs the commits as a table."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.operators import PaimonTableHistoryOperator

from table_engine.ops import History
from table_engine.run_identity import RunIdentity
from tests.provider.operators.conftest import context


def test_builds_the_history_command_and_runs_locally() -> None:
    op = PaimonTableHistoryOperator(task_id="h", table="db.t", kinds="APPEND, COMPACT", since=1000, until="2000",
                                    before_snapshot="7", limit="10")
    assert op.build_command("/w") == History(warehouse="/w", table="db.t", kinds=("APPEND", "COMPACT"),
                                             since_millis=1000, until_millis=2000, before_snapshot=7, limit=10)
    assert op.spark["runner"] == "local" and op.asset_table is None
    assert PaimonTableHistoryOperator(task_id="h", table="db.t").build_command("/w").limit == 50


def test_lists_the_commits_with_their_runs(paimon_conn: str, capsys: pytest.CaptureFixture[str]) -> None:
    from table_engine import Catalog

    schema = pa.schema([("id", pa.int64())])
    t = Catalog(paimon_conn).create_table("db.h", schema)
    t.write(pa.table({"id": [1, 2]}, schema=schema),
            properties=RunIdentity("load", "manual__1", "write").to_properties())
    t.write(pa.table({"id": [3]}, schema=schema))
    result: Any = PaimonTableHistoryOperator(task_id="h", table="db.h", kinds=["APPEND"]).execute(context())
    assert [(c["snapshot_id"], c["dag_id"]) for c in result["commits"]] == [(2, None), (1, "load")]
    out = capsys.readouterr().out
    assert "load / manual__1 / write try 1" in out and "snapshot  kind" in out
