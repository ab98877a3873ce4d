"""The Hive Metastore as a catalog's metastore (``metastore=hive``), compatible with Paimon Java's ``HiveCatalog``.

Registrations only: the table files stay under ``<warehouse>/<db>.db/<table>`` and the catalog writes, moves and
deletes them (every drop here passes ``deleteData=false``). What is registered, and how, is Paimon Java 1.0's
(reference ``catalogs-paimon-java.md`` §2, :mod:`table_engine.catalog.hive.mapping`).
"""

from __future__ import annotations

import contextlib
import getpass
import logging
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from table_engine import clock
from table_engine.catalog.hive import mapping
from table_engine.catalog.hive.client import ClientPool, metastore_errors, resolve_uri
from table_engine.catalog.hive.idl import hms
from table_engine.catalog.metastore import ViewDef
from table_engine.catalog.options import (
    CLIENT_POOL_SIZE,
    FORMAT_TABLE_ENABLED,
    LOCK_ACQUIRE_TIMEOUT,
    LOCK_CHECK_MAX_SLEEP,
    TABLE_TYPE,
    CatalogOptions,
    TableType,
)
from table_engine.errors import (
    CatalogError,
    CommitConflictError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    TableAlreadyExistError,
    TableNotExistError,
)
from table_engine.format.schema_file import TableSchema

log = logging.getLogger(__name__)

FIRST_LOCK_SLEEP_MS = 50
TABLE_BATCH_SIZE = 300  # HiveCatalog's DEFAULT_TABLE_BATCH_SIZE for get_table_objects_by_name
CASCADE = {"CASCADE": "true"}  # StatsSetupConst.CASCADE: Java 1.0 alters with cascade=true


def _now_seconds() -> int:
    return clock.now_millis() // 1000


