"""``PaimonAlterTableOperator`` run for real (the engine on the worker, no Spark) on a real table: the changes built
into the ``alter-table`` command from a list or templated JSON text, the new schema in XCom, and a change that does
not apply failing the task at once with the table left as it was."""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pyarrow as pa
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.operators import PaimonAlterTableOperator

from table_engine.ops import AlterTable
from tests.provider.operators.conftest import context
from tests.table_engine.test_bad_input import warehouse_state

CHANGES = [{"action": "add-column", "name": "c", "type": "BIGINT", "comment": "new", "after": "id"},
           {"action": "rename-column", "name": "v", "new_name": "value"},
           {"action": "update-comment", "comment": "orders"}]


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                          primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    return t


def test_builds_the_alter_table_command_and_runs_locally() -> None:
    op = PaimonAlterTableOperator(task_id="a", table="db.t", changes=CHANGES)
    assert op.build_command("/w") == AlterTable(warehouse="/w", table="db.t", changes=tuple(CHANGES))
    assert op.spark["runner"] == "local"
    text = PaimonAlterTableOperator(task_id="a", table="db.t", changes='{"action": "drop-column", "name": "v"}')
    assert text.build_command("/w").changes == ({"action": "drop-column", "name": "v"},)


def test_alters_the_table_and_returns_the_new_schema(table: Any, paimon_conn: str) -> None:
    from table_engine import Catalog

    result: Any = PaimonAlterTableOperator(task_id="a", table="db.t", changes=CHANGES).execute(context())
    assert result["schema_id"] == 1 and [f["name"] for f in result["fields"]] == ["id", "c", "value"]
    t = Catalog(paimon_conn).get_table("db.t")
    assert t.schema.comment == "orders" and t.schema.field("c").description == "new"
    assert t.read().sort_by("id").to_pylist() == [{"id": 1, "c": None, "value": "a"},
                                                  {"id": 2, "c": None, "value": "b"}]


def test_a_change_that_does_not_apply_fails_at_once_and_changes_nothing(table: Any, paimon_conn: str) -> None:
    before = warehouse_state(paimon_conn)
    op = PaimonAlterTableOperator(task_id="a", table="db.t", changes=[
        {"action": "add-column", "name": "ok", "type": "INT"}, {"action": "drop-column", "name": "id"}])
    with pytest.raises(AirflowFailException) as info:
        op.execute(context())  # type: ignore[arg-type]
    assert str(info.value).splitlines()[-1] == "error: cannot drop key column 'id'"
    op = PaimonAlterTableOperator(task_id="a", table="db.t", changes=[{"action": "add-column", "name": "x",
                                                                        "type": "BIGGINT"}])
    with pytest.raises(AirflowFailException) as info:
        op.execute(context())  # type: ignore[arg-type]
    assert "unknown data type 'BIGGINT'" in str(info.value).splitlines()[-1]
    assert warehouse_state(paimon_conn) == before


def test_changes_are_templated(table: Any, paimon_conn: str) -> None:
    from airflow.sdk import DAG, Param

    from table_engine import Catalog

    with DAG("alter_probe", schedule=None, params={"column": Param("d"), "changes": Param(
            [{"action": "set-option", "key": "snapshot.num-retained.min", "value": "5"}])}) as dag:
        op = PaimonAlterTableOperator(task_id="a", table="db.t", changes=[
            {"action": "add-column", "name": "{{ params.column }}", "type": "STRING", "first": True}])
        from_text = PaimonAlterTableOperator(task_id="j", table="db.t", changes="{{ params.changes | tojson }}")
    for task in (op, from_text):
        task.render_template_fields({"params": dag.params.dump(), "dag": dag})
    result: Any = op.execute(context())
    assert result["fields"][0]["name"] == "d"
    result = from_text.execute(context())
    assert result["schema_id"] == 2
    assert Catalog(paimon_conn).get_table("db.t").schema.options["snapshot.num-retained.min"] == "5"


@pytest.mark.airflow
@pytest.mark.timeout(600)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Airflow's DAG run code and its dependencies (as tests/dags)
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_in_a_dag_run_the_new_schema_is_in_xcom_and_a_bad_change_fails_without_retries(
        airflow_db: None, table: Any, paimon_conn: str, tmp_path: pathlib.Path) -> None:
    """A real ``dag.test()`` run: ``evolve`` alters the table and a downstream task reads the new schema from XCom;
    ``refused`` (retries=2) fails once, not retried, and the table keeps the schema ``evolve`` gave it."""
    from airflow.sdk import DAG, task

    from table_engine import Catalog
    from tests.dags.test_s3_credentials import sync_to_db

    seen: list[Any] = []
    with DAG("paimon_alter_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        evolve = PaimonAlterTableOperator(task_id="evolve", table="db.t", changes=CHANGES)
        refused = PaimonAlterTableOperator(task_id="refused", table="db.t", retries=2,
                                           changes=[{"action": "drop-column", "name": "nope"}])

        @task
        def report(ti: Any = None) -> None:
            seen.append(ti.xcom_pull(task_ids="evolve"))

        evolve >> [report(), refused]
    sync_to_db(dag, tmp_path / "no-dags")
    dr = dag.test()
    tis = {ti.task_id: ti for ti in dr.get_task_instances()}
    assert {k: str(ti.state) for k, ti in tis.items()} == {"evolve": "success", "report": "success",
                                                           "refused": "failed"}
    assert tis["refused"].try_number == 1
    assert seen[0]["schema_id"] == 1 and [f["name"] for f in seen[0]["fields"]] == ["id", "c", "value"]
    assert Catalog(paimon_conn).get_table("db.t").schema.id == 1
