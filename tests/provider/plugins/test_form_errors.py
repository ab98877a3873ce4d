"""A trigger form's refused conf through Airflow's real API app, with the provider's plugin installed: the answer's
``detail`` is one line naming the field as the form does (not jsonschema's report with the schema dumped), and says
a pattern's rule in the field's description."""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pytest
from fastapi.testclient import TestClient
from paimon_provider.plugins.form_errors import one_line

from tests.provider.plugins.test_test_button import api  # noqa: F401 - the API app fixture

RULE = "The table to roll back: database.table, letters, digits and '_'."


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_a_refused_trigger_says_what_is_wrong_in_one_line(api: TestClient, tmp_path: pathlib.Path) -> None:  # noqa: F811
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG, Param

    from tests.dags.test_s3_credentials import sync_to_db

    with DAG("paimon_form_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False, params={
            "table": Param("db.t", type="string", pattern=r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$", title="Table",
                           description=RULE),
            "keep": Param(3, type="integer", minimum=1, title="Keep at least")}) as dag:
        EmptyOperator(task_id="noop")
    sync_to_db(dag, tmp_path / "no-dags")

    def trigger(conf: dict[str, Any]) -> Any:
        return api.post("/api/v2/dags/paimon_form_probe/dagRuns", json={"logical_date": None, "conf": conf})

    answer = trigger({"table": "ui orders"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"] == f"Invalid input for Table (table): 'ui orders' is not valid: {RULE}"
    answer = trigger({"keep": 0})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"] == "Invalid input for Keep at least (keep): 0 is less than the minimum of 1"
    # a good conf is triggered as before; other answers are untouched
    assert trigger({"table": "db.orders"}).status_code == 200
    missing = api.post("/api/v2/dags/no_such_dag/dagRuns", json={"logical_date": None})
    assert missing.status_code == 404 and "no_such_dag" in missing.text


def test_only_a_param_report_is_rewritten() -> None:
    report = ("Invalid input for param table: 'a b' does not match '^x$'\n\nFailed validating 'pattern' in schema:\n"
              "    {'type': 'string', 'pattern': '^x$'}\n\nOn instance:\n    'a b'")
    assert one_line(report, lambda key: None) == "Invalid input for table: 'a b' does not match '^x$'"
    assert one_line(report, lambda key: {"title": "Table", "description": "One word."}) == \
        "Invalid input for Table (table): 'a b' is not valid: One word."
    for other in ("Invalid input for param table: 'a b' does not match '^x$'", "DAG x not found", ""):
        assert one_line(other, lambda key: None) is None
