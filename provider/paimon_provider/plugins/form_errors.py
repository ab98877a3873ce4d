"""A root middleware of the API server that makes a refused trigger form say what is wrong in one line.

When a trigger's conf breaks a field's JSON schema, Airflow 3.3 answers ``400`` with ``Invalid input for param <key>:``
followed by jsonschema's whole report: the first line (``'ui orders' does not match '^[A-Za-z0-9_]+...$'``), then
``Failed validating 'pattern' in schema:`` with the field's schema dumped (its title, description, every keyword)
and ``On instance:`` with the value again. The UI shows all of it under the form (apache/airflow#49567 asks for
inline, front-end validation). This middleware keeps the first line, names the field by the title the form shows,
and, for a value that breaks a pattern, says the rule in the field's own description instead of the regular
expression: ``Table (table): 'ui orders' is not valid: The table to roll back: database.table, ...``. Any other
response passes untouched. Decision and limits: docs/ui.md ("Trigger forms").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import anyio.to_thread

from paimon_provider.plugins.asgi import ASGIApp, Message, Receive, Scope, Send, holding, json_response

TRIGGER_PATH = re.compile(r"/api/v2/dags/(?P<dag_id>[^/]+)/dagRuns$")
"""The route a trigger form posts to (under the API server's base path)."""
REPORT = re.compile(r"^Invalid input for param (?P<key>[^:]+): (?P<first>[^\n]*)\n\nFailed validating '(?P<rule>\w+)'",
                    re.DOTALL)
"""Airflow's message for a conf that breaks a field's schema (``SerializedParamsDict.validate``), with jsonschema's
report after the first line."""
PATTERN_FIRST_LINE = re.compile(r"^(?P<value>.*) does not match '.*'$", re.DOTALL)


def one_line(detail: str, schema_of: Callable[[str], Mapping[str, Any] | None]) -> str | None:
    """``detail`` (a refused trigger's message) as one line naming the field as the form does, and a pattern's rule
    in words (``schema_of(key)``: the field's JSON schema, if known); None when it is not a param report."""
    found = REPORT.match(detail)
    if found is None:
        return None
    key, first, rule = found["key"], found["first"], found["rule"]
    schema = schema_of(key) or {}
    title = schema.get("title")
    field = f"{title} ({key})" if title and title != key else key
    pattern = PATTERN_FIRST_LINE.match(first)
    description = schema.get("description")
    if rule == "pattern" and pattern is not None and description:
        return f"Invalid input for {field}: {pattern['value']} is not valid: {description}"
    return f"Invalid input for {field}: {first}"


def param_schema(dag_id: str, key: str) -> Mapping[str, Any] | None:
    """The JSON schema of field ``key`` of DAG ``dag_id``'s form (its latest serialized version; with the field's
    ``description``, which Airflow keeps beside the schema); None when it cannot be read."""
    try:
        from airflow.models.serialized_dag import SerializedDagModel

        dag = SerializedDagModel.get_dag(dag_id)
        if dag is None:
            return None
        param = dag.params.get_param(key)
        return {**param.schema, "description": param.description or param.schema.get("description")}
    except Exception:  # noqa: BLE001 - without it the message still loses the dump, only not the rule in words
        return None


class OneLineParamErrors:
    """ASGI middleware: the ``400`` of a trigger (``POST .../dags/<dag_id>/dagRuns``) whose conf breaks a field's
    schema gets :func:`one_line` as its ``detail``; every other response passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        trigger = TRIGGER_PATH.search(str(scope.get("path", ""))) \
            if scope.get("type") == "http" and scope.get("method") == "POST" else None
        if trigger is None:
            await self.app(scope, receive, send)
            return
        dag_id = trigger["dag_id"]

        async def rewrite(start: Message, body: bytes) -> list[Message] | None:
            try:
                data = json.loads(body)
            except ValueError:
                return None
            detail = data.get("detail") if isinstance(data, dict) else None
            if not isinstance(detail, str):
                return None
            line = await anyio.to_thread.run_sync(  # reads the database
                one_line, detail, lambda key: param_schema(dag_id, key))
            return None if line is None else json_response(start, {**data, "detail": line})

        await self.app(scope, receive, holding(send, 400, rewrite))