class HiveMetastore:
    """The registrations of one catalog in a Hive Metastore (:class:`table_engine.catalog.metastore.Metastore`).

    ``options`` are the catalog's (validated here unless already :class:`CatalogOptions`), of which it reads ``uri``
    (or ``hive-conf-dir``), ``client-pool-size``, ``lock-acquire-timeout``, ``lock-check-max-sleep`` and
    ``table.type``; ``warehouse`` is the catalog's, normalized. Nothing connects until the first call."""

    def __init__(self, options: Mapping[str, str] | CatalogOptions, warehouse: str) -> None:
        opts = options if isinstance(options, CatalogOptions) else CatalogOptions(options)
        self.uri = resolve_uri(opts)
        self.warehouse = warehouse
        self.pool = ClientPool(self.uri, opts.get(CLIENT_POOL_SIZE))
        self.lock_acquire_timeout_ms = opts.get(LOCK_ACQUIRE_TIMEOUT)
        self.lock_check_max_sleep_ms = opts.get(LOCK_CHECK_MAX_SLEEP)
        self.external = opts.get(TABLE_TYPE) is TableType.EXTERNAL
        self.format_tables = opts.get(FORMAT_TABLE_ENABLED)

    # ---- plumbing ---------------------------------------------------------------------------------------------
    def _call(self, what: str, method: str, *args: Any, keep: tuple[type[BaseException], ...] = ()) -> Any:
        """``client.<method>(*args)`` on a pooled connection; the metastore's exceptions become one CatalogError
        naming the operation, except those in ``keep``, which the caller handles."""
        with metastore_errors(self.uri, what, keep):
            return self.pool.run(what, lambda c: getattr(c, method)(*args))

    def _get_table(self, db: str, name: str) -> Any | None:
        """The metastore's table ``db.name`` (a Paimon table, another table or a view), None if there is none."""
        try:
            return self._call(f"get table {db}.{name}", "get_table", db, name, keep=(hms().NoSuchObjectException,))
        except hms().NoSuchObjectException:
            return None

    def _paimon_table(self, db: str, name: str) -> Any:
        t = self._get_table(db, name)
        if t is None or not mapping.is_paimon_table(t):
            raise TableNotExistError(f"hive catalog {self.uri}: table {db}.{name} is not registered"
                                     + ("" if t is None else f" as a Paimon table (it is a {t.tableType})"))
        return t

    def _check_lower_case(self, kind: str, name: str) -> None:
        # the metastore lower-cases names; Paimon's HiveCatalog refuses upper case (allow-upper-case false)
        if name != name.lower():
            raise CatalogError(f"hive catalog {self.uri}: {kind} name {name!r} has upper-case letters, which the "
                               f"Hive Metastore does not keep")

    # ---- databases ----------------------------------------------------------------------------------------------
    def list_databases(self) -> list[str]:
        return list(self._call("list databases", "get_all_databases"))

    def _get_database(self, db: str) -> Any:
        try:
            return self._call(f"get database {db}", "get_database", db, keep=(hms().NoSuchObjectException,))
        except hms().NoSuchObjectException:
            raise DatabaseNotExistError(f"hive catalog {self.uri}: database {db} does not exist") from None

    def database_exists(self, db: str) -> bool:
        try:
            self._get_database(db)
        except DatabaseNotExistError:
            return False
        return True

    def create_database(self, db: str, location: str, properties: Mapping[str, str]) -> None:
        self._check_lower_case("database", db)
        try:
            self._call(f"create database {db}", "create_database", mapping.database(db, location, properties),
                       keep=(hms().AlreadyExistsException,))
        except hms().AlreadyExistsException:
            raise DatabaseAlreadyExistError(f"hive catalog {self.uri}: database {db} exists already") from None

    def database_properties(self, db: str) -> dict[str, str]:
        return mapping.database_properties(self._get_database(db))

    def drop_database(self, db: str) -> None:
        # HiveCatalog.dropDatabaseImpl: cascade; the catalog deletes the files. HiveMetaStoreClient.dropDatabase
        # looks the database up first: the server answers a missing one with a NullPointerException
        self._get_database(db)
        try:
            self._call(f"drop database {db}", "drop_database", db, False, True, keep=(hms().NoSuchObjectException,))
        except hms().NoSuchObjectException:
            raise DatabaseNotExistError(f"hive catalog {self.uri}: database {db} does not exist") from None

    # ---- tables -------------------------------------------------------------------------------------------------
    def list_tables(self, db: str) -> list[str]:
        """The Paimon tables of ``db`` and, with ``format-table.enabled``, its format tables
        (``HiveCatalog.listTablesImpl``: Paimon's input and output formats, or a Hive table of a format; views and
        other tables are left out)."""
        self._get_database(db)
        names = list(self._call(f"list tables of {db}", "get_all_tables", db))
        out = []
        for i in range(0, len(names), TABLE_BATCH_SIZE):
            batch = names[i:i + TABLE_BATCH_SIZE]
            tables = self._call(f"list tables of {db}", "get_table_objects_by_name", db, batch)
            out += [t.tableName for t in tables if mapping.is_paimon_table(t)
                    or (self.format_tables and mapping.is_format_table(t))]
        return out

    def table_exists(self, db: str, table: str) -> bool:
        t = self._get_table(db, table)
        return t is not None and mapping.is_paimon_table(t)

    def register_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        self._check_lower_case("table", table)
        existing = self._get_table(db, table)
        if existing is not None:
            kind = "Paimon table" if mapping.is_paimon_table(existing) else existing.tableType
            raise TableAlreadyExistError(f"hive catalog {self.uri}: {db}.{table} exists already (a {kind})")
        t = mapping.table(db, table, location, schema, owner=getpass.getuser(), now=_now_seconds(),
                          external=self.external)
        self._create_table(db, table, t)

    def _create_table(self, db: str, table: str, t: Any) -> None:
        """``create_table`` of the Thrift table ``t``, its "exists" and "no database" answers named."""
        try:
            self._call(f"create table {db}.{table}", "create_table", t,
                       keep=(hms().AlreadyExistsException, hms().NoSuchObjectException))
        except hms().AlreadyExistsException:
            raise TableAlreadyExistError(f"hive catalog {self.uri}: {db}.{table} exists already") from None
        except hms().NoSuchObjectException:
            raise DatabaseNotExistError(f"hive catalog {self.uri}: database {db} does not exist") from None

    # ---- format tables (format-table.enabled) -------------------------------------------------------------------
    def format_table_schema(self, db: str, table: str) -> TableSchema | None:
        """The definition of format table ``db.table`` (:func:`mapping.format_table_schema`); None when there is no
        such table, it is a Paimon table or a view, its format is not one of a format table, or format tables are
        disabled."""
        t = self._get_table(db, table) if self.format_tables else None
        return None if t is None else mapping.format_table_schema(t)

    def register_format_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        """Register a format table (``HiveCatalog.createFormatTable``); refused when ``format-table.enabled`` is
        false (Paimon's "Format table is not enabled for ...")."""
        if not self.format_tables:
            raise CatalogError(f"hive catalog {self.uri}: Format table is not enabled for {db}.{table} (catalog "
                               "option 'format-table.enabled' = 'false')")
        self._check_lower_case("table", table)
        if self._get_table(db, table) is not None:
            raise TableAlreadyExistError(f"hive catalog {self.uri}: {db}.{table} exists already")
        t = mapping.format_table(db, table, location, schema, owner=getpass.getuser(), now=_now_seconds(),
                                 external=self.external)
        self._create_table(db, table, t)

    def drop_format_table(self, db: str, table: str) -> bool:
        """Unregister format table ``db.table`` (the catalog deletes a managed one's directory); whether it was
        external (its files are kept)."""
        t = self._get_table(db, table)
        if t is None or mapping.format_table_schema(t) is None:
            raise TableNotExistError(f"hive catalog {self.uri}: {db}.{table} is not a format table")
        self._call(f"drop table {db}.{table}", "drop_table", db, table, False)
        return bool(t.tableType == mapping.EXTERNAL_TABLE)

    def alter_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        """Columns, partition keys, comment and ``hive.``-prefixed options follow ``schema``
        (``HiveCatalog.alterTableToHms`` of Java 1.0: parameters are added or changed, never removed)."""
        t = self._paimon_table(db, table)
        t.parameters = dict(t.parameters or {})
        t.parameters.update(mapping.table_parameters(schema))
        mapping.update_table(t, t.sd.location if t.sd and t.sd.location else location, schema)
        self._call(f"alter table {db}.{table}", "alter_table_with_environment_context", db, table, t,
                   hms().EnvironmentContext(properties=dict(CASCADE)))

    def drop_table(self, db: str, table: str) -> None:
        self._paimon_table(db, table)
        try:
            self._call(f"drop table {db}.{table}", "drop_table", db, table, False, keep=(hms().NoSuchObjectException,))
        except hms().NoSuchObjectException:
            raise TableNotExistError(f"hive catalog {self.uri}: table {db}.{table} is not registered") from None

    def rename_table(self, db: str, table: str, new_table: str, new_location: str) -> None:
        """The registration under its new name and location (and its partitions' locations under the new one).
        The location changes too, so the metastore moves no files (its ``HiveAlterHandler`` moves a managed table's
        directory only when a rename keeps the location); the catalog moves them."""
        self._check_lower_case("table", new_table)
        t = self._paimon_table(db, table)
        if self._get_table(db, new_table) is not None:
            raise TableAlreadyExistError(f"hive catalog {self.uri}: cannot rename {db}.{table}: {db}.{new_table} "
                                         f"exists already")
        old_location = t.sd.location
        t.tableName = new_table
        t.sd.location = mapping.hive_location(new_location)
        self._call(f"rename table {db}.{table} to {new_table}", "alter_table", db, table, t)
        if t.partitionKeys:
            parts = self._call(f"list partitions of {db}.{new_table}", "get_partitions", db, new_table, -1)
            for p in parts:
                if p.sd is not None and p.sd.location and p.sd.location.startswith(old_location + "/"):
                    p.sd.location = t.sd.location + p.sd.location[len(old_location):]
            if parts:
                self._call(f"move partitions of {db}.{new_table}", "alter_partitions", db, new_table, parts)

    # ---- partitions ---------------------------------------------------------------------------------------------
    def add_partitions(self, db: str, table: str, location: str, schema: TableSchema,
                       partitions: Sequence[Mapping[str, str]]) -> None:
        """Register partitions (``metastore.partitioned-table=true`` only; those registered already are kept):
        ``HiveCatalog.createPartitions``, ``add_partitions(parts, ifNotExists=true, needResult=false)``."""
        if not partitions or not mapping.metastore_partitioned(schema):
            return
        t = self._paimon_table(db, table)
        parts = mapping.partitions(t, partitions, now=_now_seconds())
        request = hms().AddPartitionsRequest(dbName=db, tblName=table, parts=parts, ifNotExists=True,
                                             needResult=False)
        self._call(f"add partitions to {db}.{table}", "add_partitions_req", request)

    def drop_partitions(self, db: str, table: str, partitions: Sequence[Mapping[str, str]]) -> None:
        """Unregister partitions (a table with partition keys in the metastore only; partitions not registered are
        skipped), ``deleteData=false``."""
        if not partitions:
            return
        t = self._paimon_table(db, table)
        keys = [k.name for k in t.partitionKeys or []]
        if not keys:
            return
        for spec in partitions:
            values = [spec[k] for k in keys]
            with contextlib.suppress(hms().NoSuchObjectException):
                self._call(f"drop partition {spec} of {db}.{table}", "drop_partition", db, table, values, False,
                           keep=(hms().NoSuchObjectException,))

    def partition_names(self, db: str, table: str) -> list[str]:
        """The registered partitions of a table, as the metastore names them (``dt=2024-01-01/hr=1``)."""
        return list(self._call(f"list partitions of {db}.{table}", "get_partition_names", db, table, -1))

    # ---- views --------------------------------------------------------------------------------------------------
    def create_view(self, view: ViewDef) -> None:
        self._check_lower_case("view", view.name)
        self._get_database(view.database)
        existing = self._get_table(view.database, view.name)
        if existing is not None:
            kind = "view" if existing.tableType == mapping.VIRTUAL_VIEW else "table"
            raise TableAlreadyExistError(f"hive catalog {self.uri}: {view.database}.{view.name} exists already "
                                         f"(a {kind})")
        self._call(f"create view {view.database}.{view.name}", "create_table", mapping.view(view, now=_now_seconds()))

    def get_view(self, db: str, name: str) -> ViewDef | None:
        t = self._get_table(db, name)
        if t is None or t.tableType != mapping.VIRTUAL_VIEW:
            return None
        return mapping.view_def(t)

    def list_views(self, db: str) -> list[str]:
        self._get_database(db)
        return list(self._call(f"list views of {db}", "get_tables_by_type", db, "*", mapping.VIRTUAL_VIEW))

    def drop_view(self, db: str, name: str) -> None:
        if self.get_view(db, name) is None:
            raise TableNotExistError(f"hive catalog {self.uri}: view {db}.{name} does not exist")
        self._call(f"drop view {db}.{name}", "drop_table", db, name, False)

    # ---- lock ---------------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, db: str, table: str) -> Iterator[None]:
        """The metastore's EXCLUSIVE TABLE lock on ``db.table``, as Paimon's ``HiveCatalogLock``: requested with
        the user and host name, polled with ``check_lock`` while WAITING (sleeps from 50 ms, doubling up to
        ``lock-check-max-sleep``) until ``lock-acquire-timeout``; then the pending request is withdrawn and a
        retryable CommitConflictError names the table. Released when the block ends."""
        lock_id = self._acquire(db, table)
        try:
            yield
        finally:
            self._call(f"unlock {db}.{table}", "unlock", hms().UnlockRequest(lockid=lock_id))

    def _acquire(self, db: str, table: str) -> int:
        h = hms()
        component = h.LockComponent(type=h.LockType.EXCLUSIVE, level=h.LockLevel.TABLE, dbname=db, tablename=table,
                                    operationType=None, isAcid=None, isDynamicPartitionWrite=None)
        request = h.LockRequest(component=[component], user=getpass.getuser(), hostname=socket.gethostname())
        response = self._call(f"lock {db}.{table}", "lock", request)
        sleep_ms = FIRST_LOCK_SLEEP_MS
        started = time.monotonic()
        while response.state == h.LockState.WAITING:
            elapsed_ms = (time.monotonic() - started) * 1000
            if elapsed_ms > self.lock_acquire_timeout_ms:
                self._call(f"withdraw the lock request on {db}.{table}", "unlock",
                           h.UnlockRequest(lockid=response.lockid))
                raise CommitConflictError(
                    f"hive catalog {self.uri}: could not acquire the lock on {db}.{table} within "
                    f"{self.lock_acquire_timeout_ms} ms (lock-acquire-timeout); another writer holds it")
            remaining_ms = self.lock_acquire_timeout_ms - elapsed_ms
            time.sleep(max(0.0, min(sleep_ms, self.lock_check_max_sleep_ms, remaining_ms + 1)) / 1000)
            sleep_ms = min(sleep_ms * 2, self.lock_check_max_sleep_ms)
            response = self._call(f"check the lock on {db}.{table}", "check_lock",
                                  h.CheckLockRequest(lockid=response.lockid))
        if response.state != h.LockState.ACQUIRED:
            state = h.LockState._VALUES_TO_NAMES.get(response.state, response.state)
            raise CommitConflictError(f"hive catalog {self.uri}: the lock on {db}.{table} was not acquired "
                                      f"(state {state})")
        return int(response.lockid)

    def close(self) -> None:
        self.pool.close()
