"""A catalog whose databases, tables and views are what a :class:`~table_engine.catalog.metastore.Metastore` says
(Paimon's ``AbstractCatalog`` over ``JdbcCatalog`` / ``HiveCatalog``), over the same files as the filesystem
catalog (``<warehouse>/<db>.db/<table>``).

* ``create_database``: the directory, then the registration; ``create_table``: the first schema (under the
  metastore's lock with ``lock.enabled``, as Java), then the registration; if registering fails, the schema just
  written is removed, so nothing is left;
* ``get_table``: registered *and* its schema present; a table registered whose files are missing is one
  TableNotExistError naming it and the catalog;
* ``drop_table``: the registration, then the files; ``rename_table``: the directory, then the registration (moved
  back if the metastore refuses);
* tables opened here carry :class:`~table_engine.table.hooks.TableHooks`: the metastore's lock around each
  snapshot commit (``lock.enabled``), ``alter_table`` after each schema change and, for a table with
  ``metastore.partitioned-table``, ``add_partitions`` after each commit that adds files to partitions not yet
  registered and ``drop_partitions`` after each partition drop or expiry (:class:`PartitionRegistrar`);
* views: the metastore's.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa

from table_engine.catalog.filesystem import Catalog
from table_engine.catalog.identifiers import (
    parse_identifier,
    parse_object_identifier,
)
from table_engine.catalog.metastore import FormatTableMetastore, Metastore, ViewDef
from table_engine.catalog.options import MetastoreKind
from table_engine.core_options import METASTORE_PARTITIONED_TABLE, METASTORE_TAG_TO_PARTITION
from table_engine.errors import (
    DatabaseNotExistError,
    SchemaError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedError,
    ViewAlreadyExistError,
    ViewNotExistError,
)
from table_engine.format.schema_file import TableSchema, latest_schema, schema_dir, schema_path, try_commit_schema
from table_engine.format_table import FormatTable
from table_engine.format_table.catalog import format_table_from_schema
from table_engine.io.file_io import FileIO, normalize_path
from table_engine.table import Table
from table_engine.table.hooks import TableHooks
from table_engine.types import fields_from_arrow_schema

log = logging.getLogger(__name__)


class PartitionRegistrar:
    """The partitions of one table with ``metastore.partitioned-table``, registered in its metastore as commits add
    them and drops remove them (Paimon's ``AddPartitionCommitCallback`` and ``PartitionExpire``'s metastore
    client). The partitions registered through this object are remembered (the last :attr:`REMEMBERED`, as Java's
    cache of 300), so a commit to a known partition costs no metastore call."""

    REMEMBERED = 300

    def __init__(self, metastore: Metastore, db: str, table: str, location: str, schema: TableSchema) -> None:
        self.metastore, self.db, self.table, self.location, self.schema = metastore, db, table, location, schema
        self._known: OrderedDict[tuple[tuple[str, str], ...], None] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(partition: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(partition.items()))

    def added(self, partitions: Sequence[Mapping[str, str]]) -> None:
        """Register the partitions not registered through this object yet (``add_partitions``, if not exists)."""
        with self._lock:
            new = [p for p in partitions if self._key(p) not in self._known]
        if not new:
            return
        self.metastore.add_partitions(self.db, self.table, self.location, self.schema, new)
        with self._lock:
            for p in new:
                self._known[self._key(p)] = None
                self._known.move_to_end(self._key(p))
            while len(self._known) > self.REMEMBERED:
                self._known.popitem(last=False)

    def dropped(self, partitions: Sequence[Mapping[str, str]]) -> None:
        """Unregister partitions (``drop_partitions``; those not registered are skipped)."""
        with self._lock:
            for p in partitions:
                self._known.pop(self._key(p), None)
        self.metastore.drop_partitions(self.db, self.table, partitions)


class MetastoreCatalog(Catalog):
    """The catalog of ``warehouse`` whose registrations ``metastore`` keeps (see the module). Usually made by
    :func:`table_engine.catalog.create_catalog` from the ``metastore`` option."""

    def __init__(self, warehouse: str, options: Mapping[str, str] | None, metastore: Metastore,
                 file_io: FileIO | None = None) -> None:
        self.metastore = metastore
        super().__init__(warehouse, options, file_io)
        self.lock_enabled = self.catalog_options.lock_enabled()

    def _check_metastore(self, kind: MetastoreKind) -> None:
        """Any metastore: the one given decides."""

    def describe(self) -> str:
        return f"the {self.catalog_options.metastore().value} catalog of {self.warehouse}"

    @contextlib.contextmanager
    def _locked(self, db: str, table: str) -> Iterator[None]:
        """The metastore's lock on ``db.table`` with ``lock.enabled``; nothing otherwise."""
        if not self.lock_enabled:
            yield
            return
        with self.metastore.lock(db, table):
            yield

    # ---- databases ---------------------------------------------------------------------------------------------
    def database_exists(self, name: str) -> bool:
        return self.metastore.database_exists(name)

    def _create_database(self, name: str, properties: dict[str, str]) -> None:
        """The directory, then the registration (the directory removed again if the registration fails)."""
        path = self.database_path(name)
        existed = self.file_io.exists(path)
        self.file_io.mkdirs(path)
        try:
            self.metastore.create_database(name, path, properties)
        except BaseException:
            if not existed:
                self.file_io.delete(path, recursive=False)
            raise

    def database_properties(self, name: str) -> dict[str, str]:
        """The properties the metastore keeps for database ``name``."""
        if not self.database_exists(name):
            raise DatabaseNotExistError(f"database {name!r} does not exist in {self.describe()}")
        return self.metastore.database_properties(name)

    def list_databases(self) -> list[str]:
        return sorted(set(self.metastore.list_databases()))

    def _views_of(self, database: str) -> list[str]:
        return self.list_views(database)

    def _drop_database(self, name: str, tables: list[str], views: list[str]) -> None:
        for table in tables:
            self.drop_table(f"{name}.{table}", ignore_if_not_exists=True)
        for view in views:
            self.metastore.drop_view(name, view)
        self.metastore.drop_database(name)
        self.file_io.delete(self.database_path(name), recursive=True)

    # ---- tables ------------------------------------------------------------------------------------------------
    def table_exists(self, identifier: str) -> bool:
        """Whether the metastore has the table registered (its files are checked when it is opened)."""
        db, name = parse_identifier(identifier)
        return self.metastore.table_exists(db, name.partition("$")[0])

    def list_tables(self, database: str) -> list[str]:
        if not self.database_exists(database):
            raise DatabaseNotExistError(f"database {database!r} does not exist in {self.describe()}")
        return sorted(self.metastore.list_tables(database))

    def _check_table_name_free(self, db: str, name: str, identifier: str) -> None:
        if self.metastore.get_view(db, name) is not None:
            raise TableAlreadyExistError(f"{identifier!r} is a view in {self.describe()}")

    def _commit_new_table(self, db: str, name: str, path: str, ts: TableSchema) -> bool:
        with self._locked(db, name):
            if not try_commit_schema(self.file_io, path, ts):
                return False
        try:
            self.metastore.register_table(db, name, path, ts)
        except BaseException:
            self._remove_new_table(path, ts)
            raise
        return True

    def _remove_new_table(self, path: str, ts: TableSchema) -> None:
        """Remove the first schema of a table that could not be registered, and its directories if that leaves
        them empty: nothing of the failed create stays."""
        fio = self.file_io
        fio.delete(schema_path(path, ts.id))
        for directory in (schema_dir(path), path):
            if fio.exists(directory) and not fio.list_status(directory):
                fio.delete(directory, recursive=True)

    def _load_schema(self, db: str, name: str, path: str) -> TableSchema | None:
        if not self.metastore.table_exists(db, name):
            if self._format_table_schema(db, name) is not None:
                raise UnsupportedError(f"table '{db}.{name}' is a format table ('type' = 'format-table') in "
                                       f"{self.describe()}: open it with get_format_table")
            return None
        schema = latest_schema(self.file_io, path)
        if schema is None:
            raise TableNotExistError(f"table '{db}.{name}' is registered in {self.describe()}, but its files are "
                                     f"missing: no schema under {path}")
        return schema

    def _check_registrable(self, identifier: str, schema: TableSchema) -> None:
        tag_field = METASTORE_TAG_TO_PARTITION.value_from(schema.options)
        if tag_field is not None and self.catalog_options.metastore() is MetastoreKind.HIVE:
            raise UnsupportedError(f"table {identifier}: 'metastore.tag-to-partition' = {tag_field!r} (tags "
                                   f"registered as partitions of the Hive table) is not implemented: the tags this "
                                   f"engine creates or expires would not be registered in {self.describe()}")

    def _open(self, db: str, path: str, identifier: str, schema: TableSchema) -> Table:
        self._check_registrable(identifier, schema)
        name = parse_identifier(identifier)[1]
        registrar = PartitionRegistrar(self.metastore, db, name, path, schema) \
            if schema.partition_keys and METASTORE_PARTITIONED_TABLE.value_from(schema.options) else None
        hooks = TableHooks(
            commit_lock=functools.partial(self.metastore.lock, db, name) if self.lock_enabled else None,
            schema_committed=functools.partial(self._schema_committed, db, name, path),
            partitions_added=registrar.added if registrar is not None else None,
            partitions_dropped=registrar.dropped if registrar is not None else None)
        return Table(self.file_io, path, identifier, schema, hooks=hooks)

    # ---- format tables (a metastore that holds them: Hive with format-table.enabled) ---------------------------
    def _format_metastore(self) -> FormatTableMetastore | None:
        return self.metastore if isinstance(self.metastore, FormatTableMetastore) else None

    def _format_table_schema(self, db: str, name: str) -> TableSchema | None:
        fm = self._format_metastore()
        return None if fm is None else fm.format_table_schema(db, name)

    def holds_format_tables(self) -> bool:
        return self._format_metastore() is not None

    def create_format_table(self, identifier: str, schema: pa.Schema, partition_keys: Sequence[str] = (),
                            options: Mapping[str, str] | None = None, comment: str | None = None,
                            ignore_if_exists: bool = False) -> FormatTable:
        """Register a format table at ``<warehouse>/<db>.db/<table>`` (``HiveCatalog.createFormatTable``): its
        definition checked first (options, partition keys, column types), then the directory made and the table
        registered (the directory removed again if the registration fails)."""
        fm = self._format_metastore()
        if fm is None:
            self._refuse_format_table(identifier, "create_format_table")
        db, name, ts = self._format_table_definition(identifier, schema, partition_keys, options, comment)
        if self.metastore.table_exists(db, name) or fm.format_table_schema(db, name) is not None:
            if ignore_if_exists:
                return self.get_format_table(identifier)
            raise TableAlreadyExistError(f"table {identifier!r} exists in {self.describe()}")
        self._check_table_name_free(db, name, identifier)
        self.create_database(db, ignore_if_exists=True)
        path = self.table_path(identifier)
        existed = self.file_io.exists(path)
        self.file_io.mkdirs(path)
        try:
            fm.register_format_table(db, name, path, ts)
        except BaseException:
            if not existed:
                self.file_io.delete(path, recursive=True)
            raise
        log.info("created format table %s at %s", identifier, path)
        return format_table_from_schema(self.file_io, path, ts)

    def get_format_table(self, identifier: str) -> FormatTable:
        """The format table ``identifier`` (``HiveCatalog.getFormatTable``): a format table this catalog created,
        or a plain Hive table of csv, parquet, orc or json files; its files through the FileIO of its location
        (the catalog's storage options)."""
        db, name = parse_identifier(identifier)
        ts = self._format_table_schema(db, name)
        if ts is None:
            if self._format_metastore() is None:
                return super().get_format_table(identifier)  # it says this catalog holds none
            raise TableNotExistError(f"format table {identifier!r} does not exist in {self.describe()}")
        location = normalize_path(ts.options.get("path") or self.table_path(identifier))
        return format_table_from_schema(self.object_file_io(location), location, ts)

    def drop_table(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        """Drop a table; a format table is unregistered and, unless external, its directory deleted (Paimon's
        ``HiveCatalog.dropTableImpl``)."""
        db, name = parse_identifier(identifier)
        fm = self._format_metastore()
        if fm is None or self.metastore.table_exists(db, name) or fm.format_table_schema(db, name) is None:
            super().drop_table(identifier, ignore_if_not_exists)
            return
        location = self.get_format_table(identifier).location
        if not fm.drop_format_table(db, name):
            self.object_file_io(location).delete(location, recursive=True)

    def _schema_committed(self, db: str, name: str, path: str, schema: TableSchema) -> None:
        self.metastore.alter_table(db, name, path, schema)

    def _drop_table(self, identifier: str) -> None:
        db, name = parse_identifier(identifier)
        self.metastore.drop_table(db, name)  # the registration first: a failure leaves the table whole
        super()._drop_table(identifier)

    def _rename_table(self, db: str, name: str, to_db: str, to_name: str) -> None:
        if to_db != db:
            raise UnsupportedError(f"rename_table {db}.{name} -> {to_db}.{to_name}: a metastore catalog renames "
                                   "within one database")
        super()._rename_table(db, name, to_db, to_name)
        new_location = self.table_path(f"{to_db}.{to_name}")
        try:
            self.metastore.rename_table(db, name, to_name, new_location)
        except BaseException:
            self.file_io.rename(new_location, self.table_path(f"{db}.{name}"))  # the files back where registered
            raise

    # ---- views -------------------------------------------------------------------------------------------------
    def create_view(self, identifier: str, schema: pa.Schema, query: str, dialects: Mapping[str, str] | None = None,
                    comment: str | None = None, options: Mapping[str, str] | None = None,
                    ignore_if_exists: bool = False) -> None:
        db, name = parse_object_identifier(identifier, "view", creating=True)
        if not isinstance(schema, pa.Schema) or len(schema) == 0:
            raise SchemaError(f"view {identifier}: the schema must be a pyarrow.Schema with columns")
        if not self.database_exists(db):
            raise DatabaseNotExistError(f"database {db!r} does not exist in {self.describe()}")
        if self.metastore.get_view(db, name) is not None:
            if ignore_if_exists:
                return
            raise ViewAlreadyExistError(f"view {identifier!r} exists in {self.describe()}")
        if self.metastore.table_exists(db, name):
            raise ViewAlreadyExistError(f"{identifier!r} is a table in {self.describe()}")
        fields, _ = fields_from_arrow_schema(schema)
        self.metastore.create_view(ViewDef(db, name, tuple(fields), query, dict(dialects or {}), comment,
                                           {str(k): str(v) for k, v in (options or {}).items()}))

    def get_view(self, identifier: str) -> ViewDef:
        db, name = parse_object_identifier(identifier, "view")
        view = self.metastore.get_view(db, name)
        if view is None:
            raise ViewNotExistError(f"view {identifier!r} does not exist in {self.describe()}")
        return view

    def list_views(self, database: str) -> list[str]:
        if not self.database_exists(database):
            raise DatabaseNotExistError(f"database {database!r} does not exist in {self.describe()}")
        return sorted(self.metastore.list_views(database))

    def drop_view(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        db, name = parse_object_identifier(identifier, "view")
        if self.metastore.get_view(db, name) is None:
            if ignore_if_not_exists:
                return
            raise ViewNotExistError(f"view {identifier!r} does not exist in {self.describe()}")
        self.metastore.drop_view(db, name)

    def close(self) -> None:
        self.metastore.close()
