"""The JDBC metastore (``metastore=jdbc``): registrations in a SQL database, byte-compatible with Paimon Java's
``JdbcCatalog`` (1.0; reference catalogs-paimon-java.md section 2).

Tables, created at open when missing, with Java's DDL verbatim (``JdbcUtils``): ``paimon_tables`` (one row per table),
``paimon_database_properties`` (``exists``/``true``, ``location`` and the user's properties per database) and, with
``lock.enabled``, ``paimon_distributed_locks``. Every row is scoped by ``catalog-key``. Two tables of newer Paimons
are kept consistent when present and never created at open: ``paimon_table_properties`` (pypaimon 2.1.0 and Paimon
Java since apache/paimon#7423 write each table's options there) and ``paimon_views`` (Paimon Java's views since
apache/paimon#8208, one ``ViewSchema`` JSON per view), which the first :meth:`JdbcMetastore.create_view` creates.

Database layer: SQLAlchemy Core 2 over ``sqlite3``, ``psycopg`` 3 and ``PyMySQL`` (ADR 0044); the statements are
plain SQL (``text()``) so that the stored types and constraints are Java's. The ``jdbc:`` URI is mapped to a
SQLAlchemy URL in one place (:func:`sqlalchemy_url`); the password goes into it as an argument and never into a
message: errors name ``jdbc catalog <uri without password>``.

The lock (Java's ``JdbcCatalogLock``): lock id ``<catalog-key>.<db>.<table>``; acquire = delete the lock row if it
expired, then insert it (a primary-key violation means taken); retried with Java's back-off until
``lock-acquire-timeout``; release = delete. SQLite and MySQL use Java 1.0's expiry conditions; PostgreSQL, which Java
1.0 has no dialect for, uses the condition of apache/paimon's later ``PostgresqlDistributedLockDialect``
(``EXTRACT(EPOCH FROM AGE(NOW(), acquired_at)) > expire_time_seconds``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import parse_qsl, urlsplit

from sqlalchemy import Connection, Engine, create_engine, exc, inspect, text
from sqlalchemy.engine import URL

from table_engine.catalog.metastore import ViewDef
from table_engine.catalog.options import (
    CATALOG_KEY,
    CLIENT_POOL_SIZE,
    JDBC_PREFIX,
    LOCK_ACQUIRE_TIMEOUT,
    LOCK_CHECK_MAX_SLEEP,
    LOCK_KEY_MAX_LENGTH,
    URI,
    CatalogOptions,
)
from table_engine.errors import (
    CatalogError,
    CommitConflictError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    OptionError,
    TableAlreadyExistError,
)
from table_engine.format.schema_file import TableSchema
from table_engine.options import format_duration
from table_engine.types import DataField

log = logging.getLogger(__name__)

TABLES = "paimon_tables"
DATABASE_PROPERTIES = "paimon_database_properties"
TABLE_PROPERTIES = "paimon_table_properties"
VIEWS = "paimon_views"
LOCKS = "paimon_distributed_locks"

# Java's DDL, verbatim (JdbcUtils of Paimon 1.0; paimon_views: JdbcUtils.CREATE_VIEW_TABLE of apache/paimon#8208)
CREATE_TABLES = ("CREATE TABLE paimon_tables(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
                 "table_name VARCHAR(255) NOT NULL, PRIMARY KEY (catalog_key, database_name, table_name))")
CREATE_DATABASE_PROPERTIES = (
    "CREATE TABLE paimon_database_properties(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
    "property_key VARCHAR(255),property_value VARCHAR(1000),PRIMARY KEY (catalog_key, database_name, property_key))")
CREATE_LOCKS = ("CREATE TABLE paimon_distributed_locks(lock_id VARCHAR({length}) NOT NULL,"
                "acquired_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,"
                "expire_time_seconds BIGINT DEFAULT 0 NOT NULL,PRIMARY KEY (lock_id))")
CREATE_VIEWS = ("CREATE TABLE paimon_views(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
                "view_name VARCHAR(255) NOT NULL,view_schema TEXT NOT NULL,"
                " PRIMARY KEY (catalog_key, database_name, view_name))")

# when a lock row has expired, per dialect (the statement's other half is Java's: "... and lock_id = ?")
EXPIRED = {
    "sqlite": "strftime('%s', 'now') - strftime('%s', acquired_at) > expire_time_seconds",
    "mysql": "TIMESTAMPDIFF(SECOND, acquired_at, NOW()) > expire_time_seconds",
    "postgresql": "EXTRACT(EPOCH FROM AGE(NOW(), acquired_at)) > expire_time_seconds",
}
SQLALCHEMY_DRIVERS = {"sqlite": "sqlite", "postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql"}
DRIVER_PACKAGES = {"postgresql": "psycopg[binary]", "mysql": "PyMySQL"}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}


def _seconds(text_value: str) -> int:
    return int(text_value)


def _millis_to_seconds(text_value: str) -> int:
    return math.ceil(int(text_value) / 1000)


#: the driver properties each dialect maps (the JDBC driver's name -> the Python driver's argument and conversion);
#: the Python drivers' own names are accepted too, so a pypaimon catalog definition copies over
DRIVER_PROPERTIES: dict[str, dict[str, tuple[str, Callable[[str], Any]]]] = {
    "postgresql": {
        "connectTimeout": ("connect_timeout", _seconds), "connect_timeout": ("connect_timeout", _seconds),
        "ApplicationName": ("application_name", str), "application_name": ("application_name", str),
        **{name: (name, str) for name in ("sslmode", "sslrootcert", "sslcert", "sslkey", "options")},
    },
    "mysql": {
        "connectTimeout": ("connect_timeout", _millis_to_seconds), "connect_timeout": ("connect_timeout", int),
        "socketTimeout": ("read_timeout", _millis_to_seconds), "read_timeout": ("read_timeout", int),
        "write_timeout": ("write_timeout", int), "charset": ("charset", str),
    },
    "sqlite": {"busy_timeout": ("timeout", lambda v: int(v) / 1000)},
}
#: a connection attempt gives up after this many seconds unless the options say otherwise (pgjdbc's default)
DEFAULT_CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class JdbcTarget:
    """What a ``jdbc:`` URI and the ``jdbc.*`` options name: the dialect, the SQLAlchemy URL (with the password),
    the driver's connect arguments, the URI as errors show it, and the SQLite file (None for a server)."""

    dialect: str
    url: URL
    connect_args: dict[str, Any]
    shown: str
    sqlite_file: str | None = None


