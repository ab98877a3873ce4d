"""The guards every operation on a table passes before it reads or writes anything: the read-only guard, the
capability gate (:mod:`table_engine.features`), and the refusals of change reads and consumer progress.

A :class:`~table_engine.table.Table` method that changes the table is marked :func:`mutating` with its operation;
an operation that does not go through a ``Table`` method (a command's orchestration, a Spark job) calls the same
guards here: :func:`check_writable`, :func:`check_supported`, :func:`check_change_reads`, :func:`check_consumer`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

from table_engine.core_options import CONSUMER_ID
from table_engine.errors import ReadOnlyTableError, UnsupportedError, UnsupportedTableFeatureError, naming_snapshot
from table_engine.features import Op, feature, require
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.feature_detection import (
    data_file_features,
    index_features,
    schema_features,
    snapshot_features,
)
from table_engine.format.index_manifest import read_index_manifest
from table_engine.format.snapshot import Snapshot, latest_snapshot, latest_snapshot_id
from table_engine.iceberg import IcebergCommitter
from table_engine.io.paths import manifest_dir
from table_engine.store.reading.data_evolution import DATA_EVOLUTION_ENABLED, data_evolution_enabled

if TYPE_CHECKING:
    from table_engine.table import Table

__all__ = ["Guarded", "admitted", "check_change_reads", "check_consumer", "check_files", "check_supported",
           "check_writable", "is_mutating", "mutating"]

_GATE_READ_RETRIES = 10
"""How often the capability gate reads the latest snapshot again when a concurrent expiry removed it under it."""
_P = ParamSpec("_P")
_R = TypeVar("_R")

_gated: contextvars.ContextVar[frozenset[tuple[int, Op]]] = contextvars.ContextVar("gated", default=frozenset())
"""(table object id, operation) pairs whose gate passed in the calls this context is inside (no check twice)."""


class Guarded(Protocol):
    """What :func:`mutating` guards: a table, or a namespace of one (``table.maintenance``)."""

    def _guarded_table(self) -> Table: ...


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
            check_writable(table, method.__name__)
            done = _gated.get()
            if (id(table), op) in done:
                return method(self, *args, **kwargs)
            check_supported(table, op)
            token = _gated.set(done | {(id(table), op)})
            try:
                return method(self, *args, **kwargs)
            finally:
                _gated.reset(token)

        guarded.__mutating__ = op  # type: ignore[attr-defined]
        return guarded

    return decorate


@contextlib.contextmanager
def admitted(table: Table, op: Op) -> Iterator[None]:
    """The capability gate passes ``op`` on this table object inside the block, as if it had been checked: for the
    one caller an operation the gate refuses in general belongs to (an object table refuses writes, Paimon's
    "Object table does not support Write.", but ``refresh_object_table`` overwrites its index). The read-only guard
    still applies."""
    token = _gated.set(_gated.get() | {(id(table), op)})
    try:
        yield
    finally:
        _gated.reset(token)


def is_mutating(method: object) -> bool:
    """Whether a method was declared with :func:`mutating`."""
    return getattr(method, "__mutating__", None) is not None


def check_writable(table: Table, action: str) -> None:
    """A read-only table (a system table, ``$ro``, ``$row_tracking``) refuses ``action``, a change."""
    if table.read_only:
        raise ReadOnlyTableError(table._read_only_message(action))


def check_supported(table: Table, op: Op, snapshot: Snapshot | None = None) -> None:
    """The capability gate: raise :class:`~table_engine.errors.UnsupportedTableFeatureError` if the table uses a
    feature the engine does not support for ``op``, before anything is read or written: its schema's types and
    options; for maintenance also the latest snapshot's fields and its index manifest; for a write to a row-tracking
    table also the latest index manifest (global indexes over row ids need row tracking, and may refuse writes it
    allows); for a read, ``snapshot``'s fields. A write checks the snapshot it commits on where its commit reads it
    anyway (:class:`~table_engine.store.committing.commit.FileStoreCommit`, before publishing). System tables read
    metadata only and pass."""
    if table.source is not None:
        return
    found = _schema_features(table)
    if op is Op.MAINTAIN or (op is Op.WRITE and table.options.row_tracking_enabled()):
        snapshot, index = _latest_with_index(table)
        found.update(index)
    if snapshot is not None:
        found.update(snapshot_features(snapshot))
    require(table.identifier, found, op)
    if op is not Op.READ and table.store.snapshot_published is not None:
        _check_iceberg(table)


def _check_iceberg(table: Table) -> None:
    """A table whose commits write Iceberg metadata: its schema must be expressible in Iceberg (types and
    partition keys Paimon Java maps), or a commit would publish a snapshot its callback then fails on. Once per
    schema object."""
    if table.__dict__.get("_iceberg_checked") is table.schema:
        return
    try:
        IcebergCommitter(table).check()
    except UnsupportedError as e:
        raise UnsupportedError(f"table {table.identifier} writes Iceberg metadata (metadata.iceberg.storage): {e}; "
                               "nothing was written") from None
    table.__dict__["_iceberg_checked"] = table.schema


def check_files(table: Table, files: Iterable[DataFileMeta], op: Op = Op.READ) -> None:
    """The gate on data files an operation is about to read (their fields and kinds)."""
    if table.source is None:
        require(table.identifier, data_file_features(files), op)


def check_change_reads(table: Table, what: str) -> None:
    """Refuse ``what``, a read of the table's changes (snapshot deltas: incremental and streaming reads, changelog
    consumers), on a data-evolution table: it would read column files as new rows (batch reads merge them)."""
    if data_evolution_enabled(table.schema.options):
        raise UnsupportedTableFeatureError(table.identifier, DATA_EVOLUTION_ENABLED, feature(
            DATA_EVOLUTION_ENABLED).since, what, "batch-read", f"option '{DATA_EVOLUTION_ENABLED}' = 'true'")


def check_consumer(table: Table, consumer_id: str | None) -> None:
    """A read-only table records no consumer progress (a consumer file holds snapshots of the data table):
    ``consumer_id`` (default: the table's ``consumer-id`` option) is refused there."""
    cid = consumer_id if consumer_id is not None else table.options.get(CONSUMER_ID)
    if table.read_only and cid is not None:
        raise ReadOnlyTableError(f"table {table.identifier} is a read-only system table: consumer {cid!r} "
                                 f"({CONSUMER_ID.key}) cannot record progress")


def _schema_features(table: Table) -> dict[str, str]:
    """Features of the table's current schema (types, options), computed once per schema object."""
    cached = table.__dict__.get("_features_of")
    if cached is None or cached[0] is not table.schema:
        cached = (table.schema, schema_features(table.schema))
        table.__dict__["_features_of"] = cached
    return dict(cached[1])


def _latest_with_index(table: Table) -> tuple[Snapshot | None, dict[str, str]]:
    """The latest snapshot and the features of its index manifest; read again when a concurrent expiry removed that
    snapshot's index manifest while it was read (newer snapshots were published meanwhile)."""
    for attempt in range(_GATE_READ_RETRIES):
        snapshot = latest_snapshot(table.file_io, table.path)
        if snapshot is None or not snapshot.index_manifest:
            return snapshot, {}
        try:
            with naming_snapshot(snapshot.id):
                return snapshot, index_features(read_index_manifest(
                    table.file_io, f"{manifest_dir(table.path)}/{snapshot.index_manifest}"))
        except FileNotFoundError:
            now = latest_snapshot_id(table.file_io, table.path)
            if now == snapshot.id or attempt == _GATE_READ_RETRIES - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
