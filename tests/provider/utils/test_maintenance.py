"""paimon_provider.utils.maintenance: the building blocks of the maintenance DAG templates."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from airflow.sdk.exceptions import ParamValidationError
from paimon_provider.operators import PaimonExpireTagsOperator
from paimon_provider.utils.maintenance import (
    for_each_table,
    maintenance_dag,
    rollback_params,
    table_param,
    tables_param,
)


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


def test_rollback_form_is_built_without_the_warehouse(monkeypatch: pytest.MonkeyPatch) -> None:
    # no connection at all: the form does not need one (it reads nothing)
    monkeypatch.delenv("AIRFLOW_CONN_PAIMON_DEFAULT", raising=False)
    params = rollback_params("db.t")
    version = params["version"]
    # required and non-blank: an empty form cannot be submitted (no default, no null)
    with pytest.raises(ParamValidationError, match="No value passed"):
        version.resolve()
    with pytest.raises(ParamValidationError):
        version.resolve(" ")
    assert version.resolve("ads-20261127") == "ads-20261127"
    assert version.schema["type"] == "string" and version.schema["minLength"] == 1
    assert "examples" not in version.schema and "enum" not in version.schema  # nothing read from the warehouse
    assert "list_snapshots_and_tags" in str(version.description)
    assert [p.schema["title"] for p in params.values()] == ["Table", "Snapshot id or tag"]


def test_dag_doc_lists_the_form_and_what_a_run_leaves_behind() -> None:
    with maintenance_dag("probe_doc", description="Clean tables", schedule="@daily", leaves="fewer files",
                         params={"tables": tables_param(["db.a"], "clean")}) as dag:
        pass
    doc = str(dag.doc_md)
    assert doc.startswith("Clean tables\n\n**When it runs:** `@daily`")
    assert "- **Tables** (`tables`): Tables to clean" in doc and "**What it leaves behind:** fewer files" in doc
    with maintenance_dag("probe_doc2", description="d", schedule=None, params={}, doc_md="as given") as plain:
        pass
    assert plain.doc_md == "as given"


def test_the_rollback_list_names_the_run_of_each_snapshot(catalog: Any) -> None:
    """Each listed snapshot says which Airflow run committed it (its ``airflow.*`` snapshot properties), if any."""
    import pyarrow as pa
    from paimon_provider.utils.maintenance import rollback_targets

    from table_engine.run_identity import RunIdentity

    t = catalog.create_table("db.r", pa.schema([("id", pa.int64())]), options={"bucket": "-1"})
    t.write(pa.table({"id": [1]}))
    t.write(pa.table({"id": [2]}), properties=RunIdentity("etl", "manual__1", "load", 2).to_properties())
    t.write(pa.table({"id": [3]}), properties=RunIdentity("etl", "manual__2", "fix", try_number=3).to_properties())
    found = rollback_targets(t)
    assert [(s[0], s[3]) for s in found.snapshots] == [
        (3, "etl.fix in run manual__2 (try 3)"), (2, "etl.load[2] in run manual__1"), (1, None)]
    line = found.lines("db.r")[1]
    assert " UTC, by etl.load[2] in run manual__1); 1 (APPEND, " in line and line.endswith(" UTC)")
