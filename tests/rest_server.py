"""A Paimon REST catalog server for the tests, written from Paimon's OpenAPI spec (``rest-catalog-open-api.yaml``).

It plays the part of Paimon Java's test server (``RESTCatalogServer``): catalog metadata (databases, tables, views,
the latest snapshot and partition statistics per table) lives in this process; table files live in a warehouse
directory on local disk (``<warehouse>/<db>.db/<table>``), so a client that was handed the table's ``path`` reads
and writes data files itself. The server owns what a REST catalog owns: schemas (``schema/schema-N``, written on
create and on every alter; a format or object table's definition is kept in memory only, its directory is its files)
and snapshot commits (``POST .../commit`` writes ``snapshot/snapshot-N`` exclusively, then the ``LATEST``/``EARLIEST``
hints, and answers ``{"success": false}`` when the base snapshot moved or N exists).

Table files may live on S3 instead: ``storage`` (a FileIO, e.g. the engine's ``S3FileIO`` of the moto server) and
``root`` (``s3://bucket/prefix``); ``vended`` is then what ``GET .../token`` hands out (the server's own S3 options).

Test switches: :meth:`RestCatalogServer.expire_token` (that bearer token now answers 401), :meth:`fail_next` (the
next N requests answer 429/503, optionally with ``Retry-After``), ``requests`` (method and path of each request).
Runs on a ``ThreadingHTTPServer`` in a daemon thread on 127.0.0.1, a free port; ``stop()`` or ``with`` ends it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.catalog import RestCatalog
from table_engine.catalog.rest.client import RetryPolicy
from table_engine.errors import BranchAlreadyExistError, BranchNotExistError, SnapshotNotExistError, TagNotExistError
from table_engine.format.schema_file import latest_schema
from table_engine.format.snapshot import latest_snapshot_id, read_snapshot
from table_engine.io.base import FileIO
from table_engine.io.file_io import LocalFileIO
from table_engine.table import Table as FileTable

TOKEN = "test-bearer-token-7c1e-DO-NOT-LEAK"

FAST_RETRY = RetryPolicy(max_retries=3, initial_backoff=0.01, max_backoff=0.2, jitter=0.0)
"""The tests' retries: the policy's shape, without its waits."""
PREFIX = "paimon"
DEFAULT_MAX_RESULTS = 100


class HttpError(Exception):
    """An error answer: the status and the spec's ``ErrorResponse`` fields."""

    def __init__(self, code: int, message: str, resource_type: str | None = None, resource_name: str | None = None):
        super().__init__(message)
        self.code, self.message, self.resource_type, self.resource_name = code, message, resource_type, resource_name


# the types whose schema lives in schema/schema-N: a format table and (Paimon 1.3+) an object table have none
DATA_TABLE_TYPES = ("table", "materialized-table")


def _not_found(kind: str, name: str) -> HttpError:
    return HttpError(404, f"{kind.lower()} {name} does not exist", kind, name)


def _exists(kind: str, name: str) -> HttpError:
    return HttpError(409, f"{kind.lower()} {name} already exists", kind, name)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _audit(user: str = "rest-test") -> dict[str, Any]:
    now = _now_ms()
    return {"owner": user, "createdAt": now, "createdBy": user, "updatedAt": now, "updatedBy": user}


def _page(names: list[str], params: dict[str, str]) -> tuple[list[str], str | None]:
    """Java's paging: sorted names after ``pageToken`` (the last name of the previous page), ``maxResults`` each."""
    raw = params.get("maxResults")
    try:
        max_results = int(raw) if raw else DEFAULT_MAX_RESULTS
    except ValueError as e:
        raise HttpError(400, "invalid input queryParameter maxResults " + str(raw)) from e
    if max_results <= 0:
        raise HttpError(400, "maxResults must be positive")
    token = params.get("pageToken")
    ordered = sorted(n for n in names if token is None or n > token)
    page = ordered[:max_results]
    return page, (page[-1] if len(ordered) > max_results else None)


def _highest_field_id(fields: list[dict[str, Any]]) -> int:
    highest = -1

    def visit(node: Any) -> None:
        nonlocal highest
        if isinstance(node, dict):
            if isinstance(node.get("id"), int) and "name" in node:
                highest = max(highest, node["id"])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(fields)
    return highest


