"""The REST catalog's JSON bodies used by :mod:`table_engine.catalog.rest.api`, with the spec's field names.

Names are those of Paimon's ``rest-catalog-open-api.yaml`` and of Paimon Java's ``org.apache.paimon.rest.requests``/
``responses`` classes; where the two differ the Java name, which servers actually send, is read first (the data token's
expiry: Java ``expiresAtMillis``, the spec ``expiresAt``). Responses are parsed leniently (unknown fields ignored,
missing optional fields None) because servers add fields over versions. Two bodies stay plain JSON objects on
purpose: a table ``Schema``'s ``fields`` (Paimon's ``DataField`` JSON, which the engine's schema code owns) and a
``Snapshot`` (Paimon's snapshot file JSON, written and read by the engine's snapshot code).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]

AUDIT_FIELDS = ("owner", "createdAt", "createdBy", "updatedAt", "updatedBy")


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (value or {}).items()}


@dataclass(frozen=True)
class Identifier:
    """The spec's ``Identifier``: ``{"database": ..., "object": ...}``."""

    database: str
    object: str

    def to_json(self) -> JsonObject:
        return {"database": self.database, "object": self.object}

    def __str__(self) -> str:
        return f"{self.database}.{self.object}"


@dataclass(frozen=True)
class ConfigResponse:
    """``GET /v1/config``: ``defaults`` (under the client's options) and ``overrides`` (over them)."""

    defaults: dict[str, str]
    overrides: dict[str, str]

    @classmethod
    def from_json(cls, data: JsonObject) -> ConfigResponse:
        return cls(_str_map(data.get("defaults")), _str_map(data.get("overrides")))

    def merge(self, options: dict[str, str]) -> dict[str, str]:
        """Paimon's ``ConfigResponse.merge``: defaults, then the client's options, then the overrides."""
        return {**self.defaults, **options, **self.overrides}


@dataclass(frozen=True)
class PagedList:
    """One page of a list endpoint: the elements and the token of the next page (None on the last)."""

    elements: list[Any]
    next_page_token: str | None


@dataclass(frozen=True)
class Database:
    """``GetDatabaseResponse``."""

    name: str
    id: str | None = None
    location: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: JsonObject) -> Database:
        return cls(name=data["name"], id=data.get("id"), location=data.get("location"),
                   options=_str_map(data.get("options")),
                   audit={k: data[k] for k in AUDIT_FIELDS if data.get(k) is not None})


@dataclass(frozen=True)
class AlterDatabaseResult:
    """``AlterDatabaseResponse``: keys removed, updated, and asked to remove but missing."""

    removed: list[str]
    updated: list[str]
    missing: list[str]

    @classmethod
    def from_json(cls, data: JsonObject | None) -> AlterDatabaseResult:
        data = data or {}
        return cls(list(data.get("removed") or []), list(data.get("updated") or []), list(data.get("missing") or []))


@dataclass(frozen=True)
class TableSchema:
    """The spec's ``Schema`` (a table's definition in a create request and a get answer)."""

    fields: list[JsonObject]
    partition_keys: list[str] = field(default_factory=list)
    primary_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None

    @classmethod
    def from_json(cls, data: JsonObject) -> TableSchema:
        return cls(fields=list(data.get("fields") or []), partition_keys=list(data.get("partitionKeys") or []),
                   primary_keys=list(data.get("primaryKeys") or []), options=_str_map(data.get("options")),
                   comment=data.get("comment"))

    def to_json(self) -> JsonObject:
        return {"fields": self.fields, "partitionKeys": self.partition_keys, "primaryKeys": self.primary_keys,
                "options": self.options, "comment": self.comment}


@dataclass(frozen=True)
class Table:
    """``GetTableResponse``: the server's record of a table; ``path`` is where its files are."""

    id: str
    name: str
    path: str
    schema_id: int
    schema: TableSchema
    is_external: bool = False
    database: str | None = None
    audit: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: JsonObject) -> Table:
        return cls(id=data["id"], name=data["name"], path=data["path"], schema_id=int(data["schemaId"]),
                   schema=TableSchema.from_json(data.get("schema") or {}),
                   is_external=bool(data.get("isExternal", False)), database=data.get("database"),
                   audit={k: data[k] for k in AUDIT_FIELDS if data.get(k) is not None})


@dataclass(frozen=True)
class TableSnapshot:
    """``TableSnapshot``: the latest snapshot (Paimon's snapshot JSON) and the table's totals."""

    snapshot: JsonObject
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int

    @classmethod
    def from_json(cls, data: JsonObject) -> TableSnapshot:
        return cls(snapshot=dict(data["snapshot"]), record_count=int(data.get("recordCount") or 0),
                   file_size_in_bytes=int(data.get("fileSizeInBytes") or 0),
                   file_count=int(data.get("fileCount") or 0),
                   last_file_creation_time=int(data.get("lastFileCreationTime") or 0))


@dataclass(frozen=True)
class PartitionStatistics:
    """``PartitionStatistics``: the change a commit makes to one partition (sent with the commit)."""

    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    total_buckets: int = 0

    def to_json(self) -> JsonObject:
        return {"spec": self.spec, "recordCount": self.record_count, "fileSizeInBytes": self.file_size_in_bytes,
                "fileCount": self.file_count, "lastFileCreationTime": self.last_file_creation_time,
                "totalBuckets": self.total_buckets}


