"""paimon_provider.maintenance: the building blocks of the maintenance DAG templates."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from paimon_provider.maintenance import (
    for_each_table,
    maintenance_dag,
    rollback_params,
    rollback_targets,
    table_param,
    tables_param,
)
from paimon_provider.operators import PaimonExpireTagsOperator


def test_maintenance_dag_defaults_and_mapped_tasks() -> None:
    with maintenance_dag("probe_upkeep", description="d", schedule="@daily",
                         params={"tables": tables_param(["db.a", "db.b"], "clean")}) as dag:
        mapped = for_each_table(PaimonExpireTagsOperator, task_id="expire_tags", older_than="{{ params.x }}")
    assert dag.catchup is False and dag.max_active_runs == 1 and set(dag.tags) == {"paimon", "maintenance"}
    assert dag.default_args["retries"] == 1
    assert sorted(dag.task_ids) == ["expire_tags", "selected_tables"]
    assert mapped.partial_kwargs["paimon_conn_id"] == "paimon_default"
    assert mapped.partial_kwargs["older_than"] == "{{ params.x }}"
    assert dag.get_task("selected_tables") in dag.get_task("expire_tags").upstream_list
    assert dag.params["tables"] == ["db.a", "db.b"]


def test_table_params_validate() -> None:
    from airflow.sdk import DAG
    from airflow.sdk.exceptions import ParamValidationError

    with DAG("probe_params", schedule=None, params={"tables": tables_param(["db.t"], "x"),
                                                    "table": table_param("db.t", "y")}) as dag:
        pass
    params = copy.deepcopy(dag.params)
    params.validate()
    for key, bad in (("tables", []), ("tables", ["no_database"]), ("table", "a.b.c")):
        with pytest.raises(ParamValidationError):
            params[key] = bad


def test_mapped_tasks_are_labelled_by_table() -> None:
    with maintenance_dag("probe_labels", description="d", schedule=None,
                         params={"tables": tables_param(["db.a"], "clean")}):
        mapped = for_each_table(PaimonExpireTagsOperator, task_id="expire_tags")
    assert mapped.partial_kwargs["map_index_template"] == "{{ task.table }}"


def test_table_params_describe_the_name_in_words() -> None:
    for param in (tables_param(["db.t"], "x"), table_param("db.t", "y")):
        assert "a database name, one dot, a table name" in str(param.description)


def test_rollback_form_lists_tags_and_latest_snapshots(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import json

    import pyarrow as pa

    from table_engine import Catalog

    warehouse = str(tmp_path / "wh")
    t = Catalog(warehouse).create_table("db.t", pa.schema([("id", pa.int64())]), primary_keys=["id"],
                                        options={"bucket": "1", "write-only": "true"})
    for i in range(12):
        t.write(pa.table({"id": [i]}))
    t.create_tag("before-load", 3)
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", json.dumps({"conn_type": "paimon",
                                                                  "extra": {"warehouse": warehouse}}))
    found = rollback_targets("db.t")
    assert found.tags == {"before-load": 3}
    assert [s[0] for s in found.snapshots] == list(range(12, 2, -1)) and found.snapshots[0][1] == "APPEND"
    params = rollback_params("db.t")
    assert params["tag"].schema["examples"] == ["before-load"] and params["tag"].value is None
    assert params["tag"].schema["type"] == ["null", "string"]
    assert params["snapshot_id"].value is None and params["snapshot_id"].schema["type"] == ["null", "integer"]
    assert "12 (APPEND, " in str(params["snapshot_id"].description)
    assert "before-load (snapshot 3)" in str(params["tag"].description)
    # never failing the parse: no connection, an object store, a missing table, garbage
    for raw in (None, json.dumps({"conn_type": "paimon", "extra": {"warehouse": "s3://bucket/wh"}}),
                "{not json"):
        if raw is None:
            monkeypatch.delenv("AIRFLOW_CONN_PAIMON_DEFAULT")
        else:
            monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", raw)
        empty = rollback_targets("db.t")
        assert empty.tags == {} and empty.snapshots == [] and empty.note, raw
        assert "examples" not in rollback_params("db.t")["tag"].schema
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", json.dumps({"conn_type": "paimon",
                                                                  "extra": {"warehouse": warehouse}}))
    assert rollback_targets("db.missing").note == "table db.missing does not exist yet"