@dataclass
class _Table:
    id: str
    path: str
    schema: dict[str, Any]  # the spec's Schema (fields, partitionKeys, primaryKeys, options, comment)
    schema_id: int = 0
    is_external: bool = False
    audit: dict[str, Any] = field(default_factory=_audit)
    latest: dict[str, Any] | None = None  # the spec's TableSnapshot
    history: dict[int, dict[str, Any]] = field(default_factory=dict)  # snapshot id -> its TableSnapshot
    partitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    highest_field_id: int = -1  # as a schema file's highestFieldId: a dropped column's id is never given again


@dataclass
class RestCatalogServer:
    """The server; ``start()`` returns it running, ``uri`` is ``http://127.0.0.1:<port>``."""

    warehouse_dir: Path
    warehouse: str = "test_warehouse"
    prefix: str = PREFIX
    token: str = TOKEN
    defaults: dict[str, str] = field(default_factory=dict)
    data_token_ttl_ms: int = 3_600_000
    echo_auth_in_errors: bool = False  # a careless server: error messages quote the Authorization header
    storage: FileIO = field(default_factory=LocalFileIO)
    root: str | None = None  # where the tables are (default: warehouse_dir)
    vended: dict[str, str] | None = None  # the storage options GET .../token vends (default: dummy fs.test.* keys)
    requests: list[tuple[str, str]] = field(default_factory=list)
    _expired: set[str] = field(default_factory=set)
    _faults: list[tuple[int, str | None]] = field(default_factory=list)
    _databases: dict[str, dict[str, Any]] = field(default_factory=dict)
    _tables: dict[tuple[str, str], _Table] = field(default_factory=dict)
    _views: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _connections: set[socket.socket] = field(default_factory=set)
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # ------------------------------------------------------------------------------------------------ lifecycle
    @property
    def uri(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def location(self) -> str:
        """Where the server keeps table files (``root``, else ``warehouse_dir``)."""
        return (self.root or str(self.warehouse_dir)).rstrip("/")

    def start(self) -> RestCatalogServer:
        self.warehouse_dir.mkdir(parents=True, exist_ok=True)
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="rest-catalog-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self._lock:  # kept-alive connections too: a stopped server answers nothing
            for conn in self._connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._connections.clear()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._httpd = self._thread = None

    def __enter__(self) -> RestCatalogServer:
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------------------------------------ switches
    def expire_token(self, token: str | None = None) -> None:
        """That token (default: the server's) answers 401 "token expired" from now on."""
        self._expired.add(token or self.token)

    def renew_token(self, token: str) -> None:
        """Accept ``token`` (and only it) from now on."""
        self.token = token
        self._expired.discard(token)

    def fail_next(self, count: int, status: int = 503, retry_after: str | None = None) -> None:
        """The next ``count`` requests answer ``status`` (429/503...) before any other check."""
        with self._lock:
            self._faults.extend([(status, retry_after)] * count)

    def options(self, **extra: str) -> dict[str, str]:
        """Catalog options of a client of this server (bearer token)."""
        return {"metastore": "rest", "uri": self.uri, "warehouse": self.warehouse, "token.provider": "bear",
                "token": self.token, **extra}

    def config(self) -> dict[str, Any]:
        defaults = {"prefix": self.prefix, **self.defaults}
        return {"defaults": defaults, "overrides": {"warehouse": self.location}}

    # ------------------------------------------------------------------------------------------------ databases
    def _db(self, name: str) -> dict[str, Any]:
        if name not in self._databases:
            raise _not_found("DATABASE", name)
        return self._databases[name]

    def _table(self, db: str, name: str) -> _Table:
        self._db(db)
        table = self._tables.get((db, name))
        if table is None:
            raise _not_found("TABLE", f"{db}.{name}")
        return table

    def list_databases(self, params: dict[str, str]) -> dict[str, Any]:
        names, token = _page(list(self._databases), params)
        return {"databases": names, "nextPageToken": token}

    def create_database(self, body: dict[str, Any]) -> None:
        name = body["name"]
        if name in self._databases:
            raise _exists("DATABASE", name)
        location = f"{self.location}/{name}.db"
        self.storage.mkdirs(location)
        self._databases[name] = {"id": str(uuid.uuid4()), "name": name, "location": location,
                                 "options": dict(body.get("options") or {}), **_audit()}

    def get_database(self, name: str) -> dict[str, Any]:
        return self._db(name)

    def drop_database(self, name: str) -> None:
        db = self._db(name)
        if any(k[0] == name for k in [*self._tables, *self._views]):
            raise HttpError(409, f"database {name} is not empty", "DATABASE", name)
        self.storage.delete(db["location"], recursive=True)
        del self._databases[name]

    def alter_database(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        options = self._db(name)["options"]
        removals, updates = list(body.get("removals") or []), dict(body.get("updates") or {})
        removed = [k for k in removals if k in options]
        for key in removed:
            del options[key]
        options.update(updates)
        self._db(name)["updatedAt"] = _now_ms()
        return {"removed": removed, "updated": list(updates), "missing": [k for k in removals if k not in removed]}

    # ------------------------------------------------------------------------------------------------ tables
    def list_tables(self, db: str, params: dict[str, str]) -> dict[str, Any]:
        self._db(db)
        names, token = _page([t for d, t in self._tables if d == db], params)
        return {"tables": names, "nextPageToken": token}

    def _table_response(self, db: str, name: str) -> dict[str, Any]:
        t = self._table(db, name)
        return {"id": t.id, "database": db, "name": name, "path": t.path, "isExternal": t.is_external,
                "schemaId": t.schema_id, "schema": t.schema, **t.audit}

    def _write_schema(self, t: _Table) -> None:
        doc = {"version": 3, "id": t.schema_id, "fields": t.schema.get("fields", []),
               "highestFieldId": max(t.highest_field_id, _highest_field_id(t.schema.get("fields", []))),
               "partitionKeys": t.schema.get("partitionKeys", []), "primaryKeys": t.schema.get("primaryKeys", []),
               "options": t.schema.get("options", {}), "comment": t.schema.get("comment"), "timeMillis": _now_ms()}
        self.storage.write_if_absent(f"{t.path}/schema/schema-{t.schema_id}", json.dumps(doc, indent=2).encode())

    def create_table(self, db: str, body: dict[str, Any]) -> None:
        self._db(db)
        name = body["identifier"]["object"]
        if (db, name) in self._tables:
            raise _exists("TABLE", f"{db}.{name}")
        schema = dict(body["schema"])
        schema.setdefault("partitionKeys", [])
        schema.setdefault("primaryKeys", [])
        schema["options"] = dict(schema.get("options") or {})
        external = "path" in schema["options"]
        path = schema["options"].pop("path").rstrip("/") if external else f"{self.location}/{db}.db/{name}"
        table = _Table(id=str(uuid.uuid4()), path=path, schema=schema, is_external=external)
        if str(schema["options"].get("type", "table")).strip().lower() in DATA_TABLE_TYPES:
            self._write_schema(table)  # a format table's directory holds its data files only: the server keeps it
        self._tables[(db, name)] = table

    def drop_table(self, db: str, name: str) -> None:
        t = self._table(db, name)
        if not t.is_external:
            self.storage.delete(t.path, recursive=True)
        del self._tables[(db, name)]

    def rename_table(self, body: dict[str, Any]) -> None:
        src, dst = body["source"], body["destination"]
        t = self._table(src["database"], src["object"])
        self._db(dst["database"])
        if (dst["database"], dst["object"]) in self._tables:
            raise _exists("TABLE", f"{dst['database']}.{dst['object']}")
        if not t.is_external:
            new_path = f"{self.location}/{dst['database']}.db/{dst['object']}"
            self.storage.rename(t.path, new_path)
            t.path = new_path
        del self._tables[(src["database"], src["object"])]
        self._tables[(dst["database"], dst["object"])] = t

    def alter_table(self, db: str, name: str, body: dict[str, Any]) -> None:
        t = self._table(db, name)
        schema = json.loads(json.dumps(t.schema))
        highest = max(t.highest_field_id, _highest_field_id(schema.get("fields", [])))
        for change in body.get("changes") or []:
            highest = _apply_change(schema, change, highest)
        t.schema, t.schema_id, t.highest_field_id = schema, t.schema_id + 1, highest
        t.audit["updatedAt"] = _now_ms()
        self._write_schema(t)

    # ------------------------------------------------------------------------------------------------ snapshots
    def commit(self, db: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        t = self._table(db, name)
        if body.get("tableId") not in (None, t.id):
            raise _not_found("TABLE", f"{db}.{name}")
        snapshot = body["snapshot"]
        current = t.latest["snapshot"].get("uuid") if t.latest else None
        if body.get("baseSnapshotUuid") != current:
            return {"success": False}
        snapshot_dir = f"{t.path}/snapshot"
        if not self.storage.write_if_absent(f"{snapshot_dir}/snapshot-{snapshot['id']}", json.dumps(snapshot).encode()):
            return {"success": False}
        self.storage.overwrite_hint(f"{snapshot_dir}/LATEST", str(snapshot["id"]).encode())
        if not self.storage.exists(f"{snapshot_dir}/EARLIEST"):
            self.storage.overwrite_hint(f"{snapshot_dir}/EARLIEST", str(snapshot["id"]).encode())
        stats = body.get("statistics") or []
        old = t.latest or {"recordCount": 0, "fileSizeInBytes": 0, "fileCount": 0, "lastFileCreationTime": 0}
        t.latest = {"snapshot": snapshot,
                    "recordCount": old["recordCount"] + sum(s.get("recordCount", 0) for s in stats),
                    "fileSizeInBytes": old["fileSizeInBytes"] + sum(s.get("fileSizeInBytes", 0) for s in stats),
                    "fileCount": old["fileCount"] + sum(s.get("fileCount", 0) for s in stats),
                    "lastFileCreationTime": max([old["lastFileCreationTime"],
                                                 *(s.get("lastFileCreationTime", 0) for s in stats)])}
        t.history[int(snapshot["id"])] = t.latest
        for s in stats:
            key = json.dumps(s.get("spec") or {}, sort_keys=True)
            part = t.partitions.setdefault(key, {"spec": s.get("spec") or {}, "recordCount": 0,
                                                 "fileSizeInBytes": 0, "fileCount": 0, "lastFileCreationTime": 0,
                                                 "totalBuckets": s.get("totalBuckets", 0), "done": False,
                                                 **_audit()})
            for k in ("recordCount", "fileSizeInBytes", "fileCount"):
                part[k] += s.get(k, 0)
            part["lastFileCreationTime"] = max(part["lastFileCreationTime"], s.get("lastFileCreationTime", 0))
        return {"success": True}

    def snapshot(self, db: str, name: str) -> dict[str, Any]:
        t = self._table(db, name)
        if t.latest is None:
            raise HttpError(404, f"table {db}.{name} has no snapshot", "SNAPSHOT", f"{db}.{name}")
        return {"snapshot": t.latest}

    def data_token(self, db: str, name: str) -> dict[str, Any]:
        self._table(db, name)
        expires = _now_ms() + self.data_token_ttl_ms
        token = dict(self.vended) if self.vended is not None else {
            "fs.test.access-key-id": f"ak-{db}-{name}", "fs.test.access-key-secret": uuid.uuid4().hex}
        # The spec (2026-08) names the expiry "expiresAt"; Java's and pypaimon's GetTableTokenResponse read
        # "expiresAtMillis". Both are sent.
        return {"token": token, "expiresAtMillis": expires, "expiresAt": expires}

    def list_partitions(self, db: str, name: str, params: dict[str, str]) -> dict[str, Any]:
        t = self._table(db, name)
        keys, token = _page(list(t.partitions), params)
        return {"partitions": [t.partitions[k] for k in keys], "nextPageToken": token}

    def list_tags(self, db: str, name: str, params: dict[str, str]) -> dict[str, Any]:
        t = self._table(db, name)
        names = self._names(f"{t.path}/tag", "tag-")
        prefix = params.get("tagNamePrefix")
        names, token = _page([n for n in names if not prefix or n.startswith(prefix)], params)
        return {"tags": names, "nextPageToken": token}

    def get_tag(self, db: str, name: str, tag: str) -> dict[str, Any]:
        t = self._table(db, name)
        data = self.storage.read_if_exists(f"{t.path}/tag/tag-{tag}")
        if data is None:
            raise _not_found("TAG", tag)
        doc = json.loads(data)
        return {"tagName": tag, "snapshot": doc, "tagCreateTime": doc.get("tagCreateTime"),
                "tagTimeRetained": doc.get("tagTimeRetained")}

    def list_branches(self, db: str, name: str) -> dict[str, Any]:
        t = self._table(db, name)
        return {"branches": sorted(self._names(f"{t.path}/branch", "branch-"))}

    def _file_table(self, db: str, name: str, t: _Table) -> FileTable:
        """The table's files as the engine's filesystem table (Java's server uses a ``FileStoreTable`` the same way
        for the history rewrites it does on a client's behalf)."""
        schema = latest_schema(self.storage, t.path)
        if schema is None:
            raise HttpError(400, f"table {db}.{name} has no schema file")
        return FileTable(self.storage, t.path, f"{db}.{name}", schema)

    def _latest_from_files(self, t: _Table) -> None:
        """After a rewrite of the history: the server's latest is the snapshot file the rewrite left latest."""
        sid = latest_snapshot_id(self.storage, t.path)
        if sid is None:
            t.latest = None
            return
        kept = t.history.get(sid)
        snap = json.loads(read_snapshot(self.storage, t.path, sid).to_json())
        if kept is None or kept["snapshot"].get("uuid") != snap.get("uuid"):
            kept = {"snapshot": snap, "recordCount": snap.get("totalRecordCount") or 0, "fileSizeInBytes": 0,
                    "fileCount": 0, "lastFileCreationTime": 0}
        t.latest = kept
        t.history = {i: v for i, v in t.history.items() if i <= sid}

    def rollback(self, db: str, name: str, body: dict[str, Any]) -> None:
        """``RollbackTableRequest``: the snapshot (or tag) ``instant`` becomes the latest; newer snapshots, tags and
        their files go (``fromSnapshot``: only if it is the latest)."""
        t = self._table(db, name)
        instant, from_snapshot = body["instant"], body.get("fromSnapshot")
        latest = latest_snapshot_id(self.storage, t.path)
        if from_snapshot is not None and from_snapshot != latest:
            raise HttpError(500, f"Latest snapshot {latest} is not {from_snapshot}")
        table = self._file_table(db, name, t)
        try:
            if instant.get("type") == "tag":
                table.rollback_to(str(instant["tagName"]))
            else:
                table.rollback_to(int(instant["snapshotId"]))
        except TagNotExistError:
            raise _not_found("TAG", str(instant.get("tagName"))) from None
        except SnapshotNotExistError:
            raise _not_found("SNAPSHOT", str(instant.get("snapshotId"))) from None
        self._latest_from_files(t)

    def create_branch(self, db: str, name: str, body: dict[str, Any]) -> None:
        t = self._table(db, name)
        branch, tag = body["branch"], body.get("fromTag")
        try:
            self._file_table(db, name, t).create_branch(branch, tag)
        except BranchAlreadyExistError:
            raise _exists("BRANCH", branch) from None
        except TagNotExistError:
            raise _not_found("TAG", str(tag)) from None

    def drop_branch(self, db: str, name: str, branch: str) -> None:
        t = self._table(db, name)
        try:
            self._file_table(db, name, t).delete_branch(branch)
        except BranchNotExistError:
            raise _not_found("BRANCH", branch) from None

    def rename_branch(self, db: str, name: str, branch: str, body: dict[str, Any]) -> None:
        t = self._table(db, name)
        try:
            self._file_table(db, name, t).rename_branch(branch, body["toBranch"])
        except BranchNotExistError:
            raise _not_found("BRANCH", branch) from None
        except BranchAlreadyExistError:
            raise _exists("BRANCH", body["toBranch"]) from None

    def forward_branch(self, db: str, name: str, branch: str) -> None:
        """Fast-forward the main branch to ``branch``: its snapshots, tags and schemas become main's."""
        t = self._table(db, name)
        try:
            self._file_table(db, name, t).fast_forward(branch)
        except BranchNotExistError:
            raise _not_found("BRANCH", branch) from None
        schema = latest_schema(self.storage, t.path)
        if schema is not None:
            t.schema = {"fields": [f.to_json() for f in schema.fields], "partitionKeys": list(schema.partition_keys),
                        "primaryKeys": list(schema.primary_keys), "options": dict(schema.options),
                        "comment": schema.comment}
            t.schema_id, t.highest_field_id = schema.id, max(t.highest_field_id, schema.highest_field_id)
        self._latest_from_files(t)

    def _names(self, directory: str, prefix: str) -> list[str]:
        """The names after ``prefix`` of the entries of ``directory`` that start with it."""
        bases = (st.path.rstrip("/").rsplit("/", 1)[-1] for st in self.storage.list_status(directory))
        return [b[len(prefix):] for b in bases if b.startswith(prefix)]

    # ------------------------------------------------------------------------------------------------ views
    def list_views(self, db: str, params: dict[str, str]) -> dict[str, Any]:
        self._db(db)
        names, token = _page([v for d, v in self._views if d == db], params)
        return {"views": names, "nextPageToken": token}

    def create_view(self, db: str, body: dict[str, Any]) -> None:
        self._db(db)
        name = body["identifier"]["object"]
        if (db, name) in self._views:
            raise _exists("VIEW", f"{db}.{name}")
        self._views[(db, name)] = {"id": str(uuid.uuid4()), "name": name, "schema": body["schema"], **_audit()}

    def get_view(self, db: str, name: str) -> dict[str, Any]:
        self._db(db)
        if (db, name) not in self._views:
            raise _not_found("VIEW", f"{db}.{name}")
        return self._views[(db, name)]

    def drop_view(self, db: str, name: str) -> None:
        self.get_view(db, name)
        del self._views[(db, name)]

    def rename_view(self, body: dict[str, Any]) -> None:
        src, dst = body["source"], body["destination"]
        view = self.get_view(src["database"], src["object"])
        self._db(dst["database"])
        if (dst["database"], dst["object"]) in self._views:
            raise _exists("VIEW", f"{dst['database']}.{dst['object']}")
        del self._views[(src["database"], src["object"])]
        self._views[(dst["database"], dst["object"])] = {**view, "name": dst["object"]}


def _field_index(fields: list[dict[str, Any]], names: list[str]) -> tuple[list[dict[str, Any]], int]:
    """The list holding the (possibly nested) field ``names`` and its index there."""
    container = fields
    for depth, name in enumerate(names):
        idx = next((i for i, f in enumerate(container) if f["name"] == name), -1)
        if idx < 0:
            raise HttpError(400, f"column {'.'.join(names)} does not exist", "COLUMN", ".".join(names))
        if depth == len(names) - 1:
            return container, idx
        container = container[idx]["type"]["fields"]
    raise HttpError(400, "empty fieldNames")


def _apply_change(schema: dict[str, Any], change: dict[str, Any], highest: int) -> int:
    """One of the spec's SchemaChange actions, applied to a Schema dict; returns the highest field id given so far
    (``highest`` before: a new column gets the next id, never a dropped column's)."""
    action = change.get("action")
    options, fields = schema.setdefault("options", {}), schema.setdefault("fields", [])
    if action == "setOption":
        options[change["key"]] = change["value"]
    elif action == "removeOption":
        options.pop(change["key"], None)
    elif action == "updateComment":
        schema["comment"] = change.get("comment")
    elif action == "addColumn":
        names = change["fieldNames"]
        container = fields
        if len(names) > 1:
            parent, idx = _field_index(fields, names[:-1])
            container = parent[idx]["type"]["fields"]
        if any(f["name"] == names[-1] for f in container):
            raise HttpError(409, f"column {'.'.join(names)} already exists", "COLUMN", ".".join(names))
        new = {"id": highest + 1, "name": names[-1], "type": change["dataType"]}
        highest = max(highest + 1, _highest_field_id([new]))
        if change.get("comment") is not None:
            new["description"] = change["comment"]
        move = change.get("move")
        if move and move.get("type") == "FIRST":
            container.insert(0, new)
        elif move and move.get("type") in ("AFTER", "BEFORE"):
            ref = next(i for i, f in enumerate(container) if f["name"] == move["referenceFieldName"])
            container.insert(ref + (1 if move["type"] == "AFTER" else 0), new)
        else:
            container.append(new)
    elif action == "renameColumn":
        container, idx = _field_index(fields, change["fieldNames"])
        container[idx]["name"] = change["newName"]
    elif action == "dropColumn":
        container, idx = _field_index(fields, change["fieldNames"])
        if container is fields and container[idx]["name"] in schema.get("primaryKeys", []):
            raise HttpError(400, f"cannot drop primary key column {container[idx]['name']}")
        del container[idx]
    elif action == "updateColumnComment":
        container, idx = _field_index(fields, change["fieldNames"])
        container[idx]["description"] = change.get("newComment")
    elif action == "updateColumnType":
        container, idx = _field_index(fields, change["fieldNames"])
        container[idx]["type"] = change["newDataType"]
    elif action == "updateColumnPosition":  # Paimon's SchemaManager.applyMove
        move = change["move"]
        names = [f["name"] for f in fields]
        i = names.index(move["fieldName"])
        if move["type"] in ("FIRST", "LAST"):
            target = 0 if move["type"] == "FIRST" else len(fields) - 1
        else:
            ref = names.index(move["referenceFieldName"])
            target = ref + (1 if move["type"] == "AFTER" and i > ref else 0) - (
                1 if move["type"] == "BEFORE" and i < ref else 0)
        fields.insert(target, fields.pop(i))
    elif action == "updateColumnNullability":
        container, idx = _field_index(fields, change["fieldNames"])
        base = str(container[idx]["type"]).removesuffix(" NOT NULL")
        container[idx]["type"] = base if change["newNullability"] else base + " NOT NULL"
    else:
        raise HttpError(400, f"unsupported schema change {action!r}")
    return highest


_SEG = r"([^/]+)"
_ROUTES: list[tuple[str, str, Callable[..., Any]]] = []


def _route(method: str, pattern: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _ROUTES.append((method, pattern, fn))
        return fn
    return register


# Paths below are relative to /v1/{prefix}; each handler gets (server, params, body, *path segments).
_route("GET", "/databases")(lambda s, q, b: s.list_databases(q))
_route("POST", "/databases")(lambda s, q, b: s.create_database(b))
_route("GET", f"/databases/{_SEG}")(lambda s, q, b, d: s.get_database(d))
_route("DELETE", f"/databases/{_SEG}")(lambda s, q, b, d: s.drop_database(d))
_route("POST", f"/databases/{_SEG}")(lambda s, q, b, d: s.alter_database(d, b))
_route("GET", f"/databases/{_SEG}/tables")(lambda s, q, b, d: s.list_tables(d, q))
_route("POST", f"/databases/{_SEG}/tables")(lambda s, q, b, d: s.create_table(d, b))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}")(lambda s, q, b, d, t: s._table_response(d, t))
_route("POST", f"/databases/{_SEG}/tables/{_SEG}")(lambda s, q, b, d, t: s.alter_table(d, t, b))
_route("DELETE", f"/databases/{_SEG}/tables/{_SEG}")(lambda s, q, b, d, t: s.drop_table(d, t))
_route("POST", "/tables/rename")(lambda s, q, b: s.rename_table(b))
_route("POST", f"/databases/{_SEG}/tables/{_SEG}/commit")(lambda s, q, b, d, t: s.commit(d, t, b))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}/snapshot")(lambda s, q, b, d, t: s.snapshot(d, t))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}/token")(lambda s, q, b, d, t: s.data_token(d, t))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}/partitions")(lambda s, q, b, d, t: s.list_partitions(d, t, q))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}/tags")(lambda s, q, b, d, t: s.list_tags(d, t, q))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}/tags/{_SEG}")(lambda s, q, b, d, t, g: s.get_tag(d, t, g))
_route("GET", f"/databases/{_SEG}/tables/{_SEG}/branches")(lambda s, q, b, d, t: s.list_branches(d, t))
_route("POST", f"/databases/{_SEG}/tables/{_SEG}/rollback")(lambda s, q, b, d, t: s.rollback(d, t, b))
_route("POST", f"/databases/{_SEG}/tables/{_SEG}/branches")(lambda s, q, b, d, t: s.create_branch(d, t, b))
_route("DELETE", f"/databases/{_SEG}/tables/{_SEG}/branches/{_SEG}")(
    lambda s, q, b, d, t, r: s.drop_branch(d, t, r))
