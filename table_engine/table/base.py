"""The shared state of a :class:`~table_engine.table.Table`: construction, identity, schema and options, schema
evolution, dynamic options, and the read-only guard (:func:`mutating`) every writing method goes through."""

from __future__ import annotations

import contextvars
import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, Self, TypeVar, cast

import pyarrow as pa

from table_engine.core_options import CoreOptions
from table_engine.errors import ReadOnlyTableError, SchemaError, naming_snapshot
from table_engine.features import Op, require
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.feature_detection import (
    data_file_features,
    index_features,
    schema_features,
    snapshot_features,
)
from table_engine.format.index_manifest import read_index_manifest
from table_engine.format.schema_file import TableSchema, latest_schema, try_commit_schema
from table_engine.format.snapshot import Snapshot, latest_snapshot, latest_snapshot_id
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_dir
from table_engine.schema_change import SchemaChange, apply_changes
from table_engine.store.context import StoreContext

if TYPE_CHECKING:
    from table_engine.table import Table
    from table_engine.table_source import TableSource

log = logging.getLogger("table_engine.table")

_GATE_READ_RETRIES = 10
"""How often the capability gate reads the latest snapshot again when a concurrent expiry removed it under it."""
_P = ParamSpec("_P")
_R = TypeVar("_R")


_gated: contextvars.ContextVar[frozenset[tuple[int, Op]]] = contextvars.ContextVar("gated", default=frozenset())
"""(table object id, operation) pairs whose gate passed in the calls this context is inside (no check twice)."""


class Guarded(Protocol):
    """What :func:`mutating` guards: a table, or a namespace of one (``table.maintenance``)."""

    def _guarded_table(self) -> TableBase: ...


_G = TypeVar("_G", bound=Guarded)


