"""``RestApi``: Paimon's REST catalog API, one typed method per endpoint (Paimon Java's ``RESTApi``).

Construction follows Paimon: the options need ``uri``, ``warehouse`` and ``token.provider`` (plus its keys); the
client first calls ``GET /v1/config?warehouse=<warehouse>`` and merges the answer (server defaults, then the user's
options, then server overrides: :meth:`ConfigResponse.merge`). The merged options give the path ``prefix`` of every
other endpoint (``/v1/<prefix>/...``) and more ``header.*`` headers. ``options`` holds the merged result, which the
catalog hands on (``warehouse`` may have become a storage location; ``data-token.enabled`` may be set by the server).

List methods follow ``nextPageToken`` to the end (``maxResults`` per page from ``rest.page-size``, else the server's
default); ``*_paged`` methods return one :class:`PagedList` page.

Errors map onto ``table_engine.errors`` by HTTP status and the answer's ``resourceType`` (else the resource the call
is about): 404 -> ``DatabaseNotExistError``/``TableNotExistError``/``ViewNotExistError``/``TagNotExistError``/
``BranchNotExistError``/``SnapshotNotExistError``; 409 -> the matching ``*AlreadyExistError`` (``DatabaseNotEmptyError``
for a database drop); 401/403 -> ``CatalogError("authentication failed for <uri> ...")``; anything else stays a
:class:`RestResponseError` (a ``CatalogError`` naming method, path, status and the server's message).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote_plus

from table_engine.catalog.rest.auth import AuthProvider, auth_provider_from_options
from table_engine.catalog.rest.client import RestClient, RestResponseError, RetryPolicy, Timeouts
from table_engine.catalog.rest.messages import (
    AlterDatabaseResult,
    ConfigResponse,
    Database,
    DataToken,
    Identifier,
    JsonObject,
    PagedList,
    Partition,
    PartitionStatistics,
    Table,
    TableSchema,
    TableSnapshot,
    Tag,
    View,
    ViewSchema,
)
from table_engine.errors import (
    BranchAlreadyExistError,
    BranchNotExistError,
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    OptionError,
    SnapshotNotExistError,
    TableAlreadyExistError,
    TableEngineError,
    TableNotExistError,
    TagAlreadyExistError,
    TagNotExistError,
    ViewAlreadyExistError,
    ViewNotExistError,
)

URI = "uri"
WAREHOUSE = "warehouse"
PREFIX = "prefix"
HEADER_PREFIX = "header."
PAGE_SIZE = "rest.page-size"
CONNECT_TIMEOUT = "rest.connect-timeout"
READ_TIMEOUT = "rest.read-timeout"
MAX_RETRIES = "rest.max-retries"

_NOT_FOUND: dict[str, type[TableEngineError]] = {
    "DATABASE": DatabaseNotExistError, "TABLE": TableNotExistError, "VIEW": ViewNotExistError,
    "TAG": TagNotExistError, "BRANCH": BranchNotExistError, "SNAPSHOT": SnapshotNotExistError,
}
_EXISTS: dict[str, type[TableEngineError]] = {
    "DATABASE": DatabaseAlreadyExistError, "TABLE": TableAlreadyExistError, "VIEW": ViewAlreadyExistError,
    "TAG": TagAlreadyExistError, "BRANCH": BranchAlreadyExistError,
}


def encode(name: str) -> str:
    """One path segment as Java's ``URLEncoder`` writes it (``+`` for a space, ``/`` escaped); ``~`` stays raw
    because ``requests`` un-escapes ``%7E`` before sending and a signature covers the path as sent."""
    return quote_plus(name, safe="*~")


class RestApi:
    """A typed client of one REST catalog (see the module docstring)."""

    def __init__(self, options: Mapping[str, str], auth: AuthProvider | None = None,
                 retry: RetryPolicy | None = None) -> None:
        user = dict(options)
        uri = (user.get(URI) or "").strip()
        if not uri:
            raise OptionError("metastore=rest needs the option 'uri'")
        warehouse = (user.get(WAREHOUSE) or "").strip()
        if not warehouse:
            raise OptionError("metastore=rest needs the option 'warehouse' (the catalog's name on the server)")
        timeouts = Timeouts(float(user.get(CONNECT_TIMEOUT, Timeouts.connect)),
                            float(user.get(READ_TIMEOUT, Timeouts.read)))
        retry = retry or RetryPolicy(max_retries=int(user.get(MAX_RETRIES, RetryPolicy.max_retries)))
        self.client = RestClient(uri, auth or auth_provider_from_options(user), _headers(user), timeouts, retry)
        self.uri = self.client.uri
        config = ConfigResponse.from_json(self._call("GET", "/v1/config", "CATALOG", warehouse,
                                                     params={"warehouse": warehouse}) or {})
        self.options = config.merge(user)
        self.client.set_headers(_headers(self.options))
        prefix = self.options.get(PREFIX, "")
        self.base = "/v1/" + encode(prefix) if prefix else "/v1"
        self.page_size = int(self.options[PAGE_SIZE]) if self.options.get(PAGE_SIZE) else None

    def __repr__(self) -> str:
        return f"RestApi(uri={self.uri!r}, base={self.base!r})"

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------------------------------------------ plumbing
    def _call(self, method: str, path: str, kind: str, name: str, params: Mapping[str, str] | None = None,
              body: Any = None) -> Any:
        try:
            return self.client.request(method, path, params, body)
        except RestResponseError as e:
            raise self._map(e, kind, name, method) from None

    def _map(self, e: RestResponseError, kind: str, name: str, method: str) -> CatalogError | TableEngineError:
        resource = (e.resource_type or kind).upper()
        subject = e.resource_name or name
        if e.status in (401, 403):
            return CatalogError(f"authentication failed for {self.uri}: {e.method} {e.path} answered HTTP "
                                f"{e.status} ({e.server_message})")
        if e.status == 404 and resource in _NOT_FOUND:
            return _NOT_FOUND[resource](f"{resource.lower()} {subject} does not exist ({e})")
        if e.status == 409:
            if resource == "DATABASE" and method == "DELETE":
                return DatabaseNotEmptyError(f"database {subject} is not empty ({e})")
            if resource in _EXISTS:
                return _EXISTS[resource](f"{resource.lower()} {subject} already exists ({e})")
        return e

    def _pages(self, path: str, key: str, kind: str, name: str, params: Mapping[str, str] | None = None,
               parse: Callable[[Any], Any] = lambda x: x) -> Iterator[Any]:
        token: str | None = None
        while True:
            page = self._page(path, key, kind, name, params, self.page_size, token, parse)
            yield from page.elements
            if not page.next_page_token or page.next_page_token == token:
                return
            token = page.next_page_token

    def _page(self, path: str, key: str, kind: str, name: str, params: Mapping[str, str] | None,
              max_results: int | None, page_token: str | None,
              parse: Callable[[Any], Any] = lambda x: x) -> PagedList:
        query = dict(params or {})
        if max_results is not None:
            query["maxResults"] = str(max_results)
        if page_token:
            query["pageToken"] = page_token
        data = self._call("GET", path, kind, name, params=query) or {}
        return PagedList([parse(x) for x in data.get(key) or []], data.get("nextPageToken") or None)

    def _db(self, database: str) -> str:
        return f"{self.base}/databases/{encode(database)}"

    def _tbl(self, ident: Identifier) -> str:
        return f"{self._db(ident.database)}/tables/{encode(ident.object)}"

    # ------------------------------------------------------------------------------------------------ databases
    def list_databases(self) -> list[str]:
        return list(self._pages(f"{self.base}/databases", "databases", "CATALOG", self.uri))

    def list_databases_paged(self, max_results: int | None = None, page_token: str | None = None) -> PagedList:
        return self._page(f"{self.base}/databases", "databases", "CATALOG", self.uri, None, max_results, page_token)

    def create_database(self, name: str, options: Mapping[str, str] | None = None) -> None:
        self._call("POST", f"{self.base}/databases", "DATABASE", name,
                   body={"name": name, "options": dict(options or {})})

    def get_database(self, name: str) -> Database:
        return Database.from_json(self._call("GET", self._db(name), "DATABASE", name))

    def drop_database(self, name: str) -> None:
        self._call("DELETE", self._db(name), "DATABASE", name)

    def alter_database(self, name: str, removals: list[str] | None = None,
                       updates: Mapping[str, str] | None = None) -> AlterDatabaseResult:
        return AlterDatabaseResult.from_json(self._call(
            "POST", self._db(name), "DATABASE", name,
            body={"removals": list(removals or []), "updates": dict(updates or {})}))

    # ------------------------------------------------------------------------------------------------ tables
    def list_tables(self, database: str) -> list[str]:
        return list(self._pages(f"{self._db(database)}/tables", "tables", "DATABASE", database))

    def list_tables_paged(self, database: str, max_results: int | None = None,
                          page_token: str | None = None) -> PagedList:
        return self._page(f"{self._db(database)}/tables", "tables", "DATABASE", database, None, max_results,
                          page_token)

    def create_table(self, ident: Identifier, schema: TableSchema) -> None:
        self._call("POST", f"{self._db(ident.database)}/tables", "TABLE", str(ident),
                   body={"identifier": ident.to_json(), "schema": schema.to_json()})

    def get_table(self, ident: Identifier) -> Table:
        return Table.from_json(self._call("GET", self._tbl(ident), "TABLE", str(ident)))

    def drop_table(self, ident: Identifier) -> None:
        self._call("DELETE", self._tbl(ident), "TABLE", str(ident))

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        self._call("POST", f"{self.base}/tables/rename", "TABLE", str(source),
                   body={"source": source.to_json(), "destination": destination.to_json()})

    def alter_table(self, ident: Identifier, changes: list[JsonObject]) -> None:
        """Schema changes (``messages.set_option``, ``add_column``...); the server writes the next schema."""
        self._call("POST", self._tbl(ident), "TABLE", str(ident), body={"changes": changes})

    def commit_snapshot(self, ident: Identifier, table_id: str | None, base_snapshot_uuid: str | None,
                        snapshot: JsonObject, statistics: list[PartitionStatistics]) -> bool:
        """Ask the server to commit ``snapshot`` on top of ``base_snapshot_uuid``: True if it did, False on a
        conflict (the base moved, or the snapshot id is taken)."""
        body = {"tableId": table_id, "baseSnapshotUuid": base_snapshot_uuid, "snapshot": snapshot,
                "statistics": [s.to_json() for s in statistics]}
        answer = self._call("POST", f"{self._tbl(ident)}/commit", "TABLE", str(ident), body=body) or {}
        return bool(answer.get("success", False))

    def load_snapshot(self, ident: Identifier) -> TableSnapshot | None:
        """The latest snapshot the server committed, or None when the table has none."""
        try:
            data = self._call("GET", f"{self._tbl(ident)}/snapshot", "SNAPSHOT", str(ident))
        except SnapshotNotExistError:
            return None
        return TableSnapshot.from_json(data["snapshot"])

    def load_table_token(self, ident: Identifier) -> DataToken:
        """Storage credentials for the table's files (``data-token.enabled``), with their expiry."""
        return DataToken.from_json(self._call("GET", f"{self._tbl(ident)}/token", "TABLE", str(ident)))

    def list_partitions(self, ident: Identifier) -> list[Partition]:
        return list(self._pages(f"{self._tbl(ident)}/partitions", "partitions", "TABLE", str(ident),
                                parse=Partition.from_json))

    def list_tags(self, ident: Identifier) -> list[str]:
        return list(self._pages(f"{self._tbl(ident)}/tags", "tags", "TABLE", str(ident)))

    def get_tag(self, ident: Identifier, tag: str) -> Tag:
        return Tag.from_json(self._call("GET", f"{self._tbl(ident)}/tags/{encode(tag)}", "TAG", tag))

    def rollback_table(self, ident: Identifier, instant: JsonObject, from_snapshot: int | None = None) -> None:
        """Make the snapshot of ``instant`` (``messages.snapshot_instant`` / ``tag_instant``) the table's latest;
        the server removes what is newer. ``from_snapshot``: only if that is still the latest."""
        kind = "TAG" if instant.get("type") == "tag" else "SNAPSHOT"
        name = str(instant.get("tagName") if kind == "TAG" else instant.get("snapshotId"))
        self._call("POST", f"{self._tbl(ident)}/rollback", kind, name,
                   body={"instant": instant, "fromSnapshot": from_snapshot})

    def list_branches(self, ident: Identifier) -> list[str]:
        data = self._call("GET", f"{self._tbl(ident)}/branches", "TABLE", str(ident)) or {}
        return list(data.get("branches") or [])

    def create_branch(self, ident: Identifier, branch: str, from_tag: str | None = None) -> None:
        """A branch of the table, empty or from tag ``from_tag`` (404 of the tag: ``TagNotExistError``)."""
        self._call("POST", f"{self._tbl(ident)}/branches", "BRANCH", branch,
                   body={"branch": branch, "fromTag": from_tag})

    def drop_branch(self, ident: Identifier, branch: str) -> None:
        self._call("DELETE", f"{self._tbl(ident)}/branches/{encode(branch)}", "BRANCH", branch)

    def rename_branch(self, ident: Identifier, branch: str, to_branch: str) -> None:
        self._call("POST", f"{self._tbl(ident)}/branches/{encode(branch)}/rename", "BRANCH", branch,
                   body={"toBranch": to_branch})

    def forward_branch(self, ident: Identifier, branch: str) -> None:
        """Fast-forward the main branch to ``branch`` (the spec's ``forwardBranch``)."""
        self._call("POST", f"{self._tbl(ident)}/branches/{encode(branch)}/forward", "BRANCH", branch,
                   body={"branch": branch})

    # ------------------------------------------------------------------------------------------------ views
    def list_views(self, database: str) -> list[str]:
        return list(self._pages(f"{self._db(database)}/views", "views", "DATABASE", database))

    def create_view(self, ident: Identifier, schema: ViewSchema) -> None:
        self._call("POST", f"{self._db(ident.database)}/views", "VIEW", str(ident),
                   body={"identifier": ident.to_json(), "schema": schema.to_json()})

    def get_view(self, ident: Identifier) -> View:
        return View.from_json(self._call("GET", f"{self._db(ident.database)}/views/{encode(ident.object)}", "VIEW",
                                         str(ident)))

    def drop_view(self, ident: Identifier) -> None:
        self._call("DELETE", f"{self._db(ident.database)}/views/{encode(ident.object)}", "VIEW", str(ident))

    def rename_view(self, source: Identifier, destination: Identifier) -> None:
        self._call("POST", f"{self.base}/views/rename", "VIEW", str(source),
                   body={"source": source.to_json(), "destination": destination.to_json()})


def _headers(options: Mapping[str, str]) -> dict[str, str]:
    return {k[len(HEADER_PREFIX):]: v for k, v in options.items() if k.startswith(HEADER_PREFIX)}
