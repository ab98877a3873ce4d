"""The filesystem catalog: ``<warehouse>/<db>.db/<table>/``."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pyarrow as pa

from table_engine.core_options import CoreOptions, validate_options
from table_engine.errors import (
    BranchError,
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    OptionError,
    ReadOnlyTableError,
    SchemaError,
    TableAlreadyExistError,
    TableNotExistError,
)
from table_engine.format.schema_file import (
    latest_schema,
    new_schema,
    try_commit_schema,
    validate_blob,
    validate_bucket,
    with_blob_fields,
)
from table_engine.io.file_io import FileIO, file_io_for, normalize_path
from table_engine.io.paths import branch_of, table_root
from table_engine.lsm.merge_engines import validate_merge_engine
from table_engine.store.branches import check_branch_name
from table_engine.system_tables import system_table
from table_engine.table import Table
from table_engine.table.branches import BRANCH_INFIX, branch_identifier
from table_engine.table.reading import read_optimized_view, row_tracking_view
from table_engine.types import fields_from_arrow_schema

log = logging.getLogger(__name__)

DB_SUFFIX = ".db"
DEFAULT_DATABASE = "default"


def parse_identifier(identifier: str, *, creating: bool = False) -> tuple[str, str]:
    """``db.table`` -> (db, table); a bare name is in the ``default`` database; ``table`` may end in a system
    table's ``$<name>``. The one rule for every identifier the catalog takes (create, get, drop, exists, system
    tables), a CatalogError naming the identifier otherwise: each name is one directory of its own, spelled one
    way (:func:`check_name`), so ``db./t`` (which a path would read as ``db.t``) is refused everywhere.
    ``creating``: also refuse the names only new tables may not have (spaces around, control characters)."""
    parts = identifier.split(".") if isinstance(identifier, str) else []
    if len(parts) not in (1, 2) or not all(parts):
        raise CatalogError(f"table identifier {identifier!r} must be 'database.table'")
    db, name = (DEFAULT_DATABASE, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    base, dollar, system = name.partition("$")
    if system.startswith(BRANCH_INFIX[1:]):  # t$branch_<name>[$<system table>]
        branch, _, system = system[len(BRANCH_INFIX) - 1:].partition("$")
        try:
            check_branch_name(branch)
        except BranchError as e:
            raise CatalogError(f"table identifier {identifier!r}: {e}") from None
        dollar = "$" if system else ""
    try:
        check_name("database", db, existing=not creating)
        check_name("table", base, existing=not creating)
        if dollar and (not system or system != system.strip() or any(c in system for c in "$/\\")):
            raise CatalogError(f"invalid system table name {system!r}")
    except CatalogError as e:
        raise CatalogError(f"table identifier {identifier!r}: {e}") from None
    return db, name


def check_name(kind: str, name: str, *, existing: bool = False) -> None:
    r"""Reject a database or table name that would not be one directory of its own: empty, ``/`` or ``\``,
    ``$`` (system tables), ``.`` (the identifier separator); and, unless it names an ``existing`` table (made by
    hand or by an older version, which keeps working), leading or trailing spaces and control characters."""
    problem = None
    if not name:
        problem = "is empty"
    elif not existing and name != name.strip():
        problem = "has leading or trailing spaces"
    elif any(c in name for c in "/\\"):
        problem = "contains a path separator"
    elif "$" in name:
        problem = "contains '$' (reserved for system tables such as t$snapshots)"
    elif "." in name:
        problem = "contains '.' (the database.table separator)"
    elif not existing and any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "contains a control character"
    if problem:
        raise CatalogError(f"invalid {kind} name {name!r}: it {problem}")


def _refuse_system(name: str, identifier: str, action: str) -> None:
    if "$" in name:
        raise ReadOnlyTableError(f"table {identifier} is a read-only system table: {action} is not allowed")


class Catalog:
    """Databases and tables in a warehouse: a local path, ``file://``, ``s3://`` (``s3a://``, ``s3n://``) or ``hdfs://``."""

    def __init__(self, warehouse: str, options: Mapping[str, str] | None = None,
                 file_io: FileIO | None = None) -> None:
        self.warehouse = normalize_path(warehouse)
        self.options = dict(options or {})
        self.file_io = file_io or file_io_for(self.warehouse, self.options)

    # ---- databases ---------------------------------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        return f"{self.warehouse}/{name}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        return self.file_io.exists(self.database_path(name))

    def create_database(self, name: str, ignore_if_exists: bool = True) -> None:
        check_name("database", name)
        if self.database_exists(name):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(f"database {name!r} exists in {self.warehouse}")
        self.file_io.mkdirs(self.database_path(name))

    def list_databases(self) -> list[str]:
        out = []
        for st in self.file_io.list_status(self.warehouse):
            base = st.path.rstrip("/").rsplit("/", 1)[-1]
            if st.is_dir and base.endswith(DB_SUFFIX):
                out.append(base[: -len(DB_SUFFIX)])
        return sorted(out)

    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False) -> None:
        if not self.database_exists(name):
            if ignore_if_not_exists:
                return
            raise DatabaseNotExistError(f"database {name!r} does not exist in {self.warehouse}")
        tables = self.list_tables(name)
        if tables and not cascade:
            raise DatabaseNotEmptyError(f"database {name!r} still has tables {tables}; use cascade=True")
        self.file_io.delete(self.database_path(name), recursive=True)

    # ---- tables ------------------------------------------------------------------------------------------------
    def table_path(self, identifier: str) -> str:
        """The directory of ``identifier``'s table (of ``db.t`` for ``db.t$branch_b1`` and system tables)."""
        db, name = parse_identifier(identifier)
        return f"{self.database_path(db)}/{name.partition('$')[0]}"

    def table_exists(self, identifier: str) -> bool:
        return latest_schema(self.file_io, self.table_path(identifier)) is not None

    def list_tables(self, database: str) -> list[str]:
        if not self.database_exists(database):
            raise DatabaseNotExistError(f"database {database!r} does not exist in {self.warehouse}")
        out = []
        for st in self.file_io.list_status(self.database_path(database)):
            if st.is_dir and self.file_io.exists(f"{st.path}/schema"):
                out.append(st.path.rstrip("/").rsplit("/", 1)[-1])
        return sorted(out)

    def create_table(
        self,
        identifier: str,
        schema: pa.Schema,
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        comment: str | None = None,
        ignore_if_exists: bool = False,
    ) -> Table:
        """Create a table from an Arrow schema; key columns become NOT NULL. Options are validated."""
        db, name = parse_identifier(identifier, creating=True)
        _refuse_system(name, identifier, "create_table")
        if not isinstance(schema, pa.Schema):
            raise SchemaError(f"table {identifier}: the schema must be a pyarrow.Schema, not {type(schema).__name__}")
        if len(schema) == 0:
            raise SchemaError(f"table {identifier}: the schema has no columns")
        opts = {str(k): str(v) for k, v in (options or {}).items()}
        validate_options(opts)
        core = CoreOptions(opts)
        if core.row_tracking_enabled() and (primary_keys or core.bucket() != -1):
            # Paimon's SchemaValidation.validateRowTracking
            raise OptionError(f"table {identifier}: 'row-tracking.enabled' = 'true' needs an append table with "
                              f"bucket = -1 (primary keys {list(primary_keys)}, bucket {core.bucket()})")
        if self.table_exists(identifier):
            if ignore_if_exists:
                return self.get_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} exists in {self.warehouse}")
        fields, highest = fields_from_arrow_schema(schema)
        ts = new_schema(0, with_blob_fields(fields, opts), list(partition_keys), list(primary_keys), opts, comment,
                        highest)
        validate_bucket(ts)
        validate_blob(ts)
        validate_merge_engine(ts, identifier)  # merge-engine options, aggregate functions and their column types
        self.create_database(db, ignore_if_exists=True)  # only once the table is valid: bad input changes nothing
        path = self.table_path(identifier)
        if not try_commit_schema(self.file_io, path, ts):
            if ignore_if_exists:
                return self.get_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} was created concurrently")
        log.info("created table %s at %s", identifier, path)
        return Table(self.file_io, path, identifier, ts)

    def get_table(self, identifier: str) -> Table:
        """A table; ``db.t$ro`` is the read-optimized view of ``db.t``, ``db.t$row_tracking`` its rows with
        ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (row-tracking tables), ``db.t$snapshots`` etc. its system tables
        (:mod:`table_engine.system_tables`)."""
        parse_identifier(identifier)
        base, _, system = identifier.partition("$")
        if system.startswith(BRANCH_INFIX[1:]):  # db.t$branch_b1[$system]: that branch as a table
            branch, _, system = system[len(BRANCH_INFIX) - 1:].partition("$")
            table = self.get_table(base).branch_table(branch)
            if system == "row_tracking":
                return row_tracking_view(table)
            if system and system != "ro":
                return system_table(table, system)
            return read_optimized_view(table) if system else table
        if system == "row_tracking":
            return row_tracking_view(self.get_table(base))
        if system and system != "ro":
            return system_table(self.get_table(base), system)
        path = self.table_path(base)
        schema = latest_schema(self.file_io, path)
        if schema is None:
            raise TableNotExistError(f"table {base!r} does not exist in {self.warehouse}")
        table = Table(self.file_io, path, base, schema)
        return read_optimized_view(table) if system else table

    def drop_table(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        _refuse_system(parse_identifier(identifier)[1], identifier, "drop_table")
        if not self.table_exists(identifier):
            if ignore_if_not_exists:
                return
            raise TableNotExistError(f"table {identifier!r} does not exist in {self.warehouse}")
        self.file_io.delete(self.table_path(identifier), recursive=True)


def open_table(path: str, options: Mapping[str, str] | None = None) -> Table:
    """Open a table by its directory (``.../<db>.db/<table>``); ``options`` are catalog options (storage access)."""
    p = normalize_path(path)
    fio = file_io_for(p, options)
    schema = latest_schema(fio, p)
    if schema is None:
        raise TableNotExistError(f"no Paimon table at {path} (no schema/schema-N)")
    parts = table_root(p).rstrip("/").rsplit("/", 2)
    ident = f"{parts[-2][: -len(DB_SUFFIX)]}.{parts[-1]}" if len(parts) == 3 and parts[-2].endswith(DB_SUFFIX) \
        else parts[-1]
    return Table(fio, p, branch_identifier(ident, branch_of(p)), schema)