def mutating(op: Op) -> Callable[[Callable[Concatenate[_G, _P], _R]], Callable[Concatenate[_G, _P], _R]]:
    """Marks a method that changes the table (data, metadata, tags, consumers or files) as an ``op``
    (:attr:`Op.WRITE <table_engine.features.Op.WRITE>` for writes and commits, :attr:`Op.MAINTAIN
    <table_engine.features.Op.MAINTAIN>` for the rest): on a read-only table (a system table, ``$ro``) it raises
    :class:`ReadOnlyTableError`, and on a table with a feature the engine cannot write or maintain
    :class:`~table_engine.errors.UnsupportedTableFeatureError` (the capability gate, :mod:`table_engine.features`),
    before doing anything. A guarded call inside another of the same table and op is not checked again."""

    def decorate(method: Callable[Concatenate[_G, _P], _R]) -> Callable[Concatenate[_G, _P], _R]:
        @functools.wraps(method)
        def guarded(self: _G, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            table = self._guarded_table()
            table._check_writable(method.__name__)
            done = _gated.get()
            if (id(table), op) in done:
                return method(self, *args, **kwargs)
            table._gate(op)
            token = _gated.set(done | {(id(table), op)})
            try:
                return method(self, *args, **kwargs)
            finally:
                _gated.reset(token)

        guarded.__mutating__ = op  # type: ignore[attr-defined]
        return guarded

    return decorate


def is_mutating(method: object) -> bool:
    """Whether a :class:`Table` method was declared with :func:`mutating`."""
    return getattr(method, "__mutating__", None) is not None


class TableBase:
    """A Paimon table at ``path``. Cheap to create; reads metadata on demand."""

    read_only = False
    """True for system tables and ``$ro``: every :func:`mutating` method raises :class:`ReadOnlyTableError`."""

    def __init__(self, file_io: FileIO, path: str, identifier: str, schema: TableSchema, *,
                 source: TableSource | None = None) -> None:
        self.file_io = file_io
        self.path = path
        self.identifier = identifier
        self.source = source
        """Serves the rows of a system table (:mod:`table_engine.table_source`); such a table is read-only."""
        if source is not None:
            self.read_only = True
        self._set_schema(schema)

    def _guarded_table(self) -> TableBase:
        return self

    def _set_schema(self, schema: TableSchema) -> None:
        self.schema = schema
        self.options = CoreOptions(schema.options)
        self.store = StoreContext(self.file_io, self.path, schema, self.options)

    # ---- properties --------------------------------------------------------------------------------------------
    @property
    def primary_keys(self) -> list[str]:
        return list(self.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.schema.partition_keys)

    @property
    def arrow_schema(self) -> pa.Schema:
        return self.schema.arrow_schema() if self.source is None else self.source.arrow_schema(self._table())

    def refresh(self) -> Self:
        """Reload the latest schema (after another process altered the table)."""
        s = latest_schema(self.file_io, self.path)
        if s is not None and s.id != self.schema.id:
            self._set_schema(s)
        return self

    def _table(self) -> Table:
        """This object as the :class:`~table_engine.table.Table` it is (the surfaces are only its base classes)."""
        return cast("Table", self)

    def __repr__(self) -> str:
        return f"Table({self.identifier!r}, path={self.path!r}, schema_id={self.schema.id})"

    def copy(self, options: Mapping[str, str]) -> Self:
        """This table with per-read (dynamic) options overlaid, e.g. ``{"scan.mode": "from-snapshot",
        "scan.snapshot-id": "3"}`` or ``{"incremental-between": "3,7"}``; nothing is stored."""
        from table_engine.core_options import BRANCH, REGISTRY, CoreOptions, validate_options
        from table_engine.lsm.merge_engines import check_engine_options
        from table_engine.store.changes.starting import validate_scan_options

        self._gate(Op.READ)
        given = {str(k): str(v) for k, v in options.items()}
        branch = given.pop(BRANCH.key, None)
        if branch is not None and self.source is None and branch != self._table().branch:
            return cast(Self, self._table().branch_table(branch).copy(given))  # that branch, its own schema
        merged = {**self.schema.options, **given}
        # the stored options passed the gate (or were accepted by their writer): validate what the engine knows
        validate_options({k: v for k, v in merged.items() if k in given or REGISTRY.is_known(k)})
        check_engine_options(merged)
        validate_scan_options(CoreOptions(merged))
        view = type(self).__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._set_schema(replace(self.schema, options=merged))
        return view

    @mutating(Op.WRITE)
    def alter(self, *changes: SchemaChange) -> TableSchema:
        """Apply schema changes atomically (a new ``schema-N``); retries if another process altered first."""
        for _ in range(20):
            current = latest_schema(self.file_io, self.path)
            if current is None:
                raise SchemaError(f"table {self.identifier} has no schema")
            has_snapshots = latest_snapshot_id(self.file_io, self.path) is not None
            new = apply_changes(current, changes, has_snapshots=has_snapshots)
            new = replace(new, time_millis=int(time.time() * 1000))
            if try_commit_schema(self.file_io, self.path, new):
                self._set_schema(new)
                log.info("table %s: schema %d committed", self.identifier, new.id)
                return new
        raise SchemaError(f"could not commit a schema change to {self.identifier}: concurrent changes")

    # ---- the capability gate ----------------------------------------------------------------------------------
    def _schema_features(self) -> dict[str, str]:
        """Features of the current schema (types, options), computed once per schema."""
        cached = self.__dict__.get("_features_of")
        if cached is None or cached[0] is not self.schema:
            cached = (self.schema, schema_features(self.schema))
            self.__dict__["_features_of"] = cached
        return dict(cached[1])

    def _gate(self, op: Op, snapshot: Snapshot | None = None) -> None:
        """Raise :class:`~table_engine.errors.UnsupportedTableFeatureError` if the table uses a feature the engine
        does not support for ``op``: its schema's types and options (no request); for maintenance also the latest
        snapshot's fields and its index manifest; for a write to a row-tracking table also the latest index manifest
        (global indexes over row ids need row tracking, and may refuse writes it allows); for a read, ``snapshot``'s
        fields. A write checks the snapshot it commits on where its commit reads it anyway
        (:class:`~table_engine.store.committing.commit.FileStoreCommit`, before publishing). System tables read
        metadata only and pass."""
        if self.source is not None:
            return
        found = self._schema_features()
        if op is Op.MAINTAIN or (op is Op.WRITE and self.options.row_tracking_enabled()):
            snapshot, index = self._latest_with_index()
            found.update(index)
        if snapshot is not None:
            found.update(snapshot_features(snapshot))
        require(self.identifier, found, op)

    def _latest_with_index(self) -> tuple[Snapshot | None, dict[str, str]]:
        """The latest snapshot and the features of its index manifest; read again when a concurrent expiry
        removed that snapshot's index manifest while it was read (newer snapshots were published meanwhile)."""
        for attempt in range(_GATE_READ_RETRIES):
            snapshot = latest_snapshot(self.file_io, self.path)
            if snapshot is None or not snapshot.index_manifest:
                return snapshot, {}
            try:
                with naming_snapshot(snapshot.id):
                    return snapshot, index_features(read_index_manifest(
                        self.file_io, f"{manifest_dir(self.path)}/{snapshot.index_manifest}"))
            except FileNotFoundError:
                now = latest_snapshot_id(self.file_io, self.path)
                if now == snapshot.id or attempt == _GATE_READ_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def check_supported(self, op: Op) -> None:
        """The capability gate for an operation of class ``op`` that does not go through a :class:`Table` method
        (e.g. ``consume-changelog``, which plans changes at the store layer): raises
        :class:`~table_engine.errors.UnsupportedTableFeatureError` before anything is read or written."""
        self._gate(op)

    def _gate_files(self, files: Iterable[DataFileMeta], op: Op = Op.READ) -> None:
        """The gate on data files an operation is about to read (their fields and kinds)."""
        if self.source is None:
            require(self.identifier, data_file_features(files), op)

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyTableError(f"table {self.identifier} is a read-only system table: {action} is not allowed")