@dataclass(frozen=True)
class Partition:
    """``Partition``: a partition's totals as the server keeps them."""

    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    done: bool = False

    @classmethod
    def from_json(cls, data: JsonObject) -> Partition:
        return cls(spec=_str_map(data.get("spec")), record_count=int(data.get("recordCount") or 0),
                   file_size_in_bytes=int(data.get("fileSizeInBytes") or 0),
                   file_count=int(data.get("fileCount") or 0),
                   last_file_creation_time=int(data.get("lastFileCreationTime") or 0),
                   done=bool(data.get("done", False)))


@dataclass(frozen=True)
class DataToken:
    """``GetTableTokenResponse``: storage credentials for one table's files, valid until ``expires_at_millis``."""

    token: dict[str, str] = field(repr=False)
    expires_at_millis: int

    @classmethod
    def from_json(cls, data: JsonObject) -> DataToken:
        expires = data.get("expiresAtMillis", data.get("expiresAt"))
        return cls(token=_str_map(data.get("token")), expires_at_millis=int(expires or 0))

    def __repr__(self) -> str:
        return f"DataToken(keys={sorted(self.token)}, expires_at_millis={self.expires_at_millis})"


@dataclass(frozen=True)
class ViewSchema:
    """The spec's ``ViewSchema``: fields, the query, per-dialect queries, comment and options."""

    fields: list[JsonObject]
    query: str
    dialects: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: JsonObject) -> ViewSchema:
        return cls(fields=list(data.get("fields") or []), query=data.get("query") or "",
                   dialects=_str_map(data.get("dialects")), comment=data.get("comment"),
                   options=_str_map(data.get("options")))

    def to_json(self) -> JsonObject:
        return {"fields": self.fields, "query": self.query, "dialects": self.dialects, "comment": self.comment,
                "options": self.options}


@dataclass(frozen=True)
class View:
    """``GetViewResponse``."""

    id: str | None
    name: str
    schema: ViewSchema

    @classmethod
    def from_json(cls, data: JsonObject) -> View:
        return cls(id=data.get("id"), name=data["name"], schema=ViewSchema.from_json(data.get("schema") or {}))


@dataclass(frozen=True)
class Tag:
    """``GetTagResponse``: the tag's snapshot (Paimon's snapshot JSON) and its retention."""

    name: str
    snapshot: JsonObject
    create_time: int | None = None
    time_retained: str | None = None

    @classmethod
    def from_json(cls, data: JsonObject) -> Tag:
        return cls(name=data["tagName"], snapshot=dict(data.get("snapshot") or {}),
                   create_time=data.get("tagCreateTime"), time_retained=data.get("tagTimeRetained"))


# ------------------------------------------------------------------------------------------------ schema changes
# The spec's SchemaChange (discriminated by "action"), built as plain objects for AlterTableRequest.changes.


def set_option(key: str, value: str) -> JsonObject:
    """SetOption: set a table option."""
    return {"action": "setOption", "key": key, "value": value}


def remove_option(key: str) -> JsonObject:
    """RemoveOption: remove a table option."""
    return {"action": "removeOption", "key": key}


def update_comment(comment: str | None) -> JsonObject:
    """UpdateComment: the table comment (None clears it)."""
    return {"action": "updateComment", "comment": comment}


def add_column(field_names: list[str], data_type: Any, comment: str | None = None,
               move: JsonObject | None = None) -> JsonObject:
    """AddColumn: a new (possibly nested) column, placed by ``move`` (the spec's Move; None: last)."""
    change: JsonObject = {"action": "addColumn", "fieldNames": field_names, "dataType": data_type}
    if comment is not None:
        change["comment"] = comment
    if move is not None:
        change["move"] = move
    return change


def rename_column(field_names: list[str], new_name: str) -> JsonObject:
    """RenameColumn."""
    return {"action": "renameColumn", "fieldNames": field_names, "newName": new_name}


def drop_column(field_names: list[str]) -> JsonObject:
    """DropColumn."""
    return {"action": "dropColumn", "fieldNames": field_names}


def update_column_type(field_names: list[str], new_data_type: Any, keep_nullability: bool = False) -> JsonObject:
    """UpdateColumnType: a new Paimon data type (JSON form)."""
    return {"action": "updateColumnType", "fieldNames": field_names, "newDataType": new_data_type,
            "keepNullability": keep_nullability}


def update_column_comment(field_names: list[str], new_comment: str | None) -> JsonObject:
    """UpdateColumnComment."""
    return {"action": "updateColumnComment", "fieldNames": field_names, "newComment": new_comment}


def update_column_nullability(field_names: list[str], new_nullability: bool) -> JsonObject:
    """UpdateColumnNullability."""
    return {"action": "updateColumnNullability", "fieldNames": field_names, "newNullability": new_nullability}


def move(field_name: str, move_type: str, reference: str | None = None) -> JsonObject:
    """The spec's Move: ``FIRST``, ``LAST``, or ``AFTER`` / ``BEFORE`` the column ``reference``."""
    return {"fieldName": field_name, "referenceFieldName": reference, "type": move_type}


def update_column_position(column_move: JsonObject) -> JsonObject:
    """UpdateColumnPosition: a Move of an existing column."""
    return {"action": "updateColumnPosition", "move": column_move}


# ------------------------------------------------------------------------------------------------ rollback instants
# The spec's Instant (discriminated by "type") of a RollbackTableRequest.


def snapshot_instant(snapshot_id: int) -> JsonObject:
    """SnapshotInstant: roll back to snapshot ``snapshot_id``."""
    return {"type": "snapshot", "snapshotId": snapshot_id}


def tag_instant(tag: str) -> JsonObject:
    """TagInstant: roll back to the snapshot of tag ``tag``."""
    return {"type": "tag", "tagName": tag}
