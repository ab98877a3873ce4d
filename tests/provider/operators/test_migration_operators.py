"""``PaimonCloneOperator``: builds the ``clone`` command from templated text and runs it on the worker (in the
task's process, no Spark), logging the files copied; a re-run copies only what is new."""

from __future__ import annotations

import logging
import pathlib
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.operators import PaimonCloneOperator

from table_engine.ops import Clone
from tests.provider.operators.conftest import context

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_builds_the_clone_command_and_runs_locally() -> None:
    op = PaimonCloneOperator(task_id="c", table="db.t", target_warehouse="s3://b/w", target_table="bak.t",
                             target_catalog_options={"s3.endpoint": "http://127.0.0.1:9000"}, snapshot="3")
    assert op.build_command("/w") == Clone(warehouse="/w", table="db.t", target_warehouse="s3://b/w",
                                           target_table="bak.t", snapshot=3,
                                           target_catalog_options={"s3.endpoint": "http://127.0.0.1:9000"})
    assert op.spark["runner"] == "local" and op.asset_table is None
    assert PaimonCloneOperator(task_id="c", table="db", target_warehouse="/x", excluding_tables=" ") \
        .build_command("/w").excluding_tables is None  # blank template text: no pattern


def test_clones_and_increments(paimon_conn: str, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.src", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    target = str(tmp_path / "copy")
    op = PaimonCloneOperator(task_id="c", table="db.src", target_warehouse=target)
    with caplog.at_level(logging.INFO):
        first: Any = op.execute(context())
    assert first["files_copied"] == first["tables"][0]["files_total"] > 0
    assert "new data files done" in caplog.text
    copy = Catalog(target).get_table("db.src")
    assert copy.read().sort_by("id").to_pylist() == t.read().sort_by("id").to_pylist()
    assert copy.latest_snapshot().properties["airflow.task-id"] == "t"  # type: ignore[union-attr]
    t.write(pa.table({"id": [4], "v": ["d"]}, schema=SCHEMA))
    again: Any = op.execute(context())
    assert again["files_copied"] == 1
    assert Catalog(target).get_table("db.src").read().num_rows == 4