_route("POST", f"/databases/{_SEG}/tables/{_SEG}/branches/{_SEG}/rename")(
    lambda s, q, b, d, t, r: s.rename_branch(d, t, r, b))
_route("POST", f"/databases/{_SEG}/tables/{_SEG}/branches/{_SEG}/forward")(
    lambda s, q, b, d, t, r: s.forward_branch(d, t, r))
_route("GET", f"/databases/{_SEG}/views")(lambda s, q, b, d: s.list_views(d, q))
_route("POST", f"/databases/{_SEG}/views")(lambda s, q, b, d: s.create_view(d, b))
_route("GET", f"/databases/{_SEG}/views/{_SEG}")(lambda s, q, b, d, v: s.get_view(d, v))
_route("DELETE", f"/databases/{_SEG}/views/{_SEG}")(lambda s, q, b, d, v: s.drop_view(d, v))
_route("POST", "/views/rename")(lambda s, q, b: s.rename_view(b))


class _Handler(BaseHTTPRequestHandler):
    server_state: RestCatalogServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the tests assert on ``requests`` instead."""

    def setup(self) -> None:
        super().setup()
        with self.server_state._lock:
            self.server_state._connections.add(self.connection)

    def finish(self) -> None:
        with self.server_state._lock:
            self.server_state._connections.discard(self.connection)
        super().finish()

    def _send(self, status: int, payload: Any = None, headers: dict[str, str] | None = None) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, e: HttpError, headers: dict[str, str] | None = None) -> None:
        if self.server_state.echo_auth_in_errors:
            e.message += f" (request had Authorization: {self.headers.get('Authorization')})"
        self._send(e.code, {"message": e.message, "resourceType": e.resource_type, "resourceName": e.resource_name,
                            "code": e.code}, headers)

    def _dispatch(self, method: str) -> None:
        state = self.server_state
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        state.requests.append((method, url.path))
        with state._lock:
            fault = state._faults.pop(0) if state._faults else None
        if fault is not None:
            status, retry_after = fault
            self._error(HttpError(status, "injected fault"), {"Retry-After": retry_after} if retry_after else None)
            return
        auth = self.headers.get("Authorization", "")
        presented = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        if presented is not None and presented in state._expired:
            self._error(HttpError(401, "token expired"))
            return
        if presented != state.token:
            self._error(HttpError(401, "not authorized"))
            return
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        try:
            body = json.loads(raw) if raw else {}
            if method == "GET" and url.path == "/v1/config":
                self._send(200, state.config())
                return
            base = f"/v1/{urllib.parse.quote_plus(state.prefix)}"
            if not url.path.startswith(base + "/"):
                raise HttpError(404, f"no such path {url.path}")
            rest = url.path[len(base):]
            for route_method, pattern, fn in _ROUTES:
                match = re.fullmatch(pattern, rest)
                if route_method == method and match:
                    args = [urllib.parse.unquote_plus(g) for g in match.groups()]
                    with state._lock:
                        result = fn(state, params, body, *args)
                    self._send(200, result)
                    return
            raise HttpError(404, f"no route {method} {url.path}")
        except HttpError as e:
            self._error(e)
        except (KeyError, TypeError, ValueError) as e:
            self._error(HttpError(400, f"bad request: {type(e).__name__}: {e}"))
        except Exception as e:  # noqa: BLE001 - a test server answers 500 like Java's instead of dropping the socket
            self._error(HttpError(500, f"{type(e).__name__}: {e}"))

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")


def rest_catalog(server: RestCatalogServer) -> RestCatalog:
    """A :class:`RestCatalog` on ``server`` with :data:`FAST_RETRY`."""
    options = server.options()
    return RestCatalog(server.warehouse, options, api=RestApi(options, retry=FAST_RETRY))


@pytest.fixture(name="server")
def own_server(tmp_path: Path) -> Iterator[RestCatalogServer]:
    """A server of the test's own (a fresh warehouse), as the fixture ``server``: a module imports it to use it
    instead of the session's."""
    with RestCatalogServer(tmp_path / "warehouse") as s:
        yield s
