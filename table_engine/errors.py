"""The one exception tree of the table engine.

Every failure a caller may want to handle is a :class:`TableEngineError`. Messages name the
offending thing (table, file, option, column) so that a log line alone explains the problem.
"""

from __future__ import annotations


class TableEngineError(Exception):
    """Base class of every error raised by the table engine."""


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


class CommitError(TableEngineError):
    """A commit could not be completed; nothing of it is visible."""


class CommitConflictError(CommitError):
    """A commit conflicts with a concurrent commit (files it deletes are gone, or retries ran out)."""


class CorruptMetadataError(TableEngineError):
    """A metadata file (schema, snapshot, manifest, manifest list, index) cannot be read."""


class SnapshotNotExistError(TableEngineError):
    """The requested snapshot, tag or time has no snapshot."""


class TagError(TableEngineError, ValueError):
    """An invalid tag operation (blank name, tag of an already auto-tagged snapshot, ...)."""


class TagNotExistError(TagError, SnapshotNotExistError):
    """The named tag does not exist."""


class TagAlreadyExistError(TagError):
    """A tag of that name exists already."""


class ConsumerError(TableEngineError, ValueError):
    """An invalid consumer operation (bad id, bad next snapshot, bad pattern)."""


class UnsupportedError(TableEngineError, NotImplementedError):
    """A feature or format that this engine does not support."""


class ReadOnlyTableError(UnsupportedError):
    """A write, commit or maintenance call on a read-only table (a system table or ``$ro``)."""


class PartitionSpecError(SchemaError):
    """A partition spec that names a column that is not a partition column, holds a value that does not parse as
    its column's type, or matches no partition where a command needs one."""
