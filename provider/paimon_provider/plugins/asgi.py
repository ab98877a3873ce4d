"""What the plugin's root middlewares share: ASGI types, reading a request body and replaying it, and holding a
response to rewrite it once it is whole."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def read_body(receive: Receive) -> tuple[bytes, Message | None]:
    """The whole request body; and the message that ended it early (the client went away), if one did."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


def replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A ``receive`` that gives ``messages``, then what ``then`` gives (a disconnect, later)."""
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive


def with_body(scope: Scope, body: bytes) -> Scope:
    """``scope`` with its ``content-length`` header saying ``body``'s length."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
    return {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}


def json_response(start: Message, data: Any) -> list[Message]:
    """The messages of a response with ``start``'s status and headers and ``data`` as its JSON body."""
    body = json.dumps(data).encode("utf-8")
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    return [{**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]},
            {"type": "http.response.body", "body": body, "more_body": False}]


def holding(send: Send, status: int, rewrite: Callable[[Message, bytes], Awaitable[list[Message] | None]]) -> Send:
    """A ``send`` that passes every response through, but one of ``status``: that one is held until whole, then
    sent as ``rewrite(start, body)`` gives it (None: as it was)."""
    held: list[Message] = []
    passing = False

    async def hold(message: Message) -> None:
        nonlocal passing
        if message["type"] == "http.response.start":
            passing = message.get("status") != status
        if passing:
            await send(message)
            return
        held.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            body = b"".join(m.get("body", b"") for m in held[1:])
            out = await rewrite(held[0], body)
            for m in out if out is not None else held:
                await send(m)

    return hold
