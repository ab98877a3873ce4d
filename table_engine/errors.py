"""The one exception tree of the table engine.

Every failure a caller may want to handle is a :class:`TableEngineError`. Messages name the
offending thing (table, file, option, column) so that a log line alone explains the problem.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar


class TableEngineError(Exception):
    """Base class of every error raised by the table engine.

    :attr:`retryable` says whether running the same job again may succeed: False (the default) for bad input (an
    unknown table, option, column, snapshot or tag, a malformed value), which retrying cannot fix; True for
    transient failures (storage, a concurrent commit). :func:`is_retryable` applies it to any exception.
    """

    retryable: ClassVar[bool] = False


class OptionError(TableEngineError, ValueError):
    """An unknown table option, or an option with a value that cannot be parsed or is out of range."""


class SchemaError(TableEngineError, ValueError):
    """An invalid schema definition or schema change (unknown column, bad type, bad key)."""


class SchemaMismatchError(SchemaError):
    """Data handed to a writer does not match the table schema."""


class DataError(TableEngineError, ValueError):
    """Bad row data, e.g. a null primary key or an unknown row kind."""


class CatalogError(TableEngineError):
    """Base of catalog errors."""


class DatabaseNotExistError(CatalogError):
    """The database does not exist."""


class DatabaseAlreadyExistError(CatalogError):
    """The database exists already."""


class DatabaseNotEmptyError(CatalogError):
    """The database still holds tables."""


class TableNotExistError(CatalogError):
    """The table does not exist."""


class TableAlreadyExistError(CatalogError):
    """The table exists already."""


class ViewNotExistError(CatalogError):
    """A view that a catalog does not have."""


class ViewAlreadyExistError(CatalogError):
    """A view (or a table) of that name exists already."""


class CommitError(TableEngineError):
    """A commit could not be completed; nothing of it is visible."""


class CommitConflictError(CommitError):
    """A commit conflicts with a concurrent commit (files it deletes are gone, or retries ran out)."""

    retryable = True


class CorruptMetadataError(TableEngineError):
    """A metadata file (schema, snapshot, manifest, manifest list, index) cannot be read."""


class MissingFileError(CorruptMetadataError, FileNotFoundError):
    """A file the table's metadata references (manifest list, manifest, data, changelog, index or deletion-vector
    file) does not exist. Names the file and, where known, the snapshot that references it. It is also a
    ``FileNotFoundError``, so code that tolerates files that are gone (expiry, orphan cleanup) still can."""

    def __init__(self, kind: str, path: str, snapshot_id: int | None = None, detail: str = "") -> None:
        self.kind = kind
        self.path = path
        self.snapshot_id = snapshot_id
        self.detail = detail
        owner = "the table" if snapshot_id is None else f"snapshot {snapshot_id}"
        super().__init__(f"{owner} references {kind} {path}, which does not exist{detail}")

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (Spark tasks) with its own arguments, not OSError's
        return type(self), (self.kind, self.path, self.snapshot_id, self.detail)

    def in_snapshot(self, snapshot_id: int | None) -> MissingFileError:
        """This error naming ``snapshot_id`` (itself if it names a snapshot already or ``snapshot_id`` is None)."""
        if self.snapshot_id is not None or snapshot_id is None:
            return self
        return MissingFileError(self.kind, self.path, snapshot_id, self.detail)

    def with_detail(self, detail: str) -> MissingFileError:
        """This error with ``detail`` appended to its message (what was being done)."""
        return MissingFileError(self.kind, self.path, self.snapshot_id, self.detail + detail)


@contextlib.contextmanager
def naming_snapshot(snapshot_id: int | None) -> Iterator[None]:
    """A :class:`MissingFileError` raised inside names ``snapshot_id`` (the snapshot being read or maintained)."""
    try:
        yield
    except MissingFileError as e:
        named = e.in_snapshot(snapshot_id)
        if named is e:
            raise
        raise named from e


class StorageError(TableEngineError, OSError):
    """A request to the storage failed after its retries (object store unreachable, 5xx, timeout, access denied).
    The message names the operation and the path, never a credential."""

    retryable = True


class SparkConnectError(StorageError):
    """A Spark Connect server that does not answer at its URL (retryable: it may be starting or restarting)."""


class CommitOutcomeUnknownError(StorageError, CommitError):
    """Publishing a snapshot failed and reading it back failed too: the commit may or may not be in the table. Its
    files are kept (deleting them could break a published snapshot); retrying with the same commit user and
    identifier is safe (exactly once), and remove-orphan-files cleans up after a commit that did not happen."""


class SnapshotNotExistError(TableEngineError):
    """The requested snapshot, tag or time has no snapshot."""


class HistoryRewrittenError(SnapshotNotExistError):
    """A rollback or fast-forward ran while a tag was created: the tag was withdrawn; create it again (its snapshot
    may be gone)."""


class TagError(TableEngineError, ValueError):
    """An invalid tag operation (blank name, tag of an already auto-tagged snapshot, ...)."""


class TagNotExistError(TagError, SnapshotNotExistError):
    """The named tag does not exist."""


class TagAlreadyExistError(TagError):
    """A tag of that name exists already."""


class BranchError(TableEngineError, ValueError):
    """An invalid branch operation (the name ``main``, a blank or purely numeric name, a branch with no snapshot to
    fast-forward to)."""


class BranchNotExistError(BranchError):
    """The named branch does not exist."""


class BranchAlreadyExistError(BranchError):
    """A branch of that name exists already."""


class ConsumerError(TableEngineError, ValueError):
    """An invalid consumer operation (bad id, bad next snapshot, bad pattern)."""


class UnsupportedError(TableEngineError, NotImplementedError):
    """A feature or format that this engine does not support."""


class UnsupportedTableFeatureError(UnsupportedError):
    """The table uses a Paimon feature this engine cannot handle for the operation asked (the capability gate of
    :mod:`table_engine.features`): raised before any file is changed, never retryable. The one-line message names
    the table, the feature by its Paimon name (option key, type, metadata field or file kind) and where it was seen,
    the Paimon version that introduced it, what the engine can still do with the table (``still``: e.g. "read";
    empty: nothing but show its metadata) and the other refusing features (``also``)."""

    def __init__(self, table: str, feature: str, since: str, operation: str, still: str = "", detail: str = "",
                 also: tuple[str, ...] = ()) -> None:
        self.table = table
        self.feature = feature
        self.since = since
        self.operation = operation
        self.still = still
        self.detail = detail
        self.also = tuple(also)
        where = f" ({detail})" if detail else ""
        can = (f"the engine can only {still} this table" if still
               else "the engine can only show this table's metadata (schema, snapshots, options)")
        more = f"; it also uses {', '.join(self.also)}" if self.also else ""
        super().__init__(f"table {table} uses {feature}{where}, a feature of Paimon {since} that this engine does "
                         f"not support for {operation}: {can}{more}")

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (Spark tasks, subprocess results) with its own arguments
        return type(self), (self.table, self.feature, self.since, self.operation, self.still, self.detail, self.also)


class ReadOnlyTableError(UnsupportedError):
    """A write, commit or maintenance call on a read-only table (a system table or ``$ro``)."""


class PartitionSpecError(SchemaError):
    """A partition spec that names a column that is not a partition column, holds a value that does not parse as
    its column's type, or matches no partition where a command needs one."""


class CommandError(TableEngineError, ValueError):
    """A command (``table_engine.ops``) that cannot run as asked: a field out of range, a missing or conflicting
    field, a JSON form that is not a command (reported by the CLI with exit code 1, or 2 while parsing arguments)."""


class CheckError(CommandError):
    """A data-quality check (:mod:`table_engine.ops.checks`) that cannot run as defined: an unknown check or field,
    bad bounds, a column the table does not have or a value its type cannot hold. Found before any data is read."""


def is_retryable(error: BaseException) -> bool:
    """Whether running the same job again may succeed after ``error``: a :class:`TableEngineError`'s
    :attr:`~TableEngineError.retryable`; any other exception (a bug, a failed Spark stage, a lost worker) may be
    transient, so True. The one place that classifies failures (the CLI's result line carries it)."""
    if isinstance(error, TableEngineError):
        return error.retryable
    return True
