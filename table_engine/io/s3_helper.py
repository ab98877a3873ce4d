"""The S3 helper process: runs the S3 requests of a process that was forked after obstore started in its parent.

obstore drives its requests on a tokio runtime that it starts once per process. ``fork()`` copies the runtime's state
but not its threads: in the child every request waits forever for worker threads that do not exist, and the child
shares the parent's epoll instance, so what it does there steals the parent's wake-ups and the parent's next request
hangs too (docs/adr/0040-s3-after-fork.md). Airflow's OpenLineage listener, Celery's prefork pool and
``multiprocessing`` all fork. Such a child therefore never calls obstore itself: :mod:`table_engine.io.s3_client`
starts this script (a new interpreter, hence a runtime of its own) and sends it the requests over a pipe.

This file is run as a script, not imported as part of the package, so that starting it costs an interpreter and
obstore only. The protocol is pickle over stdin/stdout, one request and one answer at a time: ``(op, store, args)`` ->
``("ok", value)``, ``("missing", message)`` (not found), ``("exists", message)`` (a conditional create lost) or
``("error", message)``. ``("connect", store, (bucket, kwargs, profile))`` opens store number ``store``; the
credentials travel in this pipe, never in the command line. The process ends when its stdin closes.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Any


def _store(bucket: str, kwargs: dict[str, Any], profile: str | None) -> Any:
    from obstore.store import S3Store

    if profile is not None:
        import boto3
        from obstore.auth.boto3 import Boto3CredentialProvider

        kwargs = {**kwargs, "credential_provider": Boto3CredentialProvider(boto3.Session(profile_name=profile))}
    return S3Store(bucket, **kwargs)


def _first_page(store: Any, prefix: str | None, offset: str | None, chunk_size: int) -> list[dict[str, Any]]:
    import obstore

    for batch in obstore.list(store, prefix=prefix, offset=offset, chunk_size=chunk_size):
        return [dict(o) for o in batch]
    return []


def _ignore(_: Any) -> None:
    return None


def _operations() -> dict[str, Callable[..., Any]]:
    import obstore

    return {
        "get": lambda s, key: bytes(obstore.get(s, key).bytes()),
        "head": lambda s, key: dict(obstore.head(s, key)),
        "page": _first_page,
        "list_with_delimiter": lambda s, prefix: dict(obstore.list_with_delimiter(s, prefix)),
        "get_ranges": lambda s, key, starts, ends: [bytes(p) for p in obstore.get_ranges(s, key, starts=starts,
                                                                                           ends=ends)],
        "put": lambda s, key, data, mode: _ignore(obstore.put(s, key, data, mode=mode)),
        "delete": lambda s, keys: obstore.delete(s, keys),
    }


def serve() -> None:
    """Answer requests from stdin until it closes."""
    from obstore.exceptions import AlreadyExistsError

    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the protocol
    operations = _operations()
    stores: dict[int, Any] = {}
    while True:
        try:
            op, store_id, args = pickle.load(requests)
        except EOFError:
            return
        answer: tuple[str, Any]
        try:
            if op == "connect":
                stores[store_id] = _store(*args)
                answer = ("ok", None)
            else:
                answer = ("ok", operations[op](stores[store_id], *args))
        except FileNotFoundError as e:
            answer = ("missing", str(e))
        except AlreadyExistsError as e:
            answer = ("exists", str(e))
        except Exception as e:  # noqa: BLE001 - every failure goes back to the caller, which decides
            answer = ("error", str(e) or type(e).__name__)
        pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    serve()
