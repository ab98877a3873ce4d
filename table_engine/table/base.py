"""The shared state of a :class:`~table_engine.table.Table`: construction, identity, schema and options, schema
evolution, dynamic options, and the read-only guard (:func:`mutating`) every writing method goes through."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Self, TypeVar, cast

import pyarrow as pa

from table_engine.core_options import CoreOptions
from table_engine.errors import ReadOnlyTableError, SchemaError
from table_engine.format.schema_file import TableSchema, latest_schema, read_schema, try_commit_schema
from table_engine.format.snapshot import latest_snapshot_id
from table_engine.io.file_io import FileIO
from table_engine.schema_change import SchemaChange, apply_changes
from table_engine.store.context import StoreContext

if TYPE_CHECKING:
    from table_engine.table import Table
    from table_engine.table_source import TableSource

log = logging.getLogger("table_engine.table")

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T", bound="TableBase")


def mutating(method: Callable[Concatenate[_T, _P], _R]) -> Callable[Concatenate[_T, _P], _R]:
    """Marks a :class:`Table` method that writes to the table (data, metadata, tags, consumers or files): on a
    read-only table (a system table, ``$ro``) it raises :class:`ReadOnlyTableError` before doing anything."""

    @functools.wraps(method)
    def guarded(self: _T, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        self._check_writable(method.__name__)
        return method(self, *args, **kwargs)

    guarded.__mutating__ = True  # type: ignore[attr-defined]
    return guarded


def is_mutating(method: object) -> bool:
    """Whether a :class:`Table` method was declared with :func:`mutating`."""
    return bool(getattr(method, "__mutating__", False))


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

    def _set_schema(self, schema: TableSchema) -> None:
        self.schema = schema
        self.options = CoreOptions(schema.options)
        self._ctx = StoreContext(self.file_io, self.path, schema, self.options)

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
        from table_engine.core_options import CoreOptions, validate_options
        from table_engine.lsm.merge_engines import check_engine_options
        from table_engine.store.changes.starting import validate_scan_options

        merged = {**self.schema.options, **{str(k): str(v) for k, v in options.items()}}
        validate_options(merged)
        check_engine_options(merged)
        validate_scan_options(CoreOptions(merged))
        view = type(self).__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._set_schema(replace(self.schema, options=merged))
        return view

    @mutating
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

    def schema_by_id(self, schema_id: int) -> TableSchema:
        return read_schema(self.file_io, self.path, schema_id)

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyTableError(f"table {self.identifier} is a read-only system table: {action} is not allowed")