def _refuse(key: str, problem: str) -> NoReturn:
    raise OptionError(f"jdbc catalog option '{key}': {problem}")


def sqlalchemy_url(uri: str, properties: Mapping[str, str]) -> JdbcTarget:
    """Map a ``jdbc:sqlite:<path>``, ``jdbc:postgresql://host[:port]/db`` or ``jdbc:mysql://host[:port]/db`` URI
    and the driver properties (``jdbc.*`` options without the prefix, then the URI's query, as the JDBC drivers take
    them) to a SQLAlchemy URL (``sqlite:///``, ``postgresql+psycopg://``, ``mysql+pymysql://``). ``user`` and
    ``password`` become the URL's; the other properties the driver's connect arguments (:data:`DRIVER_PROPERTIES`);
    one the driver cannot take is refused, naming the option (never its value)."""
    protocol, sep, rest = uri.partition(":")[2].partition(":") if uri.startswith("jdbc:") else ("", "", "")
    if not sep or protocol not in SQLALCHEMY_DRIVERS:
        shown = re.sub(r"//[^/@]*@", "//", uri.split("?", 1)[0])  # no query, no user info: no password
        _refuse("uri", f"{shown!r} is not a JDBC URL this catalog speaks "
                       "(jdbc:sqlite:<file>, jdbc:postgresql://<host>[:<port>]/<db>, jdbc:mysql://<host>[:<port>]/<db>)")
    if protocol == "sqlite":
        return _sqlite_target(uri, rest, properties)
    parts = urlsplit(rest if rest.startswith("//") else "//localhost/" + rest)
    props = dict(properties)
    props.update(parse_qsl(parts.query, keep_blank_values=True))
    user = props.pop("user", None) or parts.username
    password = props.pop("password", None) or parts.password
    host = parts.hostname or "localhost"
    try:
        port = parts.port or DEFAULT_PORTS[protocol]
    except ValueError:
        _refuse("uri", "the port is not a number")
    if "," in parts.netloc:
        _refuse("uri", "several hosts are not supported")
    database = parts.path.lstrip("/")
    connect_args = _connect_args(protocol, props)
    connect_args.setdefault("connect_timeout", DEFAULT_CONNECT_TIMEOUT_S)
    url = URL.create(SQLALCHEMY_DRIVERS[protocol], username=user, password=password, host=host, port=port,
                     database=database or None)
    return JdbcTarget(protocol, url, connect_args, f"jdbc:{protocol}://{host}:{port}/{database}")


