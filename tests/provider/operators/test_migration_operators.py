"""``PaimonCloneOperator`` and ``PaimonMigrateTableOperator``: build their commands from templated text and run
them on the worker (in the task's process, no Spark); clone logs the files copied and a re-run copies only what is
new; migrate moves a directory's files into a new table and emits its Asset event."""

from __future__ import annotations

import logging
import pathlib
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.operators import PaimonCloneOperator, PaimonMigrateTableOperator

from table_engine.ops import Clone, MigrateTable
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
    assert "new data and index files done" in caplog.text
    copy = Catalog(target).get_table("db.src")
    assert copy.read().sort_by("id").to_pylist() == t.read().sort_by("id").to_pylist()
    assert copy.latest_snapshot().properties["airflow.task-id"] == "t"  # type: ignore[union-attr]
    t.write(pa.table({"id": [4], "v": ["d"]}, schema=SCHEMA))
    again: Any = op.execute(context())
    assert again["files_copied"] == 1
    assert Catalog(target).get_table("db.src").read().num_rows == 4


def test_migrate_builds_its_command_and_moves_the_files(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    import pyarrow.parquet as pq

    from table_engine import Catalog

    op = PaimonMigrateTableOperator(task_id="m", table="db.m", source=str(tmp_path / "src"), delete_origin="true",
                                    table_options={"owner": "etl"})
    assert op.build_command("/w") == MigrateTable(warehouse="/w", table="db.m", source=str(tmp_path / "src"),
                                                  delete_origin=True, options={"owner": "etl"})
    assert op.spark["runner"] == "local" and op.asset_table == "db.m"
    for dt in ("a", "b"):
        (tmp_path / "src" / f"dt={dt}").mkdir(parents=True)
        pq.write_table(pa.table({"id": [1, 2], "v": [dt, dt]}, schema=SCHEMA),
                       str(tmp_path / "src" / f"dt={dt}" / "part-0.parquet"))
    ctx = context()
    result: Any = op.execute(ctx)
    assert result["files"] == 2 and result["rows"] == 4 and not (tmp_path / "src").exists()
    t = Catalog(paimon_conn).get_table("db.m")
    assert sorted(t.read().column("dt").to_pylist()) == ["a", "a", "b", "b"]
    assert ctx["outlet_events"][op.outlets[0]].extra["added_rows"] == 4  # the Asset event of its first snapshot


def test_migrate_a_retry_of_the_task_finds_its_table(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    import pyarrow.parquet as pq

    (tmp_path / "src").mkdir()
    pq.write_table(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA), str(tmp_path / "src" / "part-0.parquet"))
    op = PaimonMigrateTableOperator(task_id="m", table="db.r", source=str(tmp_path / "src"))
    first: Any = op.execute(context())
    op.commit_user = None  # a new try of the same task instance derives the same commit user
    again: Any = op.execute(context())
    assert first["snapshot_id"] == again["snapshot_id"] == 1 and again["already_done"] is True


def test_migrate_database_builds_its_command() -> None:
    from paimon_provider.operators import PaimonMigrateDatabaseOperator

    from table_engine.ops import MigrateDatabase

    op = PaimonMigrateDatabaseOperator(task_id="d", database="ods", table_options={"owner": "etl"}, commit_user="u")
    assert op.build_command("/w") == MigrateDatabase(warehouse="/w", table="ods", options={"owner": "etl"},
                                                     commit_user="u")
    assert op.database == "ods" and op.spark["runner"] == "local" and op.asset_table is None


def test_clone_a_database(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    from table_engine import Catalog

    for name in ("a", "b"):
        Catalog(paimon_conn).create_table(f"ods.{name}", SCHEMA).write(
            pa.table({"id": [1], "v": [name]}, schema=SCHEMA))
    target = str(tmp_path / "copy")
    result: Any = PaimonCloneOperator(task_id="c", table="ods", target_table="bak", target_warehouse=target,
                                      excluding_tables="ods\\.b").execute(context())
    assert [t["target"] for t in result["tables"]] == ["bak.a"]
    assert Catalog(target).get_table("bak.a").read().column("v").to_pylist() == ["a"]


def test_clone_refuses_secrets_in_the_target_options() -> None:
    """A secret would be a rendered template field and travel in a job's command line: refused by its key."""
    with pytest.raises(ValueError, match=r"must not hold secrets \(s3.secret-key\)") as info:
        PaimonCloneOperator(task_id="c", table="db.t", target_warehouse="s3://b/w",
                            target_catalog_options={"s3.endpoint": "http://127.0.0.1:9000", "s3.secret-key": "hush"})
    assert "hush" not in str(info.value)
