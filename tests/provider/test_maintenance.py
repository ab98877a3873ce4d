"""provider.maintenance: the building blocks of the maintenance DAG templates."""

from __future__ import annotations

import copy

import pytest

from provider.maintenance import for_each_table, maintenance_dag, table_param, tables_param
from provider.operators import PaimonExpireTagsOperator


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