def _sqlite_target(uri: str, path: str, properties: Mapping[str, str]) -> JdbcTarget:
    path, _, query = path.partition("?")
    props = dict(properties)
    props.update(parse_qsl(query, keep_blank_values=True))
    props.pop("user", None)
    props.pop("password", None)
    if path.startswith("file:"):
        path = path[len("file:"):]
    if not path or path.startswith(":memory:") or "mode=memory" in query:
        _refuse("uri", "an in-memory SQLite database is not a catalog (it vanishes with its connection)")
    connect_args = _connect_args("sqlite", props)
    return JdbcTarget("sqlite", URL.create("sqlite", database=path), connect_args, f"jdbc:sqlite:{path}",
                      sqlite_file=path)


def _connect_args(dialect: str, props: Mapping[str, str]) -> dict[str, Any]:
    known = DRIVER_PROPERTIES[dialect]
    out: dict[str, Any] = {}
    for name, value in props.items():
        if name not in known:
            _refuse(JDBC_PREFIX + name, f"the {dialect} driver takes no such property here "
                                        f"(supported: user, password, {', '.join(sorted(known))})")
        argument, convert = known[name]
        try:
            out[argument] = convert(value)
        except ValueError:
            _refuse(JDBC_PREFIX + name, "expected a whole number")
    return out


@dataclass(frozen=True)
class JdbcOptions:
    """The catalog options the JDBC metastore reads, typed by the catalog options registry
    (:mod:`table_engine.catalog.options`: Paimon's names and defaults)."""

    uri: str
    properties: Mapping[str, str] = field(repr=False)  # jdbc.* without the prefix: holds the password
    catalog_key: str
    lock_enabled: bool
    acquire_timeout_ms: int
    check_max_sleep_ms: int
    pool_size: int
    lock_key_max_length: int

    @staticmethod
    def of(options: CatalogOptions) -> JdbcOptions:
        uri = options.get(URI)
        if not uri:
            raise OptionError("the jdbc catalog needs the option 'uri' (a jdbc:sqlite:, jdbc:postgresql: or "
                              "jdbc:mysql: URL)")
        return JdbcOptions(
            uri=uri,
            properties=options.with_prefix(JDBC_PREFIX),
            catalog_key=options.get(CATALOG_KEY),
            lock_enabled=options.lock_enabled(),
            acquire_timeout_ms=options.get(LOCK_ACQUIRE_TIMEOUT),
            check_max_sleep_ms=options.get(LOCK_CHECK_MAX_SLEEP),
            pool_size=options.get(CLIENT_POOL_SIZE),
            lock_key_max_length=options.get(LOCK_KEY_MAX_LENGTH),
        )


def view_schema_json(view: ViewDef) -> str:
    """The view as Paimon Java stores it in ``paimon_views.view_schema`` (``ViewSchema``: fields, query, dialects,
    comment when set, options)."""
    data: dict[str, Any] = {"fields": [f.to_json() for f in view.fields], "query": view.query,
                            "dialects": dict(view.dialects)}
    if view.comment is not None:
        data["comment"] = view.comment
    data["options"] = dict(view.options)
    return json.dumps(data, indent=2, ensure_ascii=False)


def table_properties(schema: TableSchema) -> dict[str, str]:
    """A table's rows in ``paimon_table_properties``, as pypaimon 2.1.0 writes them: its options, plus
    ``primary-key`` and ``partition`` (comma-separated) when it has them."""
    out = dict(schema.options)
    if schema.primary_keys:
        out["primary-key"] = ",".join(schema.primary_keys)
    if schema.partition_keys:
        out["partition"] = ",".join(schema.partition_keys)
    return out


