"""Building blocks for table-upkeep DAGs: one DAG per job, a form (Params) to run it by hand, one mapped task per
table.

A maintenance DAG built with these helpers takes a ``tables`` param (a list of ``database.table``), has valid
defaults for scheduled runs, and never depends on the logical date, so runs triggered from the UI (which have none)
work the same way::

    with maintenance_dag("paimon_expire_tags", description="...", schedule="@daily",
                         params={"tables": tables_param(["dwd.orders"], "expire tags of")}):
        for_each_table(PaimonExpireTagsOperator, task_id="expire_tags")

Only ``airflow.sdk`` is imported here: DAG files import this module at parse time.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from airflow.sdk import DAG, BaseOperator, Param, XComArg, task

from provider.connection import DEFAULT_CONN_ID

TABLE_PATTERN = r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$"
"""What a ``database.table`` param must look like."""

DEFAULT_START = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
DEFAULT_ARGS: Mapping[str, Any] = {"retries": 1, "retry_delay": datetime.timedelta(minutes=1)}
DEFAULT_TAGS = ("paimon", "maintenance")


def tables_param(default: Sequence[str], what: str) -> Param:
    """The ``tables`` form field: a non-empty list of ``database.table`` names to ``what``."""
    return Param(list(default), type="array", items={"type": "string", "pattern": TABLE_PATTERN}, minItems=1,
                 description=f"Tables ('database.table') to {what}.")


def table_param(default: str, what: str) -> Param:
    """A single ``database.table`` form field."""
    return Param(default, type="string", pattern=TABLE_PATTERN, description=f"The table to {what}.")


@task
def selected_tables(**context: Any) -> list[str]:
    """The tables of this run, read from the ``tables`` param (a real list, not rendered text)."""
    return [str(t) for t in context["params"]["tables"]]


def maintenance_dag(dag_id: str, *, description: str, schedule: str | None, params: Mapping[str, Param],
                    doc_md: str | None = None, start_date: datetime.datetime = DEFAULT_START,
                    default_args: Mapping[str, Any] | None = DEFAULT_ARGS,
                    tags: Sequence[str] = DEFAULT_TAGS) -> DAG:
    """A DAG for one upkeep job: no catch-up, one run at a time, retries, the given form."""
    return DAG(dag_id=dag_id, description=description, schedule=schedule, start_date=start_date, catchup=False,
               max_active_runs=1, tags=list(tags), default_args=dict(default_args or {}), params=dict(params),
               doc_md=doc_md)


def for_each_table(operator: type[BaseOperator], *, task_id: str, tables: XComArg | None = None,
                   paimon_conn_id: str = DEFAULT_CONN_ID, **kwargs: Any) -> Any:
    """``operator`` mapped over the run's tables (default: :func:`selected_tables`, created here); ``kwargs`` are
    the same for every table (template them with ``{{ params.* }}``)."""
    if tables is None:
        tables = selected_tables()
    return operator.partial(task_id=task_id, paimon_conn_id=paimon_conn_id, **kwargs).expand(table=tables)
