"""A root middleware of the API server that lets the connection list's Test button test connections without a port.

Airflow 3.3.2's UI sends ``port: Number(connection.port)`` when a listed connection is tested, and ``Number(null)``
is ``0``. The API compares that with the stored port (NULL for every connection whose form hides Port, as the
``paimon`` form does), finds a "different destination" and refuses: ``400 Bad Request``, whatever the connection.
apache/airflow#73298 (after 3.3.2) fixes it in the API by treating port 0 as "no port". This middleware does the
same to the request body, and only while the running Airflow needs it (:func:`needed`): nothing addresses port 0, so
``0`` there means the same as no port. Decision and limits: docs/connection.md ("The Test button").
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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
        if scope.get("type") != "http" or scope.get("method") != "POST" or \
                not str(scope.get("path", "")).endswith(TEST_PATH):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: pass it on
                await self.app(scope, _replay([message]), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        changed = await anyio.to_thread.run_sync(without_port_zero, body, stored_port)  # reads the database
        if changed is not None:
            body = changed
            headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A ``receive`` that gives ``messages``, then what ``then`` gives (a disconnect, later)."""
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive


def root_middlewares() -> list[dict[str, Any]]:
    """The plugin's ``fastapi_root_middlewares``: :class:`PortZeroIsNoPort` while this Airflow needs it."""
    if not needed():
        return []
    return [{"name": "paimon: the Test button of connections without a port (apache/airflow#73298)",
             "middleware": PortZeroIsNoPort}]
