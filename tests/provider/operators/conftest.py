"""Shared by the operator tests that run an operator's ``execute`` for real outside a DAG run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

LOCAL = {"runner": "local"}
"""An operator's ``spark=``: the engine's CLI on the worker, no Spark."""


def context() -> dict[str, Any]:
    """The part of a task's context the operators read: the task instance's ids and the outlet events."""
    from airflow.sdk.execution_time.context import OutletEventAccessors

    ti = SimpleNamespace(dag_id="d", task_id="t", run_id="manual__1", map_index=-1)
    return {"ti": ti, "outlet_events": OutletEventAccessors()}