class JdbcMetastore:
    """The registrations of one catalog (``catalog-key``) in a JDBC database (:class:`Metastore`)."""

    def __init__(self, options: Mapping[str, str] | CatalogOptions, warehouse: str) -> None:
        """``options``: the catalog's (validated here unless already :class:`CatalogOptions`); ``warehouse``: the
        catalog's warehouse, normalized. Connects (and creates Java's tables where missing) before it returns."""
        self.options = JdbcOptions.of(options if isinstance(options, CatalogOptions) else CatalogOptions(options))
        self.warehouse = warehouse
        self.target = sqlalchemy_url(self.options.uri, self.options.properties)
        self.key = self.options.catalog_key
        self._password = self.target.url.password
        self._present: set[str] = set()  # tables seen to exist (they are never dropped)
        created = self.target.sqlite_file is not None and not _nonempty_file(self.target.sqlite_file)
        self.engine = self._create_engine()
        try:
            self._open(wal=created)
        except BaseException:
            self.engine.dispose()
            raise
        log.info("jdbc catalog %s opened (catalog-key %s, lock %s)", self.target.shown, self.key,
                 "enabled" if self.options.lock_enabled else "disabled")

    def __repr__(self) -> str:
        return f"JdbcMetastore({self.target.shown!r}, catalog_key={self.key!r})"

    # ---- connections and errors --------------------------------------------------------------------------------
    def _create_engine(self) -> Engine:
        kwargs: dict[str, Any] = {"pool_size": self.options.pool_size, "max_overflow": 0, "hide_parameters": True,
                                  "connect_args": self.target.connect_args}
        if self.target.dialect != "sqlite":
            kwargs["pool_pre_ping"] = True
        try:
            return create_engine(self.target.url, **kwargs)
        except ImportError as e:
            package = DRIVER_PACKAGES.get(self.target.dialect, str(e.name))
            raise CatalogError(f"jdbc catalog {self.target.shown}: its driver is not installed "
                               f"({e.name} missing; install {package})") from None

    def _problem(self, error: BaseException) -> str:
        """The driver's message on one line, with the password blanked (should a driver ever echo it)."""
        cause = getattr(error, "orig", None) or error
        message = " ".join(line.strip() for line in str(cause).splitlines() if line.strip()) or type(cause).__name__
        if self._password:
            message = message.replace(self._password, "***")
        return message

    @contextlib.contextmanager
    def _failing_as(self, what: str, conflict: Exception | None = None) -> Iterator[None]:
        """A database error inside is one CatalogError naming the catalog, what was done and the driver's message;
        a constraint violation is ``conflict`` where given (a row that exists already)."""
        try:
            yield
        except exc.IntegrityError as e:
            if conflict is None:
                raise CatalogError(f"jdbc catalog {self.target.shown}: {what} failed: {self._problem(e)}") from None
            raise conflict from None
        except exc.SQLAlchemyError as e:
            raise CatalogError(f"jdbc catalog {self.target.shown}: {what} failed: {self._problem(e)}") from None

    @contextlib.contextmanager
    def _tx(self, what: str, conflict: Exception | None = None) -> Iterator[Connection]:
        """One short transaction (committed at the end, rolled back on an error)."""
        with self._failing_as(what, conflict), self.engine.begin() as conn:
            yield conn

    def _rows(self, what: str, sql: str, **params: Any) -> list[Any]:
        with self._failing_as(what), self.engine.connect() as conn:
            return list(conn.execute(text(sql), params).all())

    # ---- opening -----------------------------------------------------------------------------------------------
    def _open(self, *, wal: bool) -> None:
        if wal:  # a catalog file we create: WAL, so that a reader (Java's open ResultSet) does not block writers
            with self._failing_as("opening"), self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        wanted = [(TABLES, CREATE_TABLES), (DATABASE_PROPERTIES, CREATE_DATABASE_PROPERTIES)]
        if self.options.lock_enabled:
            wanted.append((LOCKS, CREATE_LOCKS.format(length=self.options.lock_key_max_length)))
        for name, ddl in wanted:
            self._ensure_table(name, ddl)
        for name in (TABLE_PROPERTIES, VIEWS):
            self._has(name)

    def _ensure_table(self, name: str, ddl: str) -> None:
        if self._has(name):
            return
        try:
            with self._tx(f"creating {name}") as conn:
                conn.execute(text(ddl))
        except CatalogError:
            self._present.discard(name)
            if not self._has(name):  # not made by a concurrent opener either
                raise
        self._present.add(name)

    def _has(self, name: str) -> bool:
        if name not in self._present:
            with self._failing_as("opening"), self.engine.connect() as conn:
                if inspect(conn).has_table(name):
                    self._present.add(name)
        return name in self._present

    # ---- databases ---------------------------------------------------------------------------------------------
    def _database_sources(self) -> list[str]:
        return [TABLES, DATABASE_PROPERTIES] + ([VIEWS] if self._has(VIEWS) else [])

    def list_databases(self) -> list[str]:
        union = " UNION ".join(f"SELECT database_name FROM {t} WHERE catalog_key = :key"
                               for t in self._database_sources())
        return sorted({r[0] for r in self._rows("listing databases", union, key=self.key)})

    def database_exists(self, db: str) -> bool:
        return any(self._rows(f"looking up database {db}",
                              f"SELECT database_name FROM {t} WHERE catalog_key = :key AND database_name = :db",
                              key=self.key, db=db)
                   for t in self._database_sources())

    def create_database(self, db: str, location: str, properties: Mapping[str, str]) -> None:
        rows = {"exists": "true", **properties}
        rows.setdefault("location", location)
        exists = DatabaseAlreadyExistError(f"database {db!r} exists in jdbc catalog {self.target.shown}")
        with self._tx(f"creating database {db}", exists) as conn:
            self._insert_properties(conn, DATABASE_PROPERTIES, {"db": db}, rows)

    def _insert_properties(self, conn: Connection, table: str, where: Mapping[str, str],
                           rows: Mapping[str, str]) -> None:
        names = {"db": "database_name", "table": "table_name"}
        columns = ", ".join(names[k] for k in where)
        values = ", ".join(f":{k}" for k in where)
        if rows:
            conn.execute(text(f"INSERT INTO {table} (catalog_key, {columns}, property_key, property_value) "
                              f"VALUES (:key, {values}, :k, :v)"),
                         [{"key": self.key, **where, "k": k, "v": v} for k, v in rows.items()])

    def database_properties(self, db: str) -> dict[str, str]:
        if not self.database_exists(db):
            raise DatabaseNotExistError(f"database {db!r} does not exist in jdbc catalog {self.target.shown}")
        rows = self._rows(f"reading database {db}", "SELECT property_key, property_value FROM "
                          "paimon_database_properties WHERE catalog_key = :key AND database_name = :db",
                          key=self.key, db=db)
        return {k: v for k, v in rows if k != "exists"}

    def drop_database(self, db: str) -> None:
        with self._tx(f"dropping database {db}") as conn:
            for table in (TABLES, DATABASE_PROPERTIES, TABLE_PROPERTIES, VIEWS):
                if self._has(table):
                    conn.execute(text(f"DELETE FROM {table} WHERE catalog_key = :key AND database_name = :db"),
                                 {"key": self.key, "db": db})

    # ---- tables ------------------------------------------------------------------------------------------------
    def list_tables(self, db: str) -> list[str]:
        rows = self._rows(f"listing the tables of {db}", "SELECT table_name FROM paimon_tables "
                          "WHERE catalog_key = :key AND database_name = :db", key=self.key, db=db)
        return sorted(r[0] for r in rows)

    def table_exists(self, db: str, table: str) -> bool:
        return bool(self._rows(f"looking up table {db}.{table}", "SELECT table_name FROM paimon_tables WHERE "
                               "catalog_key = :key AND database_name = :db AND table_name = :t",
                               key=self.key, db=db, t=table))

    def _view_exists(self, db: str, name: str) -> bool:
        return self._has(VIEWS) and bool(self._rows(
            f"looking up view {db}.{name}", "SELECT view_name FROM paimon_views WHERE catalog_key = :key AND "
            "database_name = :db AND view_name = :v", key=self.key, db=db, v=name))

    def register_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        if self._view_exists(db, table):
            raise TableAlreadyExistError(f"{db}.{table} is a view in jdbc catalog {self.target.shown}")
        exists = TableAlreadyExistError(f"table {db}.{table} exists in jdbc catalog {self.target.shown}")
        with self._tx(f"registering table {db}.{table}", exists) as conn:
            conn.execute(text("INSERT INTO paimon_tables (catalog_key, database_name, table_name) "
                              "VALUES (:key, :db, :t)"), {"key": self.key, "db": db, "t": table})
            if self._has(TABLE_PROPERTIES):
                self._delete_table_properties(conn, db, table)  # left behind by a tool that did not delete them
                self._insert_properties(conn, TABLE_PROPERTIES, {"db": db, "table": table}, table_properties(schema))

    def alter_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        """Java stores no schema: nothing to do, but for pypaimon's ``paimon_table_properties`` when present."""
        if self._has(TABLE_PROPERTIES):
            with self._tx(f"altering table {db}.{table}") as conn:
                self._delete_table_properties(conn, db, table)
                self._insert_properties(conn, TABLE_PROPERTIES, {"db": db, "table": table}, table_properties(schema))

    def _delete_table_properties(self, conn: Connection, db: str, table: str) -> None:
        conn.execute(text("DELETE FROM paimon_table_properties WHERE catalog_key = :key AND database_name = :db "
                          "AND table_name = :t"), {"key": self.key, "db": db, "t": table})

    def drop_table(self, db: str, table: str) -> None:
        with self._tx(f"dropping table {db}.{table}") as conn:
            conn.execute(text("DELETE FROM paimon_tables WHERE catalog_key = :key AND database_name = :db "
                              "AND table_name = :t"), {"key": self.key, "db": db, "t": table})
            if self._has(TABLE_PROPERTIES):
                self._delete_table_properties(conn, db, table)

    def rename_table(self, db: str, table: str, new_table: str, new_location: str) -> None:
        params = {"key": self.key, "db": db, "t": table, "new_db": db, "new_t": new_table}
        exists = TableAlreadyExistError(f"table {db}.{new_table} exists in jdbc catalog {self.target.shown}")
        with self._tx(f"renaming table {db}.{table} to {db}.{new_table}", exists) as conn:
            for name in (TABLES,) + ((TABLE_PROPERTIES,) if self._has(TABLE_PROPERTIES) else ()):
                conn.execute(text(f"UPDATE {name} SET database_name = :new_db, table_name = :new_t "
                                  "WHERE catalog_key = :key AND database_name = :db AND table_name = :t"), params)

    # ---- partitions: Java's JdbcCatalog registers none ---------------------------------------------------------
    def add_partitions(self, db: str, table: str, location: str, schema: TableSchema,
                       partitions: Sequence[Mapping[str, str]]) -> None:
        """Nothing: the JDBC catalog keeps no partitions."""

    def drop_partitions(self, db: str, table: str, partitions: Sequence[Mapping[str, str]]) -> None:
        """Nothing: the JDBC catalog keeps no partitions."""

    # ---- views (paimon_views, as Paimon Java's JdbcCatalog since apache/paimon#8208) -----------------------------
    def create_view(self, view: ViewDef) -> None:
        self._ensure_table(VIEWS, CREATE_VIEWS)
        name = f"{view.database}.{view.name}"
        if self.table_exists(view.database, view.name):
            raise TableAlreadyExistError(f"{name} is a table in jdbc catalog {self.target.shown}")
        exists = TableAlreadyExistError(f"view {name} exists in jdbc catalog {self.target.shown}")
        with self._tx(f"creating view {name}", exists) as conn:
            conn.execute(text("INSERT INTO paimon_views (catalog_key, database_name, view_name, view_schema) "
                              "VALUES (:key, :db, :v, :schema)"),
                         {"key": self.key, "db": view.database, "v": view.name, "schema": view_schema_json(view)})

    def get_view(self, db: str, name: str) -> ViewDef | None:
        if not self._has(VIEWS):
            return None
        rows = self._rows(f"reading view {db}.{name}", "SELECT view_schema FROM paimon_views WHERE catalog_key = :key "
                          "AND database_name = :db AND view_name = :v", key=self.key, db=db, v=name)
        if not rows:
            return None
        try:
            data = json.loads(rows[0][0])
            return ViewDef(db, name, tuple(DataField.from_json(f) for f in data["fields"]), data["query"],
                           dict(data.get("dialects") or {}), data.get("comment"), dict(data.get("options") or {}))
        except (ValueError, KeyError, TypeError) as e:
            raise CatalogError(f"jdbc catalog {self.target.shown}: view {db}.{name} has an unreadable schema: "
                               f"{e}") from None

    def list_views(self, db: str) -> list[str]:
        if not self._has(VIEWS):
            return []
        rows = self._rows(f"listing the views of {db}", "SELECT view_name FROM paimon_views WHERE "
                          "catalog_key = :key AND database_name = :db", key=self.key, db=db)
        return sorted(r[0] for r in rows)

    def drop_view(self, db: str, name: str) -> None:
        if self._has(VIEWS):
            with self._tx(f"dropping view {db}.{name}") as conn:
                conn.execute(text("DELETE FROM paimon_views WHERE catalog_key = :key AND database_name = :db "
                                  "AND view_name = :v"), {"key": self.key, "db": db, "v": name})

    # ---- the lock ----------------------------------------------------------------------------------------------
    def lock_id(self, db: str, table: str) -> str:
        return f"{self.key}.{db}.{table}"

    def lock(self, db: str, table: str) -> contextlib.AbstractContextManager[None]:
        """The table's lock with ``lock.enabled`` (Java's ``JdbcCatalogLock``); without it, no lock (as Java)."""
        return self._locked(self.lock_id(db, table)) if self.options.lock_enabled else contextlib.nullcontext()

    @contextlib.contextmanager
    def _locked(self, lock_id: str) -> Iterator[None]:
        self._acquire(lock_id)
        try:
            yield
        finally:
            with self._tx(f"releasing the lock {lock_id}") as conn:
                conn.execute(text("DELETE FROM paimon_distributed_locks WHERE lock_id = :id"), {"id": lock_id})

    def _try_acquire(self, lock_id: str) -> bool:
        with self._tx(f"clearing an expired lock {lock_id}") as conn:
            conn.execute(text(f"DELETE FROM paimon_distributed_locks WHERE {EXPIRED[self.target.dialect]} "
                              "and lock_id = :id"), {"id": lock_id})
        try:
            with self._tx(f"acquiring the lock {lock_id}", _Taken()) as conn:
                conn.execute(text("INSERT INTO paimon_distributed_locks (lock_id,expire_time_seconds) "
                                  "VALUES (:id,:expire)"),
                             {"id": lock_id, "expire": self.options.acquire_timeout_ms // 1000})
        except _Taken:
            return False
        return True

    def _acquire(self, lock_id: str) -> None:
        """Java's loop: try; then sleep (the first sleep 100 ms, doubling up to ``lock-check-max-sleep``) and try
        again until ``lock-acquire-timeout`` has passed."""
        taken = self._try_acquire(lock_id)
        sleep_ms = 50
        start = time.monotonic()
        while not taken:
            sleep_ms = min(sleep_ms * 2, self.options.check_max_sleep_ms)
            time.sleep(sleep_ms / 1000)
            taken = self._try_acquire(lock_id)
            if (time.monotonic() - start) * 1000 > self.options.acquire_timeout_ms:
                break
        if not taken:
            waited = format_duration(int((time.monotonic() - start) * 1000))
            raise CommitConflictError(f"jdbc catalog {self.target.shown}: the lock {lock_id} is held by another "
                                      f"writer; gave up after {waited} (lock-acquire-timeout "
                                      f"{format_duration(self.options.acquire_timeout_ms)})")

    def close(self) -> None:
        self.engine.dispose()


class _Taken(Exception):
    """The lock row exists: another writer holds the lock."""


def _nonempty_file(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False
