"""The REST catalog (``metastore`` = ``rest``, Paimon's ``RESTCatalog``): a catalog whose server owns every fact
about its tables (ADR 0045).

Unlike the filesystem, JDBC and Hive catalogs, nothing is derived from the warehouse here:

* databases, tables, views: the server's (``RestApi``), listed page by page;
* ``create_table`` validates the schema as every catalog does, then sends it; the server writes ``schema-0`` (this
  catalog writes no schema file). ``get_table`` opens the table at the server's ``path`` with the server's schema;
* ``drop_table`` / ``rename_table``: the server's (it removes or moves the files of the tables it manages);
* snapshot commits: each snapshot of the main branch is committed through the server's commit endpoint
  (:class:`RestSnapshotCommit`, the table's :attr:`~table_engine.table.hooks.TableHooks.snapshot_commit`); the
  engine still writes the data files and manifests, under the usual commit pin;
* ``data-token.enabled`` (the user's option or the server's): each table's files are read and written with the
  credentials the server vends (:class:`~table_engine.catalog.rest.token_file_io.TokenFileIO`);
* format tables (``type`` = ``format-table``, Paimon's ``RESTCatalog`` holds them): ``create_format_table`` sends the
  definition (no schema file: the server keeps it), ``get_format_table`` builds the table at the server's ``path``
  with the table's FileIO (vended credentials included); ``get_table`` / ``create_table`` of one name these calls;
* object tables (``type`` = ``object-table``) are Paimon 1.3+'s virtual design, as Paimon's ``RESTCatalog`` and
  pypaimon 2.1 hold them (ADR 0048): ``create_table`` sends the definition (no schema file), ``get_table`` returns a
  read-only :class:`~table_engine.object_table.VirtualObjectTable` that lists the table's ``path`` at every read
  through the table's FileIO; writes, refresh, alter and maintenance are refused by name;
* schema changes, rollbacks and branch changes of a table go through the server too (:class:`RestTable`,
  :mod:`table_engine.catalog.rest.table`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pyarrow as pa

from table_engine.catalog.filesystem import Catalog
from table_engine.catalog.identifiers import (
    DB_SUFFIX,
    parse_identifier,
    parse_object_identifier,
    refuse_system,
)
from table_engine.catalog.metastore import ViewDef
from table_engine.catalog.options import DATA_TOKEN_ENABLED, WAREHOUSE, CatalogOptions, MetastoreKind
from table_engine.catalog.rest import messages
from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.table import RestSnapshotCommit, RestTable, schema_of
from table_engine.catalog.rest.token_file_io import TokenFileIO
from table_engine.core_enums import TableType
from table_engine.core_options import TYPE
from table_engine.errors import (
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    OptionError,
    SchemaError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedError,
    ViewAlreadyExistError,
    ViewNotExistError,
)
from table_engine.format.schema_file import TableSchema, new_schema
from table_engine.format_table import FormatTable
from table_engine.format_table.catalog import format_table_from_schema
from table_engine.io.base import FileIO
from table_engine.io.file_io import file_io_for
from table_engine.object_table import VIRTUAL_FIELDS, VirtualObjectTable, check_virtual_columns
from table_engine.object_table.options import OBJECT_LOCATION
from table_engine.object_table.virtual import VIRTUAL_REFUSAL
from table_engine.table import Table
from table_engine.table.hooks import TableHooks
from table_engine.types import DataField, fields_from_arrow_schema

log = logging.getLogger(__name__)


def _type_of(response: messages.Table) -> TableType:
    """The table's ``type`` as the server keeps it (Paimon's values; another: OptionError naming it)."""
    return TYPE.value_from(response.schema.options)


class RestCatalog(Catalog):
    """The REST catalog named ``warehouse`` on the server ``options['uri']`` (see the module). Usually made by
    :func:`table_engine.catalog.create_catalog`. ``file_io``: every table's FileIO (tests); by default each table
    gets the FileIO of its own path, with the vended credentials when ``data-token.enabled``."""

    def __init__(self, warehouse: str, options: Mapping[str, str] | None = None,
                 file_io: FileIO | None = None, api: RestApi | None = None) -> None:
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.catalog_options = CatalogOptions(self.options)
        given = self.catalog_options.get(WAREHOUSE)
        if given is not None and given != warehouse:
            raise OptionError(f"catalog option 'warehouse' ({given!r}) names another catalog than the one asked for "
                              f"({warehouse!r})")
        self.name = warehouse
        self.api = api or RestApi({**self.options, WAREHOUSE.key: warehouse})
        merged = self.api.options
        # the server may answer with the storage location in place of the catalog's name (Paimon's config merge)
        self.warehouse = merged.get(WAREHOUSE.key) or warehouse
        self.data_token_enabled = bool(DATA_TOKEN_ENABLED.value_from(merged))
        self._table_file_io = file_io
        self.file_io = file_io or file_io_for(self.warehouse, self.options)

    def _check_metastore(self, kind: MetastoreKind) -> None:
        """The REST catalog's options were checked by its API client."""

    def describe(self) -> str:
        return f"the REST catalog {self.name!r} at {self.api.uri}"

    def __repr__(self) -> str:
        return f"RestCatalog(name={self.name!r}, uri={self.api.uri!r})"

    # ---- databases ---------------------------------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        try:
            location = self.api.get_database(name).location
        except DatabaseNotExistError:
            location = None
        return location or f"{self.warehouse}/{name}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        try:
            self.api.get_database(name)
        except DatabaseNotExistError:
            return False
        return True

    def _create_database(self, name: str, properties: dict[str, str]) -> None:
        try:
            self.api.create_database(name, properties)
        except DatabaseAlreadyExistError:
            pass  # created concurrently: as create_database(ignore_if_exists=True) before it

    def database_properties(self, name: str) -> dict[str, str]:
        """The options the server keeps for database ``name``."""
        return dict(self.api.get_database(name).options)

    def list_databases(self) -> list[str]:
        return sorted(self.api.list_databases())

    def _views_of(self, database: str) -> list[str]:
        return self.list_views(database)

    def _drop_database(self, name: str, tables: list[str], views: list[str]) -> None:
        for table in tables:
            self.drop_table(f"{name}.{table}", ignore_if_not_exists=True)
        for view in views:
            self.drop_view(f"{name}.{view}", ignore_if_not_exists=True)
        self.api.drop_database(name)

    # ---- tables ------------------------------------------------------------------------------------------------
    def _get(self, db: str, name: str) -> messages.Table | None:
        try:
            return self.api.get_table(messages.Identifier(db, name.partition("$")[0]))
        except (TableNotExistError, DatabaseNotExistError):
            return None

    def table_path(self, identifier: str) -> str:
        """Where the server keeps the table's files (for a table not created yet: where it would by Paimon's
        default layout, for messages only; the server decides)."""
        db, name = parse_identifier(identifier)
        response = self._get(db, name)
        return response.path if response is not None else f"{self.warehouse}/{db}{DB_SUFFIX}/{name.partition('$')[0]}"

    def table_exists(self, identifier: str) -> bool:
        """Whether the server has the table, a format table excepted (it is opened with ``get_format_table``; as
        the Hive catalog's ``table_exists``)."""
        db, name = parse_identifier(identifier)
        response = self._get(db, name)
        return response is not None and _type_of(response) is not TableType.FORMAT_TABLE

    def list_tables(self, database: str) -> list[str]:
        return sorted(self.api.list_tables(database))

    def _check_table_name_free(self, db: str, name: str, identifier: str) -> None:
        if self._get(db, name) is not None:
            raise TableAlreadyExistError(f"table {identifier!r} exists in {self.describe()}")
        try:
            self.api.get_view(messages.Identifier(db, name))
        except (ViewNotExistError, DatabaseNotExistError):
            return
        raise TableAlreadyExistError(f"{identifier!r} is a view in {self.describe()}")

    def _commit_new_table(self, db: str, name: str, path: str, ts: TableSchema) -> bool:
        """Send the new table's schema; the server writes ``schema-0`` where it keeps the table."""
        schema = messages.TableSchema(fields=[f.to_json() for f in ts.fields], partition_keys=list(ts.partition_keys),
                                      primary_keys=list(ts.primary_keys), options=dict(ts.options),
                                      comment=ts.comment)
        try:
            self.api.create_table(messages.Identifier(db, name), schema)
        except TableAlreadyExistError:
            return False
        return True

    def _load_schema(self, db: str, name: str, path: str) -> TableSchema | None:
        response = self._get(db, name)
        if response is None:
            return None
        kind = _type_of(response)
        if kind is TableType.FORMAT_TABLE:
            raise UnsupportedError(f"table '{db}.{name}' is a format table ('type' = 'format-table') in "
                                   f"{self.describe()}: open it with get_format_table")
        return schema_of(response)

    # ---- object tables (Paimon 1.3+'s virtual design: the server keeps the definition, every read lists `path`) --
    def create_table(self, identifier: str, schema: pa.Schema, primary_keys: Sequence[str] = (),
                     partition_keys: Sequence[str] = (), options: Mapping[str, str] | None = None,
                     comment: str | None = None, ignore_if_exists: bool = False) -> Table:
        """As every catalog's ``create_table``; ``type`` = ``object-table`` creates Paimon 1.3+'s virtual object
        table (:meth:`_create_object_table`)."""
        opts = {**self.catalog_options.table_defaults(), **{str(k): str(v) for k, v in (options or {}).items()}}
        if TYPE.value_from(opts) is TableType.OBJECT_TABLE:
            return self._create_object_table(identifier, schema, primary_keys, partition_keys, opts, comment,
                                             ignore_if_exists)
        return super().create_table(identifier, schema, primary_keys, partition_keys, options, comment,
                                    ignore_if_exists)

    def _create_object_table(self, identifier: str, schema: pa.Schema, primary_keys: Sequence[str],
                             partition_keys: Sequence[str], opts: dict[str, str], comment: str | None,
                             ignore_if_exists: bool) -> Table:
        """Create a virtual object table through the server (``RESTCatalog.createTable`` of a ``type`` =
        ``object-table`` schema, as pypaimon 2.1 sends it): declared columns none or some of Paimon 1.3+'s six, no
        keys, no ``object-location`` (the objects are the table's ``path``: the server's directory for the table,
        or the option ``path`` for an external location). The six fields are sent; nothing is written to storage."""
        db, name = parse_identifier(identifier, creating=True)
        refuse_system(name, identifier, "create_table")
        if not isinstance(schema, pa.Schema):
            raise SchemaError(f"table {identifier}: the schema must be a pyarrow.Schema, not {type(schema).__name__}")
        check_virtual_columns(schema, identifier)
        if primary_keys or partition_keys:
            raise SchemaError(f"table {identifier}: an object table has no primary or partition keys (given "
                              f"{list(primary_keys)}, {list(partition_keys)})")
        if OBJECT_LOCATION.key in opts:
            raise OptionError(f"table {identifier}: '{OBJECT_LOCATION.key}' is Paimon 1.0-1.2's object table; "
                              f"{self.describe()}'s object table lists its own location (Paimon 1.3+): leave "
                              "it out, or set 'path' for an external location")
        ts = new_schema(0, VIRTUAL_FIELDS, [], [], opts, comment, max(f.id for f in VIRTUAL_FIELDS))
        if ignore_if_exists and self._get(db, name) is not None:
            return self.get_table(identifier)
        self._check_table_name_free(db, name, identifier)
        self.create_database(db, ignore_if_exists=True)
        if not self._commit_new_table(db, name, "", ts):
            if ignore_if_exists:
                return self.get_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} was created concurrently")
        table = self.get_table(identifier)
        log.info("created object table %s listing %s", identifier, table.path)
        return table

    def get_table(self, identifier: str) -> Table:
        """As every catalog's ``get_table``; an object table is a :class:`VirtualObjectTable`, which has no system
        tables, branches or read-optimized view (no snapshots): ``<object table>$...`` is refused by name."""
        base, dollar, _ = identifier.partition("$")
        if dollar:
            response = self._get(*parse_identifier(base))
            if response is not None and _type_of(response) is TableType.OBJECT_TABLE:
                raise UnsupportedError(f"table {identifier}: no system tables, branches or read-optimized view of "
                                       f"object table {base}: {VIRTUAL_REFUSAL}")
        return super().get_table(identifier)

    # ---- format tables (Paimon's RESTCatalog holds them: the server keeps the definition and the path) ---------
    def holds_format_tables(self) -> bool:
        return True

    def create_format_table(self, identifier: str, schema: pa.Schema, partition_keys: Sequence[str] = (),
                            options: Mapping[str, str] | None = None, comment: str | None = None,
                            ignore_if_exists: bool = False) -> FormatTable:
        """Create a format table through the server (``RESTCatalog.createTable`` of a ``type`` = ``format-table``
        schema): its definition checked first (options, partition keys, column types), then sent; the server keeps
        it and decides the ``path`` (an option ``path`` makes it external). No file is written: the directory
        appears with the first write."""
        db, name, ts = self._format_table_definition(identifier, schema, partition_keys, options, comment)
        if ignore_if_exists and self._get(db, name) is not None:
            return self.get_format_table(identifier)
        self._check_table_name_free(db, name, identifier)
        self.create_database(db, ignore_if_exists=True)
        if not self._commit_new_table(db, name, "", ts):
            if ignore_if_exists:
                return self.get_format_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} was created concurrently")
        table = self.get_format_table(identifier)
        log.info("created format table %s at %s", identifier, table.location)
        return table

    def get_format_table(self, identifier: str) -> FormatTable:
        """The format table ``identifier`` (``RESTCatalog.getTable`` of a ``format-table``): the server's columns,
        partition keys and options, its files at the server's ``path`` through the table's FileIO (the credentials the
        server vends when ``data-token.enabled``)."""
        db, name = parse_identifier(identifier)
        response = self._get(db, name)
        if response is None or _type_of(response) is not TableType.FORMAT_TABLE:
            what = "does not exist" if response is None else "is not a format table"
            raise TableNotExistError(f"format table {identifier!r} {what} in {self.describe()}")
        fio = self._file_io_of(messages.Identifier(db, name), response.path)
        return format_table_from_schema(fio, response.path, schema_of(response))

    def _open(self, db: str, path: str, identifier: str, schema: TableSchema) -> Table:
        """The table at the server's ``path`` with the server's schema (``path`` and ``schema`` as the caller found
        them are only a fallback for the moment after a create)."""
        name = parse_identifier(identifier)[1]
        response = self._get(db, name)
        if response is None:
            raise TableNotExistError(f"table {identifier!r} does not exist in {self.describe()}")
        ident = messages.Identifier(db, name)
        fio = self._file_io_of(ident, response.path)
        if _type_of(response) is TableType.OBJECT_TABLE:
            return VirtualObjectTable(fio, response.path, identifier, schema_of(response))
        hooks = TableHooks(snapshot_commit=RestSnapshotCommit(self.api, ident, response.id, fio, response.path))
        return RestTable(fio, response.path, identifier, schema_of(response), hooks=hooks)

    def _file_io_of(self, ident: messages.Identifier, path: str) -> FileIO:
        if self._table_file_io is not None:
            return self._table_file_io
        if self.data_token_enabled:
            return TokenFileIO(path, self.options, lambda: self.api.load_table_token(ident))
        return file_io_for(path, self.options)

    def drop_table(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        """Drop a table or a format table through the server (``RESTCatalog.dropTable``: the server removes the
        files of a table it manages and keeps an external one's)."""
        db, name = parse_identifier(identifier)
        refuse_system(name, identifier, "drop_table")
        try:
            self.api.drop_table(messages.Identifier(db, name))
        except (TableNotExistError, DatabaseNotExistError):
            if not ignore_if_not_exists:
                raise TableNotExistError(f"table {identifier!r} does not exist in {self.describe()}") from None

    def rename_table(self, from_identifier: str, to_identifier: str, ignore_if_not_exists: bool = False) -> None:
        """Rename a table through the server (which moves the files of a table it manages)."""
        db, name = parse_identifier(from_identifier)
        refuse_system(name, from_identifier, "rename_table")
        to_db, to_name = parse_object_identifier(to_identifier, "new table", creating=True)
        try:
            self.api.rename_table(messages.Identifier(db, name), messages.Identifier(to_db, to_name))
        except TableNotExistError:
            if not ignore_if_not_exists:
                raise
            return
        log.info("renamed table %s to %s in %s", from_identifier, to_identifier, self.describe())

    # ---- views -------------------------------------------------------------------------------------------------
    def create_view(self, identifier: str, schema: pa.Schema, query: str, dialects: Mapping[str, str] | None = None,
                    comment: str | None = None, options: Mapping[str, str] | None = None,
                    ignore_if_exists: bool = False) -> None:
        db, name = parse_object_identifier(identifier, "view", creating=True)
        if not isinstance(schema, pa.Schema) or len(schema) == 0:
            raise SchemaError(f"view {identifier}: the schema must be a pyarrow.Schema with columns")
        if self.table_exists(identifier):
            raise ViewAlreadyExistError(f"{identifier!r} is a table in {self.describe()}")
        fields, _ = fields_from_arrow_schema(schema)
        view = messages.ViewSchema([f.to_json() for f in fields], query, dict(dialects or {}), comment,
                                   {str(k): str(v) for k, v in (options or {}).items()})
        try:
            self.api.create_view(messages.Identifier(db, name), view)
        except ViewAlreadyExistError:
            if not ignore_if_exists:
                raise

    def get_view(self, identifier: str) -> ViewDef:
        db, name = parse_object_identifier(identifier, "view")
        s = self.api.get_view(messages.Identifier(db, name)).schema
        return ViewDef(db, name, tuple(DataField.from_json(f) for f in s.fields), s.query, s.dialects, s.comment,
                       s.options)

    def list_views(self, database: str) -> list[str]:
        return sorted(self.api.list_views(database))

    def drop_view(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        db, name = parse_object_identifier(identifier, "view")
        try:
            self.api.drop_view(messages.Identifier(db, name))
        except ViewNotExistError:
            if not ignore_if_not_exists:
                raise

    def close(self) -> None:
        self.api.close()
