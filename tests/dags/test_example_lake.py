"""``example_lake.ensure_tables`` (what ``make airflow`` runs first): the lake's tables, empty, exactly as the
layering DAGs create them; idempotent, and existing tables are left alone."""

from __future__ import annotations

import importlib.util
import pathlib
from types import SimpleNamespace
from typing import Any

import example_lake as sample
import pytest

from table_engine import Catalog
from table_engine.cli import main as engine_cli
from table_engine.ops.argv import command_argv
from tests import airflow_env


@pytest.fixture
def paimon_conn(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> str:
    """``paimon_default`` -> a fresh warehouse; ``spark_default`` -> ``local[2]``. The warehouse."""
    warehouse = str(tmp_path / "warehouse")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(warehouse))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    return warehouse


def definition(table: Any) -> dict[str, Any]:
    """What a table is made of: columns (id, name, type), keys, options, comment."""
    s = table.schema
    return {"fields": [(f.id, f.name, str(f.type)) for f in s.fields], "primary_keys": list(s.primary_keys),
            "partition_keys": list(s.partition_keys), "options": dict(s.options), "comment": s.comment}


def printed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """ensure_tables' lines (the engine's log goes to stdout too under Airflow's logging)."""
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("created empty table")]


def lake_dags() -> Any:
    """The layering DAGs' module (``dags/`` is a DAG folder, not a package)."""
    spec = importlib.util.spec_from_file_location("paimon_streaming_lake_for_test",
                                                  airflow_env.DAGS_FOLDER / "paimon_streaming_lake.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ensure_tables_creates_the_missing_tables_empty_and_is_idempotent(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    warehouse = str(tmp_path / "warehouse")
    assert sample.ensure_tables(warehouse) == sample.ALL_TABLES
    assert printed(capsys) == [f"created empty table {name} in {warehouse}" for name in sample.ALL_TABLES]
    catalog = Catalog(warehouse)
    for tdef in sample.LAKE_TABLES:
        table = catalog.get_table(tdef.name)
        assert table.latest_snapshot_id() is None and table.read().num_rows == 0
        assert definition(table) == {
            "fields": [(i, name, str(table.schema.field(name).type)) for i, name in enumerate(tdef.columns)],
            "primary_keys": tdef.primary_keys, "partition_keys": tdef.partition_keys, "options": tdef.options,
            "comment": tdef.comment}
        # the declared types (key columns become NOT NULL, as in every Paimon table)
        assert [str(f.type).removesuffix(" NOT NULL") for f in table.schema.fields] == list(tdef.columns.values())

    # again: nothing to do, nothing printed, nothing changed
    schema_files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("schema-*"))
    assert sample.ensure_tables(warehouse) == [] and printed(capsys) == []
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("schema-*")) == schema_files


def test_ensure_tables_leaves_existing_tables_alone(tmp_path: pathlib.Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    assert sample.ensure_tables(warehouse, (sample.ODS,)) == [sample.ODS.name]
    ods = Catalog(warehouse).get_table(sample.ODS.name)
    ods.write(sample.order_events(1))
    assert sample.ensure_tables(warehouse) == [sample.DWD.name, sample.DWS.name]
    assert ods.latest_snapshot_id() == 1 and ods.read().num_rows == len(sample.order_event_rows(1))


def test_the_tables_match_what_the_layering_dags_create(tmp_path: pathlib.Path, lake: dict[str, str]) -> None:
    """DWD and DWS: the DAGs' create tasks run as they are (into the connection's warehouse). ODS: the DAG's write
    task's arguments on the engine's CLI (the local form of the same job) with a landed sample batch."""
    paimon_conn = lake["warehouse"]
    ensured = str(tmp_path / "ensured")
    sample.ensure_tables(ensured)
    dags = lake_dags()
    ctx = {"ti": SimpleNamespace(dag_id="d", task_id="t", run_id="manual__1", map_index=-1)}
    dags.dwd_dag.get_task("create_dwd_orders").execute(ctx)
    dags.dws_dag.get_task("create_dws_user_daily").execute(ctx)
    append = dags.ods_dag.get_task("append_ods")
    append.source = sample.write_batch(str(tmp_path / "landing"), 1)  # as rendered from land_batch's XCom
    append.commit_user = "test"
    assert engine_cli(command_argv(append.build_command(paimon_conn))) == 0

    by_dags, by_ensure = Catalog(paimon_conn), Catalog(ensured)
    for tdef in (sample.DWD, sample.DWS):
        assert definition(by_ensure.get_table(tdef.name)) == definition(by_dags.get_table(tdef.name))
    ods_dags = definition(by_dags.get_table(sample.ODS.name))
    ods_ensured = definition(by_ensure.get_table(sample.ODS.name))
    # the write job has no comment option: the only difference is the TableDef's comment
    assert ods_dags.pop("comment") is None and ods_ensured.pop("comment") == sample.ODS.comment
    assert ods_ensured == ods_dags

    # and the DAG's next write goes into a table ensure_tables created
    assert engine_cli(command_argv(append.build_command(ensured))) == 0
    assert by_ensure.get_table(sample.ODS.name).read().num_rows == len(sample.order_event_rows(1))
