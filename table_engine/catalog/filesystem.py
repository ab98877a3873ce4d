"""The filesystem catalog: ``<warehouse>/<db>.db/<table>/``, its databases and tables being the warehouse's
directories (Paimon's ``FileSystemCatalog``). The metastore catalogs
(:class:`~table_engine.catalog.metastore_catalog.MetastoreCatalog`) keep the same files and build on it."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import NoReturn, Self
from urllib.parse import urlparse

import pyarrow as pa

from table_engine.catalog.identifiers import (
    DB_SUFFIX,
    check_name,
    parse_identifier,
    parse_object_identifier,
    refuse_system,
    refuse_system_database,
)
from table_engine.catalog.metastore import ViewDef
from table_engine.catalog.options import (
    CATALOG_KEY,
    DATA_TOKEN_ENABLED,
    DLF_ACCESS_KEY_ID,
    DLF_ACCESS_KEY_SECRET,
    DLF_REGION,
    DLF_SECURITY_TOKEN,
    DLF_SIGNING_ALGORITHM,
    HADOOP_CONF_DIR,
    HEADER_PREFIX,
    HIVE_CONF_DIR,
    JDBC_PASSWORD,
    JDBC_PREFIX,
    JDBC_USER,
    TOKEN,
    TOKEN_PROVIDER,
    URI,
    WAREHOUSE,
    CatalogOptions,
    MetastoreKind,
    redacted,
)
from table_engine.core_enums import DATA_TABLE_TYPES, TableType
from table_engine.core_options import TYPE, CoreOptions, validate_options
from table_engine.errors import (
    DatabaseAlreadyExistError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    OptionError,
    SchemaError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedError,
)
from table_engine.format.schema_file import (
    TableSchema,
    latest_schema,
    new_schema,
    try_commit_schema,
    validate_blob,
    validate_bucket,
    validate_clustering,
    with_blob_fields,
)
from table_engine.format_table import FormatTable
from table_engine.format_table.catalog import format_table_schema
from table_engine.io.file_io import FileIO, file_io_for, normalize_path
from table_engine.io.paths import branch_of, table_root
from table_engine.lsm.merge_engines import validate_merge_engine
from table_engine.object_table.options import validate_object_table
from table_engine.object_table.schema import FIELDS as OBJECT_TABLE_FIELDS
from table_engine.object_table.schema import check_columns
from table_engine.system_tables import system_table
from table_engine.system_tables.global_tables import GLOBAL_SYSTEM_TABLES, SYSTEM_DATABASE, catalog_options_table
from table_engine.table import Table
from table_engine.table.branches import BRANCH_INFIX, branch_identifier
from table_engine.table.reading import read_optimized_view, row_tracking_view
from table_engine.types import fields_from_arrow_schema

log = logging.getLogger(__name__)

#: options that only a metastore catalog reads: refused by the filesystem catalog rather than ignored
_METASTORE_ONLY = (URI, CATALOG_KEY, JDBC_USER, JDBC_PASSWORD, HIVE_CONF_DIR, HADOOP_CONF_DIR, TOKEN_PROVIDER, TOKEN,
                   DLF_REGION, DLF_ACCESS_KEY_ID, DLF_ACCESS_KEY_SECRET, DLF_SECURITY_TOKEN, DLF_SIGNING_ALGORITHM,
                   DATA_TOKEN_ENABLED)


def catalog_warehouse(warehouse: str, options: CatalogOptions) -> str:
    """``warehouse`` normalized (:func:`~table_engine.io.file_io.normalize_path`), as every catalog keeps it; an
    OptionError if the ``warehouse`` option names another place."""
    normalized = normalize_path(warehouse)
    given = options.get(WAREHOUSE)
    if given is not None and normalize_path(given) != normalized:
        raise OptionError(f"catalog option 'warehouse' ({given!r}) names another warehouse than the catalog's "
                          f"({normalized!r})")
    return normalized


class Catalog:
    """Databases and tables in a warehouse: a local path, ``file://``, ``s3://`` (``s3a://``, ``s3n://``) or
    ``hdfs://``. ``options`` are catalog options (docs/catalogs.md), validated: an unknown key is an OptionError.
    This is the filesystem catalog (``metastore`` = ``filesystem``, the default); a ``jdbc`` or ``hive`` catalog is
    opened with :func:`table_engine.catalog.create_catalog`, and this constructor refuses those values rather
    than give a catalog that registers nothing (ADR 0044)."""

    def __init__(self, warehouse: str, options: Mapping[str, str] | None = None,
                 file_io: FileIO | None = None) -> None:
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.catalog_options = CatalogOptions(self.options)
        self.warehouse = catalog_warehouse(warehouse, self.catalog_options)
        self._check_metastore(self.catalog_options.metastore())
        self.file_io = file_io or file_io_for(self.warehouse, self.options)

    def _check_metastore(self, kind: MetastoreKind) -> None:
        """Refuse a ``metastore`` (and the options of one) this class does not implement."""
        if kind is not MetastoreKind.FILESYSTEM:
            raise OptionError(f"catalog option 'metastore' = {kind.value!r}: Catalog(warehouse, options) is the "
                              "filesystem catalog; open a jdbc or hive catalog with "
                              "table_engine.catalog.create_catalog(warehouse, options)")
        raw = self.catalog_options.raw
        stray = sorted({k for o in _METASTORE_ONLY for k in o.keys if k in raw}
                       | {k for k in raw if k.startswith((JDBC_PREFIX, HEADER_PREFIX))})
        if stray:
            raise OptionError(f"catalog options {', '.join(repr(k) for k in stray)} belong to a jdbc, hive or rest "
                              "metastore, but 'metastore' is 'filesystem' (the default)")
        if self.catalog_options.lock_enabled():
            raise OptionError("catalog option 'lock.enabled' = 'true' needs a metastore that has a lock (jdbc or "
                              "hive): the filesystem catalog has none")

    def describe(self) -> str:
        """The catalog, as errors name it."""
        return self.warehouse

    # ---- databases ---------------------------------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        return f"{self.warehouse}/{name}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        return self.file_io.exists(self.database_path(name))

    def create_database(self, name: str, ignore_if_exists: bool = True,
                        properties: Mapping[str, str] | None = None) -> None:
        """Create database ``name``: its directory and, in a metastore, its registration with ``properties``
        (the filesystem catalog keeps none, and refuses them rather than drop them)."""
        check_name("database", name)
        refuse_system_database(name)
        if self.database_exists(name):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(f"database {name!r} exists in {self.describe()}")
        self._create_database(name, dict(properties or {}))

    def _create_database(self, name: str, properties: dict[str, str]) -> None:
        if properties:
            raise UnsupportedError(f"database {name!r}: the filesystem catalog keeps no database properties "
                                   f"({', '.join(sorted(properties))}); they need a metastore (metastore = jdbc or "
                                   "hive)")
        self.file_io.mkdirs(self.database_path(name))

    def list_databases(self) -> list[str]:
        out = []
        for st in self.file_io.list_status(self.warehouse):
            base = st.path.rstrip("/").rsplit("/", 1)[-1]
            if st.is_dir and base.endswith(DB_SUFFIX):
                out.append(base[: -len(DB_SUFFIX)])
        return sorted(out)

    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False) -> None:
        """Drop database ``name``; one that still has tables (or views) only with ``cascade``, which drops them."""
        if not self.database_exists(name):
            if ignore_if_not_exists:
                return
            raise DatabaseNotExistError(f"database {name!r} does not exist in {self.describe()}")
        tables, views = self.list_tables(name), self._views_of(name)
        if (tables or views) and not cascade:
            held = f"tables {tables}" + (f" and views {views}" if views else "")
            raise DatabaseNotEmptyError(f"database {name!r} still has {held}; use cascade=True")
        self._drop_database(name, tables, views)

    def _views_of(self, database: str) -> list[str]:
        """The views :meth:`drop_database` drops with ``database`` (none: this catalog has no views)."""
        return []

    def _drop_database(self, name: str, tables: list[str], views: list[str]) -> None:
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
            raise DatabaseNotExistError(f"database {database!r} does not exist in {self.describe()}")
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
        """Create a table from an Arrow schema; key columns become NOT NULL. Options are validated; the catalog's
        ``table-default.<option>`` entries apply to options the table does not set (Paimon's rule)."""
        db, name = parse_identifier(identifier, creating=True)
        refuse_system(name, identifier, "create_table")
        if not isinstance(schema, pa.Schema):
            raise SchemaError(f"table {identifier}: the schema must be a pyarrow.Schema, not {type(schema).__name__}")
        opts = {**self.catalog_options.table_defaults(), **{str(k): str(v) for k, v in (options or {}).items()}}
        kind = TYPE.value_from(opts)  # Paimon's table types; a value that is none of them: OptionError naming it
        if kind is TableType.FORMAT_TABLE:  # not a data table: create_format_table, in a catalog that holds them
            self._refuse_format_table(identifier, "create_table")
        validate_options(opts)
        core = CoreOptions(opts)
        if kind is TableType.OBJECT_TABLE:
            validate_object_table(opts, primary_keys, partition_keys)
            check_columns(schema)  # none or some of Paimon's columns; the table gets all of them
        elif kind not in DATA_TABLE_TYPES:
            raise UnsupportedError(f"table {identifier}: 'type' = '{kind.value}' is not implemented by this engine "
                                   "(it creates data tables, object tables and, in a Hive catalog, format tables)")
        elif len(schema) == 0:
            raise SchemaError(f"table {identifier}: the schema has no columns")
        if core.row_tracking_enabled() and (primary_keys or core.bucket() != -1):
            # Paimon's SchemaValidation.validateRowTracking
            raise OptionError(f"table {identifier}: 'row-tracking.enabled' = 'true' needs an append table with "
                              f"bucket = -1 (primary keys {list(primary_keys)}, bucket {core.bucket()})")
        if self.table_exists(identifier):
            if ignore_if_exists:
                return self.get_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} exists in {self.describe()}")
        if kind is TableType.OBJECT_TABLE:  # Paimon's exact fields: Arrow cannot declare the nullable map key
            fields, highest = list(OBJECT_TABLE_FIELDS), max(f.id for f in OBJECT_TABLE_FIELDS)
        else:
            fields, highest = fields_from_arrow_schema(schema)
        ts = new_schema(0, with_blob_fields(fields, opts), list(partition_keys), list(primary_keys), opts, comment,
                        highest)
        validate_bucket(ts)
        validate_clustering(ts)
        validate_blob(ts)
        validate_merge_engine(ts, identifier)  # merge-engine options, aggregate functions and their column types
        self._check_registrable(identifier, ts)
        self._check_table_name_free(db, name, identifier)
        self.create_database(db, ignore_if_exists=True)  # only once the table is valid: bad input changes nothing
        path = self.table_path(identifier)
        if not self._commit_new_table(db, name, path, ts):
            if ignore_if_exists:
                return self.get_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} was created concurrently")
        log.info("created table %s at %s", identifier, path)
        return self._open(db, path, identifier, ts)

    # ---- format tables -----------------------------------------------------------------------------------------
    def holds_format_tables(self) -> bool:
        """Whether this catalog can hold format tables (Hive with ``format-table.enabled``, REST); Paimon's
        filesystem and JDBC catalogs cannot."""
        return False

    def _refuse_format_table(self, identifier: str, call: str) -> NoReturn:
        """``call`` with ``type`` = ``format-table``: ``create_table`` of one in a catalog that holds them is pointed
        to ``create_format_table``; any call in a catalog that cannot hold them is refused, as Paimon's filesystem
        and JDBC catalogs (``AbstractCatalog.createFormatTable``: "... currently does not support format table")."""
        if call == "create_table" and self.holds_format_tables():
            raise UnsupportedError(f"table {identifier}: 'type' = 'format-table' is not a Paimon data table: create "
                                   f"it with create_format_table in {self.describe()} (it returns a FormatTable)")
        kind = self.catalog_options.metastore().value
        raise UnsupportedError(f"table {identifier}: 'type' = 'format-table': the {kind} catalog does not support "
                               "format tables (as Paimon's filesystem and JDBC catalogs); create it through a Hive "
                               "catalog, or use table_engine.format_table.FormatTable on the directory")

    def create_format_table(self, identifier: str, schema: pa.Schema, partition_keys: Sequence[str] = (),
                            options: Mapping[str, str] | None = None, comment: str | None = None,
                            ignore_if_exists: bool = False) -> FormatTable:
        """Create a format table (Paimon's ``type`` = ``format-table``: a directory of csv, parquet, orc or json
        files, docs/format-tables.md) in a catalog that holds them (Hive); this one refuses it."""
        self._refuse_format_table(identifier, "create_format_table")

    def _format_table_definition(self, identifier: str, schema: pa.Schema, partition_keys: Sequence[str],
                                 options: Mapping[str, str] | None, comment: str | None
                                 ) -> tuple[str, str, TableSchema]:
        """The database, name and definition of a format table to create, checked (name, columns, options with
        the catalog's table defaults, partition keys) before anything is written or sent."""
        db, name = parse_identifier(identifier, creating=True)
        refuse_system(name, identifier, "create_format_table")
        if not isinstance(schema, pa.Schema) or len(schema) == 0:
            raise SchemaError(f"format table {identifier}: the schema must be a pyarrow.Schema with columns")
        opts = {**self.catalog_options.table_defaults(), **{str(k): str(v) for k, v in (options or {}).items()}}
        return db, name, format_table_schema(schema, partition_keys, opts, comment)

    def get_format_table(self, identifier: str) -> FormatTable:
        """The format table ``identifier`` of a catalog that holds them (Hive); this one holds none."""
        raise TableNotExistError(f"format table {identifier!r} does not exist in {self.describe()}: the "
                                 f"{self.catalog_options.metastore().value} catalog holds no format tables")

    def object_file_io(self, location: str) -> FileIO:
        """The FileIO that lists an object table's ``object-location``: the catalog's own for a location in the
        warehouse's storage, else one for the location's scheme with the catalog's options (an S3 location gets the
        catalog's ``s3.*`` options), as Paimon's ``AbstractCatalog.objectFileIO``."""
        if urlparse(location).scheme == urlparse(self.warehouse).scheme:
            return self.file_io
        return file_io_for(location, self.options)

    def _check_registrable(self, identifier: str, schema: TableSchema) -> None:
        """Refuse a table whose options ask the catalog's metastore for what this engine does not do."""

    def _check_table_name_free(self, db: str, name: str, identifier: str) -> None:
        """Refuse a new table whose name another object of the database has (a metastore's view)."""

    def _commit_new_table(self, db: str, name: str, path: str, ts: TableSchema) -> bool:
        """Commit the first schema of a new table; False if another committer created it first."""
        return try_commit_schema(self.file_io, path, ts)

    def _open(self, db: str, path: str, identifier: str, schema: TableSchema) -> Table:
        """The table object of a main-branch table (a metastore catalog adds its hooks)."""
        return Table(self.file_io, path, identifier, schema)

    def _load_schema(self, db: str, name: str, path: str) -> TableSchema | None:
        """The latest schema of table ``db.name`` at ``path``; None if this catalog has no such table."""
        return latest_schema(self.file_io, path)

    def get_table(self, identifier: str) -> Table:
        """A table; ``db.t$ro`` is the read-optimized view of ``db.t``, ``db.t$row_tracking`` its rows with
        ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (row-tracking tables), ``db.t$snapshots`` etc. its system tables
        (:mod:`table_engine.system_tables`); ``sys.catalog_options`` the catalog's options (secrets hidden)."""
        if parse_identifier(identifier)[0] == SYSTEM_DATABASE:
            return self._global_system_table(identifier)
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
        db, name = parse_identifier(base)
        path = self.table_path(base)
        schema = self._load_schema(db, name, path)
        if schema is None:
            raise TableNotExistError(f"table {base!r} does not exist in {self.describe()}")
        table = self._open(db, path, base, schema)
        return read_optimized_view(table) if system else table

    def _global_system_table(self, identifier: str) -> Table:
        name = parse_identifier(identifier)[1]
        if name not in GLOBAL_SYSTEM_TABLES:
            raise TableNotExistError(f"system table {identifier!r} does not exist; the {SYSTEM_DATABASE} database "
                                     f"has {', '.join(GLOBAL_SYSTEM_TABLES)}")
        return catalog_options_table(self.file_io, self.warehouse, redacted(self.options))

    def drop_table(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        refuse_system(parse_identifier(identifier)[1], identifier, "drop_table")
        if not self.table_exists(identifier):
            if ignore_if_not_exists:
                return
            raise TableNotExistError(f"table {identifier!r} does not exist in {self.describe()}")
        self._drop_table(identifier)

    def _drop_table(self, identifier: str) -> None:
        self.file_io.delete(self.table_path(identifier), recursive=True)

    def rename_table(self, from_identifier: str, to_identifier: str, ignore_if_not_exists: bool = False) -> None:
        """Rename a table (Paimon's ``renameTable``): its directory moves in one step; the new name's database
        must exist. Refused (one UnsupportedError, nothing moved) where a rename is not atomic: on an object store,
        where a failure could leave part of the table under each name."""
        db, name = parse_identifier(from_identifier)
        refuse_system(name, from_identifier, "rename_table")
        to_db, to_name = parse_object_identifier(to_identifier, "new table", creating=True)
        if not self.file_io.has_directories:
            raise UnsupportedError(f"rename_table {from_identifier} -> {to_identifier}: {self.warehouse} is an "
                                   "object store, where a rename is not atomic (copy the table instead)")
        if not self.table_exists(from_identifier):
            if ignore_if_not_exists:
                return
            raise TableNotExistError(f"table {from_identifier!r} does not exist in {self.describe()}")
        if not self.database_exists(to_db):
            raise DatabaseNotExistError(f"database {to_db!r} does not exist in {self.describe()}")
        if self.table_exists(to_identifier) or self.file_io.exists(self.table_path(to_identifier)):
            raise TableAlreadyExistError(f"table {to_identifier!r} exists in {self.describe()}")
        self._check_table_name_free(to_db, to_name, to_identifier)
        self._rename_table(db, name, to_db, to_name)
        log.info("renamed table %s to %s", from_identifier, to_identifier)

    def _rename_table(self, db: str, name: str, to_db: str, to_name: str) -> None:
        try:
            self.file_io.rename(self.table_path(f"{db}.{name}"), self.table_path(f"{to_db}.{to_name}"))
        except FileExistsError:
            raise TableAlreadyExistError(f"table {to_db}.{to_name!r} exists in {self.describe()}") from None

    # ---- views -------------------------------------------------------------------------------------------------
    def _no_views(self, action: str) -> UnsupportedError:
        return UnsupportedError(f"{action}: this catalog does not support views: the filesystem catalog has no "
                                "place for them (Paimon's neither); views need a metastore (metastore = jdbc or "
                                "hive)")

    def create_view(self, identifier: str, schema: pa.Schema, query: str, dialects: Mapping[str, str] | None = None,
                    comment: str | None = None, options: Mapping[str, str] | None = None,
                    ignore_if_exists: bool = False) -> None:
        """Create view ``identifier`` of ``query`` (Paimon's ``createView``): its columns ``schema``, the query in
        other SQL ``dialects`` (dialect -> query), a comment and options."""
        raise self._no_views("create_view")

    def get_view(self, identifier: str) -> ViewDef:
        """View ``identifier`` (:class:`~table_engine.catalog.metastore.ViewDef`); ViewNotExistError if none."""
        raise self._no_views("get_view")

    def list_views(self, database: str) -> list[str]:
        """The views of ``database``, sorted."""
        raise self._no_views("list_views")

    def drop_view(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        """Drop view ``identifier``."""
        raise self._no_views("drop_view")

    def close(self) -> None:
        """Release what the catalog holds (a metastore's connections); the filesystem catalog holds nothing."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        """``with create_catalog(...) as catalog:`` closes the catalog at the end of the block."""
        self.close()


def open_table(path: str, options: Mapping[str, str] | None = None) -> Table:
    """Open a table by its directory (``.../<db>.db/<table>``); ``options`` are catalog options (storage access)."""
    p = normalize_path(path)
    fio = file_io_for(p, CatalogOptions(options).raw)
    schema = latest_schema(fio, p)
    if schema is None:
        raise TableNotExistError(f"no Paimon table at {path} (no schema/schema-N)")
    parts = table_root(p).rstrip("/").rsplit("/", 2)
    ident = f"{parts[-2][: -len(DB_SUFFIX)]}.{parts[-1]}" if len(parts) == 3 and parts[-2].endswith(DB_SUFFIX) \
        else parts[-1]
    return Table(fio, p, branch_identifier(ident, branch_of(p)), schema)
