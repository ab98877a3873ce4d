"""Root middlewares of the API server for the connection form's Test button: one lets it test connections without
a port (Airflow 3.3.2 and earlier), one tests a ``spark_connect`` connection, which the Spark provider cannot.

Airflow 3.3.2's UI sends ``port: Number(connection.port)`` when a listed connection is tested, and ``Number(null)``
is ``0``. The API compares that with the stored port (NULL for every connection whose form hides Port, as the
``paimon`` form does), finds a "different destination" and refuses: ``400 Bad Request``, whatever the connection.
apache/airflow#73298 (after 3.3.2) fixes it in the API by treating port 0 as "no port". This middleware does the
same to the request body, and only while the running Airflow needs it (:func:`needed`): nothing addresses port 0, so
``0`` there means the same as no port.

The Spark provider's ``SparkConnectHook`` has no ``test_connection``: Airflow answers "SparkConnectHook doesn't
implement test_connection", a red result for ``make airflow``'s own ``spark_default``. :class:`SparkConnectTest`
replaces that answer (after Airflow's route ran: its authorization and ``[core] test_connection`` stand) with a test
of the server the form's fields name: its port accepts a connection, as the Paimon connection's own test checks.
Decision and limits: docs/connection.md ("The Test button").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from paimon_provider.plugins.asgi import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    holding,
    json_response,
    read_body,
    replay,
    with_body,
)

TEST_PATH = "/api/v2/connections/test"
"""The Test button's route (under the API server's base path)."""


def needed() -> bool:
    """Whether this Airflow's test route takes port 0 for a different port than a stored NULL (3.3.2 and earlier)."""
    try:
        from airflow.api_fastapi.core_api.routes.public.connections import _same_endpoint
    except ImportError:  # the route is organised otherwise: the middleware is not installed
        return False
    return not _same_endpoint(0, None)


def without_port_zero(body: bytes, stored_port: Callable[[str], object] = lambda conn_id: None) -> bytes | None:
    """The request body with ``"port": 0`` as ``"port": null`` when the stored connection has no port
    (``stored_port`` of its id is None); None when there is nothing to change (a connection stored with port 0, as
    the demo's were, is tested with 0 as it is)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("port") != 0 or isinstance(data.get("port"), bool):
        return None
    if stored_port(str(data.get("connection_id", ""))) is not None:
        return None
    data["port"] = None
    return json.dumps(data).encode("utf-8")


def stored_port(conn_id: str) -> object:
    """The port of connection ``conn_id`` as the route will read it (metadata database, environment, secrets
    backend); ``0`` (leave the request alone) when it cannot be read."""
    try:
        from airflow.models.connection import Connection

        return Connection.get_connection_from_secrets(conn_id).port
    except Exception:  # noqa: BLE001 - unknown: the route decides, as without this middleware
        return 0


class PortZeroIsNoPort:
    """ASGI middleware: a ``POST`` to :data:`TEST_PATH` whose JSON body says ``"port": 0`` for a connection stored
    without a port reaches the route with ``"port": null``; every other request passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _test_body(self.app, scope, receive, send)
        if body is None:
            return
        changed = await anyio.to_thread.run_sync(without_port_zero, body, stored_port)  # reads the database
        if changed is not None:
            body, scope = changed, with_body(scope, changed)
        await self.app(scope, replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


async def _test_body(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> bytes | None:
    """The whole body of a Test request, for a middleware to look at before the route; None when the request was
    handed to ``app`` as it is (not a Test request, or the client went away)."""
    if not _is_test(scope):
        await app(scope, receive, send)
        return None
    body, ended = await read_body(receive)
    if ended is not None:  # the client went away: pass it on
        await app(scope, replay([ended]), send)
        return None
    return body


def _is_test(scope: Scope) -> bool:
    return scope.get("type") == "http" and scope.get("method") == "POST" and \
        str(scope.get("path", "")).endswith(TEST_PATH)


SPARK_CONNECT = "spark_connect"
NOT_IMPLEMENTED = "doesn't implement or inherit test_connection"
"""What Airflow's route answers for a hook without ``test_connection`` (in its ``message``)."""


def spark_connect_result(fields: dict[str, Any]) -> dict[str, Any]:
    """The Test button's result for a ``spark_connect`` connection of the form's ``fields`` (``host``, ``port``):
    whether the Spark Connect server they name accepts a connection."""
    from paimon_provider.hooks.table import connect_server_answers

    host = str(fields.get("host") or "").strip()
    if not host:
        return {"status": False, "message": "no Host: a Spark Connect connection needs the server's host "
                                            "(sc://host, default port 15002)"}
    url = host if "://" in host else f"sc://{host}"
    port = fields.get("port")
    if port and not isinstance(port, bool):
        url = f"{url.rstrip('/')}:{port}"
    try:
        answer = connect_server_answers(url)
    except Exception as e:  # noqa: BLE001 - the result says what failed
        return {"status": False, "message": str(e)}
    return {"status": True, "message": f"{answer}: its port accepts connections (tested by the Paimon provider; "
                                       "the Spark provider's hook has no test)"}


class SparkConnectTest:
    """ASGI middleware: the Test button's answer for a ``spark_connect`` connection, which Airflow's route gives as
    "doesn't implement test_connection", becomes :func:`spark_connect_result` of the tested fields; every other
    request and answer passes untouched (the route runs first: who may test, and whether testing is enabled, stay
    Airflow's)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _test_body(self.app, scope, receive, send)
        if body is None:
            return
        try:
            fields = json.loads(body)
        except ValueError:
            fields = None
        replayed = replay([{"type": "http.request", "body": body, "more_body": False}], receive)
        if not isinstance(fields, dict) or fields.get("conn_type") != SPARK_CONNECT:
            await self.app(scope, replayed, send)
            return

        async def rewrite(start: Message, answer: bytes) -> list[Message] | None:
            try:
                result = json.loads(answer)
            except ValueError:
                return None
            if not isinstance(result, dict) or NOT_IMPLEMENTED not in str(result.get("message", "")):
                return None
            tested = await anyio.to_thread.run_sync(spark_connect_result, fields)  # a socket connect, up to 5 s
            return json_response(start, {**result, **tested})

        await self.app(scope, replayed, holding(send, 200, rewrite))


def root_middlewares() -> list[dict[str, Any]]:
    """The Test button's middlewares: :class:`PortZeroIsNoPort` while this Airflow needs it, and
    :class:`SparkConnectTest`."""
    port_zero = [{"name": "paimon: the Test button of connections without a port (apache/airflow#73298)",
                  "middleware": PortZeroIsNoPort}] if needed() else []
    return [*port_zero, {"name": "paimon: the Test button of spark_connect connections", "middleware":
                         SparkConnectTest}]
