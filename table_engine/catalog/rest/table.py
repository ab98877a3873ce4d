"""A REST catalog's table (ADR 0045): :class:`RestTable`, whose changes the server must know of go through it, and
:class:`RestSnapshotCommit`, its snapshot commits through the server's commit endpoint.

What goes through the server (Paimon Java's ``RESTCatalog`` with ``supportsVersionManagement``):

* snapshot commits (``POST .../commit``) with the commit's :class:`~table_engine.store.pins.PartitionDelta` list as
  the spec's ``PartitionStatistics`` (the server keeps per-partition totals: ``GET .../partitions``);
* schema changes (``POST .../tables/{table}``, ``AlterTableRequest.changes``): validated here first as every catalog
  validates them (bad input is refused before anything is sent), then sent as the spec's ``SchemaChange`` objects
  (:func:`change_json`, the one place the engine's changes map onto them); the server writes the next schema and
  the table reloads it;
* ``rollback_to`` (``POST .../rollback`` with a snapshot or tag ``Instant``) and the branch calls ``create_branch``,
  ``delete_branch``, ``rename_branch``, ``fast_forward`` (``.../branches``, ``.../branches/{b}/rename``,
  ``.../branches/{b}/forward``): the server rewrites the table's history and its record of the latest snapshot, which
  a client-side rewrite would leave stale (the next commit's base would no longer be the server's latest).

Tags stay the table's own files, as Paimon Java's ``FileStoreTable.createTag`` writes them on a REST catalog too
(its ``TagManager`` is the filesystem's): the server lists them from the files.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from table_engine.catalog.rest import messages
from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.client import RestConnectionError, RestResponseError
from table_engine.errors import (
    BranchAlreadyExistError,
    BranchNotExistError,
    CommitOutcomeUnknownError,
    SnapshotNotExistError,
    TableEngineError,
    UnsupportedError,
)
from table_engine.features import Op
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import Snapshot, list_snapshot_ids, read_snapshot
from table_engine.io.base import FileIO
from table_engine.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
    apply_changes,
)
from table_engine.store.lifecycle.rollback import RollbackResult
from table_engine.store.pins import PartitionDelta
from table_engine.table import Table
from table_engine.table.guards import mutating

log = logging.getLogger(__name__)


def schema_of(response: messages.Table) -> TableSchema:
    """The server's schema of a table as the engine's :class:`TableSchema` (its id is ``schemaId``)."""
    s = response.schema
    doc = {"id": response.schema_id, "fields": s.fields, "partitionKeys": s.partition_keys,
           "primaryKeys": s.primary_keys, "options": s.options, "comment": s.comment}
    return TableSchema.from_json(json.dumps(doc), f"{response.path} (schema {response.schema_id} of the REST server)")


def change_json(change: SchemaChange, changed: TableSchema) -> messages.JsonObject:
    """The spec's ``SchemaChange`` object of one engine change; ``changed`` is the schema after all the changes (as
    the engine validated them), whose types (with the nested field ids the engine gave them) are sent. A change the
    spec cannot carry is refused by its name."""
    if isinstance(change, AddColumn):
        placed = None if change.move is None else messages.move(change.name, change.move.type, change.move.reference)
        return messages.add_column([change.name], _field(changed, change.name).type.to_json(), change.description,
                                   placed)
    if isinstance(change, RenameColumn):
        return messages.rename_column([change.name], change.new_name)
    if isinstance(change, DropColumn):
        return messages.drop_column([change.name])
    if isinstance(change, UpdateColumnType):
        return messages.update_column_type([change.name], _field(changed, change.name).type.to_json())
    if isinstance(change, UpdateColumnPosition):
        return messages.update_column_position(messages.move(change.name, change.move.type, change.move.reference))
    if isinstance(change, UpdateColumnComment):
        return messages.update_column_comment([change.name], change.comment)
    if isinstance(change, UpdateColumnNullability):
        return messages.update_column_nullability([change.name], change.nullable)
    if isinstance(change, UpdateComment):
        return messages.update_comment(change.comment)
    if isinstance(change, SetOption):
        return messages.set_option(change.key, str(change.value))
    if isinstance(change, RemoveOption):
        return messages.remove_option(change.key)
    raise UnsupportedError(f"schema change {type(change).__name__} has no counterpart in the REST API's "
                           "SchemaChange; it cannot be sent to a REST catalog")


def _field(schema: TableSchema, name: str) -> Any:
    return next(f for f in schema.fields if f.name == name)


@dataclass(frozen=True)
class RestSnapshotCommit:
    """Commits one table's snapshots through the server (``POST .../commit``; a
    :data:`~table_engine.store.pins.SnapshotCommit`), with what the commit changes per partition (the spec's
    ``PartitionStatistics``). The server answers whether the snapshot is now the latest (``success: false``: its base
    moved or its id is taken, a lost race the committer retries). When the request fails after it may have reached
    the server (no answer, a 5xx), the snapshot file is read back: the server writes ``snapshot-<id>`` before it
    answers, so ours there means committed and another's a lost race; none leaves the outcome unknown
    (:class:`CommitOutcomeUnknownError`: the files are kept). Also the table's way to its server
    (:class:`RestTable`)."""

    api: RestApi = field(repr=False)
    identifier: messages.Identifier
    table_id: str
    file_io: FileIO = field(repr=False)
    table_path: str

    def __call__(self, snapshot: Snapshot, base: Snapshot | None, statistics: Sequence[PartitionDelta] = ()) -> bool:
        body = json.loads(snapshot.to_json())
        stats = [messages.PartitionStatistics(d.spec, d.record_count, d.file_size_in_bytes, d.file_count,
                                              d.last_file_creation_time, d.total_buckets) for d in statistics]
        try:
            return self.api.commit_snapshot(self.identifier, self.table_id, None if base is None else base.uuid,
                                            body, stats)
        except (RestConnectionError, RestResponseError) as e:
            if isinstance(e, RestConnectionError) and not e.sent:
                raise  # never sent: nothing happened
            if isinstance(e, RestResponseError) and e.status < 500:
                raise  # refused (401, 403, 404...): nothing happened
            return self._read_back(snapshot, e)

    def _read_back(self, snapshot: Snapshot, error: Exception) -> bool:
        try:
            found = read_snapshot(self.file_io, self.table_path, snapshot.id)
        except SnapshotNotExistError:
            found = None
        except Exception:  # noqa: BLE001 - any failure to read leaves the outcome unknown
            found = None
        if found is not None:
            ours = found.uuid == snapshot.uuid and found.base_manifest_list == snapshot.base_manifest_list
            log.info("commit of snapshot %d of %s: the request failed (%s), the snapshot is %s", snapshot.id,
                     self.identifier, error, "ours" if ours else "another committer's")
            return ours
        raise CommitOutcomeUnknownError(f"commit of snapshot {snapshot.id} to {self.identifier} through the REST "
                                        f"catalog failed and its outcome is unknown ({error}); its files are kept")


class RestTable(Table):
    """A table of a REST catalog: a :class:`Table` whose snapshot commits, schema changes, rollbacks and branch
    changes go through the server (see the module). A branch of it (``branch_table``) or a copy shipped to a Spark
    task has no way to the server: those calls refuse there with one error."""

    def _server(self, action: str) -> RestSnapshotCommit:
        commit = self.hooks.snapshot_commit
        if isinstance(commit, RestSnapshotCommit):
            return commit
        raise UnsupportedError(f"{action} on {self.identifier}: a REST catalog's table changes through its server, "
                               "and this table object has no way to it (a branch, or a copy sent to another "
                               "process): call it on the table the catalog opened")

    @mutating(Op.WRITE)
    def alter(self, *changes: SchemaChange) -> TableSchema:
        """Apply schema changes through the server (``AlterTableRequest``): checked here against the server's
        current schema first (nothing is sent when one is refused), then sent in one request; the server writes the
        next schema, which this table reloads and returns."""
        server = self._server("alter (schema changes)")
        current = schema_of(server.api.get_table(server.identifier))
        changed = apply_changes(current, changes, has_snapshots=self.latest_snapshot_id() is not None)
        server.api.alter_table(server.identifier, [change_json(c, changed) for c in changes])
        new = schema_of(server.api.get_table(server.identifier))
        self._set_schema(new)
        log.info("table %s: schema %d committed through the REST catalog", self.identifier, new.id)
        return new

    @mutating(Op.MAINTAIN)
    def rollback_to(self, version: int | str) -> RollbackResult:
        """Roll back to a snapshot id (int) or a tag (str) through the server (``RollbackTableRequest``): the server
        removes the newer snapshots, tags and files and makes that snapshot its latest. The result lists the
        snapshots and tags that are gone (the server does not say how many files it deleted: 0)."""
        if isinstance(version, bool) or not isinstance(version, (int, str)):
            raise TableEngineError(f"rollback needs a snapshot id or a tag name, got {version!r}")
        server = self._server("rollback_to")
        ids_before, tags_before = list_snapshot_ids(self.file_io, self.path), set(self.list_tags())
        instant = messages.snapshot_instant(version) if isinstance(version, int) else messages.tag_instant(version)
        server.api.rollback_table(server.identifier, instant)
        self.refresh()
        latest = self.latest_snapshot_id()
        target = latest if latest is not None else (version if isinstance(version, int) else 0)
        return RollbackResult(snapshot_id=target, removed_snapshot_ids=[i for i in ids_before if i > target],
                              removed_tags=sorted(tags_before - set(self.list_tags())))

    @mutating(Op.MAINTAIN)
    def create_branch(self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False) -> Table:
        """Create branch ``name`` through the server (``CreateBranchRequest``: empty, or from ``tag``)."""
        server = self._server("create_branch")
        try:
            server.api.create_branch(server.identifier, name, tag)
        except BranchAlreadyExistError:
            if not ignore_if_exists:
                raise
        return self.branch_table(name)

    @mutating(Op.MAINTAIN)
    def delete_branch(self, name: str, *, ignore_if_missing: bool = False) -> bool:
        """Drop branch ``name`` through the server; False if it did not exist and ``ignore_if_missing``."""
        server = self._server("delete_branch")
        try:
            server.api.drop_branch(server.identifier, name)
        except BranchNotExistError:
            if not ignore_if_missing:
                raise
            return False
        return True

    @mutating(Op.MAINTAIN)
    def rename_branch(self, name: str, new_name: str) -> None:
        server = self._server("rename_branch")
        server.api.rename_branch(server.identifier, name, new_name)

    @mutating(Op.MAINTAIN)
    def fast_forward(self, name: str) -> int:
        """Make the main branch branch ``name`` through the server (``forwardBranch``); returns the latest snapshot id
        afterwards."""
        server = self._server("fast_forward")
        server.api.forward_branch(server.identifier, name)
        self._set_schema(schema_of(server.api.get_table(server.identifier)))
        latest = self.latest_snapshot_id()
        if latest is None:
            raise SnapshotNotExistError(f"table {self.identifier} has no snapshot after the fast-forward to {name!r}")
        return latest

