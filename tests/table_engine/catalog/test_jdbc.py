"""The JDBC metastore against real databases (SQLite files and the session's PostgreSQL 15): Paimon Java 1.0's DDL
and rows (reference catalogs-paimon-java.md section 2), catalog-key scoping, pypaimon's table properties, views as
newer Paimon Java stores them, the lock, and bad input that fails as one CatalogError without the password."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from table_engine.catalog.jdbc import JdbcMetastore, sqlalchemy_url
from table_engine.catalog.metastore import ViewDef
from table_engine.errors import (
    CatalogError,
    CommitConflictError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    OptionError,
    TableAlreadyExistError,
)
from table_engine.format.schema_file import new_schema
from table_engine.types import DataField, parse_type
from tests import postgres_server
from tests.postgres_server import PostgresServer
from tests.s3_server import free_port
from tests.table_engine.catalog.conftest import JdbcDatabase

OpenMetastore = Callable[..., JdbcMetastore]
FAST_LOCK = {"lock.enabled": "true", "lock-check-max-sleep": "100 ms"}


def _rows(metastore: JdbcMetastore, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    with metastore.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params).all()]


def _execute(metastore: JdbcMetastore, sql: str, **params: Any) -> None:
    with metastore.engine.begin() as conn:
        conn.execute(text(sql), params)


def _schema(options: dict[str, str] | None = None) -> Any:
    fields = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "dt", parse_type("STRING")),
              DataField(2, "v", parse_type("DOUBLE"))]
    return new_schema(0, fields, ["dt"], ["id", "dt"], {"bucket": "2", **(options or {})})


# ---------------------------------------------------------------------------------------------------- DDL, rows

SQLITE_COLUMNS = {  # PRAGMA table_info: name, type, notnull, default, pk position
    "paimon_tables": [("catalog_key", "VARCHAR(255)", 1, None, 1), ("database_name", "VARCHAR(255)", 1, None, 2),
                      ("table_name", "VARCHAR(255)", 1, None, 3)],
    "paimon_database_properties": [
        ("catalog_key", "VARCHAR(255)", 1, None, 1), ("database_name", "VARCHAR(255)", 1, None, 2),
        ("property_key", "VARCHAR(255)", 0, None, 3), ("property_value", "VARCHAR(1000)", 0, None, 0)],
    "paimon_distributed_locks": [
        ("lock_id", "VARCHAR(255)", 1, None, 1), ("acquired_at", "TIMESTAMP", 1, "CURRENT_TIMESTAMP", 0),
        ("expire_time_seconds", "BIGINT", 1, "0", 0)],
}
POSTGRES_COLUMNS = {  # information_schema.columns: name, type, length, nullable, default
    "paimon_tables": [("catalog_key", "character varying", 255, "NO", None),
                      ("database_name", "character varying", 255, "NO", None),
                      ("table_name", "character varying", 255, "NO", None)],
    "paimon_database_properties": [
        ("catalog_key", "character varying", 255, "NO", None), ("database_name", "character varying", 255, "NO", None),
        ("property_key", "character varying", 255, "NO", None),
        ("property_value", "character varying", 1000, "YES", None)],
    "paimon_distributed_locks": [
        ("lock_id", "character varying", 255, "NO", None),
        ("acquired_at", "timestamp without time zone", None, "NO", "CURRENT_TIMESTAMP"),
        ("expire_time_seconds", "bigint", None, "NO", "0")],
}
POSTGRES_KEYS = {"paimon_tables": ("paimon_tables_pkey", ["catalog_key", "database_name", "table_name"]),
                 "paimon_database_properties": ("paimon_database_properties_pkey",
                                                ["catalog_key", "database_name", "property_key"]),
                 "paimon_distributed_locks": ("paimon_distributed_locks_pkey", ["lock_id"])}


def _catalog_tables(metastore: JdbcMetastore) -> set[str]:
    if metastore.target.dialect == "sqlite":
        return {r[0] for r in _rows(metastore, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {r[0] for r in _rows(metastore, "SELECT table_name FROM information_schema.tables "
                                           "WHERE table_schema = 'public'")}


def test_tables_are_created_with_javas_ddl(open_metastore: OpenMetastore, jdbc_db: JdbcDatabase) -> None:
    plain = open_metastore()
    assert _catalog_tables(plain) == {"paimon_tables", "paimon_database_properties"}  # no lock table without lock
    metastore = open_metastore({"lock.enabled": "true"})
    assert _catalog_tables(metastore) == {"paimon_tables", "paimon_database_properties", "paimon_distributed_locks"}
    for table in SQLITE_COLUMNS:
        if jdbc_db.dialect == "sqlite":
            got = [r[1:] for r in _rows(metastore, f"PRAGMA table_info({table})")]
            assert got == SQLITE_COLUMNS[table], table
        else:
            got = _rows(metastore, "SELECT column_name, data_type, character_maximum_length, is_nullable, "
                                   "column_default FROM information_schema.columns WHERE table_name = :t "
                                   "ORDER BY ordinal_position", t=table)
            assert got == POSTGRES_COLUMNS[table], table
            keys = _rows(metastore, "SELECT constraint_name, column_name FROM information_schema.key_column_usage "
                                    "WHERE table_name = :t ORDER BY ordinal_position", t=table)
            name, columns = POSTGRES_KEYS[table]
            assert keys == [(name, c) for c in columns], table
    open_metastore({"lock.enabled": "true"})  # opening again changes nothing
    assert len(_catalog_tables(metastore)) == 3


def test_a_sqlite_catalog_file_we_create_is_in_wal_mode(tmp_path: Any) -> None:
    made = JdbcMetastore({"uri": f"jdbc:sqlite:{tmp_path / 'new.db'}"}, str(tmp_path))
    made.close()
    with sqlite3.connect(tmp_path / "new.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with sqlite3.connect(tmp_path / "theirs.db") as conn:  # a catalog file someone else made keeps its mode
        conn.execute("CREATE TABLE other(x INTEGER)")
    theirs = JdbcMetastore({"uri": f"jdbc:sqlite:{tmp_path / 'theirs.db'}"}, str(tmp_path))
    theirs.close()
    with sqlite3.connect(tmp_path / "theirs.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)


def test_databases(open_metastore: OpenMetastore) -> None:
    metastore = open_metastore()
    assert metastore.list_databases() == []
    metastore.create_database("sales", "/wh/sales.db", {"owner": "ana"})
    assert _rows(metastore, "SELECT catalog_key, database_name, property_key, property_value "
                            "FROM paimon_database_properties ORDER BY property_key") == [
        ("jdbc", "sales", "exists", "true"), ("jdbc", "sales", "location", "/wh/sales.db"),
        ("jdbc", "sales", "owner", "ana")]
    assert metastore.database_exists("sales") and not metastore.database_exists("nope")
    assert metastore.database_properties("sales") == {"location": "/wh/sales.db", "owner": "ana"}
    with pytest.raises(DatabaseAlreadyExistError, match="sales"):
        metastore.create_database("sales", "/wh/sales.db", {})
    with pytest.raises(DatabaseNotExistError, match="nope"):
        metastore.database_properties("nope")
    # a database Java knows only by its tables (no property rows) is listed too: the union, sorted, once each
    _execute(metastore, "INSERT INTO paimon_tables VALUES ('jdbc', 'legacy', 't1'), ('jdbc', 'legacy', 't2'), "
                        "('jdbc', 'sales', 't')")
    assert metastore.list_databases() == ["legacy", "sales"]
    assert metastore.database_exists("legacy")
    metastore.drop_database("sales")
    assert metastore.list_databases() == ["legacy"]
    assert _rows(metastore, "SELECT * FROM paimon_database_properties") == []
    assert _rows(metastore, "SELECT table_name FROM paimon_tables ORDER BY table_name") == [("t1",), ("t2",)]


def test_tables(open_metastore: OpenMetastore) -> None:
    metastore = open_metastore()
    metastore.create_database("db", "/wh/db.db", {})
    schema = _schema()
    metastore.register_table("db", "orders", "/wh/db.db/orders", schema)
    metastore.register_table("db", "items", "/wh/db.db/items", schema)
    assert _rows(metastore, "SELECT * FROM paimon_tables ORDER BY table_name") == [
        ("jdbc", "db", "items"), ("jdbc", "db", "orders")]
    assert metastore.list_tables("db") == ["items", "orders"]
    assert metastore.table_exists("db", "orders") and not metastore.table_exists("db", "nope")
    with pytest.raises(TableAlreadyExistError, match="db.orders"):
        metastore.register_table("db", "orders", "/wh/db.db/orders", schema)
    metastore.alter_table("db", "orders", "/wh/db.db/orders", schema)  # Java stores no schema
    metastore.add_partitions("db", "orders", "/wh/db.db/orders", schema, [{"dt": "2026-01-01"}])
    metastore.drop_partitions("db", "orders", [{"dt": "2026-01-01"}])
    metastore.rename_table("db", "orders", "orders2", "/wh/db.db/orders2")
    assert metastore.list_tables("db") == ["items", "orders2"]
    with pytest.raises(TableAlreadyExistError, match="db.items"):
        metastore.rename_table("db", "orders2", "items", "/wh/db.db/items")
    metastore.drop_table("db", "orders2")
    assert _rows(metastore, "SELECT * FROM paimon_tables") == [("jdbc", "db", "items")]
    assert _catalog_tables(metastore) == {"paimon_tables", "paimon_database_properties"}  # nothing else made


def test_catalog_keys_do_not_see_each_other(open_metastore: OpenMetastore) -> None:
    a, b = open_metastore({"catalog-key": "a"}), open_metastore({"catalog-key": "b"})
    a.create_database("db", "/wh-a/db.db", {})
    a.register_table("db", "t", "/wh-a/db.db/t", _schema())
    assert b.list_databases() == [] and not b.database_exists("db") and b.list_tables("db") == []
    b.create_database("db", "/wh-b/db.db", {})  # the same name under another key is another database
    b.register_table("db", "t", "/wh-b/db.db/t", _schema())
    b.drop_table("db", "t")
    b.drop_database("db")
    assert a.list_tables("db") == ["t"] and a.database_properties("db") == {"location": "/wh-a/db.db"}
    assert _rows(a, "SELECT catalog_key, table_name FROM paimon_tables") == [("a", "t")]


PYPAIMON_TABLE_PROPERTIES = (  # pypaimon 2.1.0's jdbc_catalog.py
    "CREATE TABLE IF NOT EXISTS paimon_table_properties (catalog_key VARCHAR(255) NOT NULL, "
    "database_name VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
    "property_value VARCHAR(1000), PRIMARY KEY (catalog_key, database_name, table_name, property_key))")


def test_pypaimons_table_properties_are_kept_consistent(open_metastore: OpenMetastore) -> None:
    first = open_metastore()
    _execute(first, PYPAIMON_TABLE_PROPERTIES)
    metastore = open_metastore()
    metastore.create_database("db", "/wh/db.db", {})
    metastore.register_table("db", "t", "/wh/db.db/t", _schema())

    def props(table: str) -> dict[str, str]:
        return dict(r for r in _rows(metastore, "SELECT property_key, property_value FROM paimon_table_properties "
                                                "WHERE catalog_key = 'jdbc' AND database_name = 'db' "
                                                "AND table_name = :t", t=table))

    assert props("t") == {"bucket": "2", "primary-key": "id,dt", "partition": "dt"}
    metastore.alter_table("db", "t", "/wh/db.db/t", _schema({"snapshot.num-retained.max": "5"}))
    assert props("t")["snapshot.num-retained.max"] == "5"
    metastore.rename_table("db", "t", "u", "/wh/db.db/u")
    assert props("t") == {} and props("u")["bucket"] == "2"
    metastore.drop_table("db", "u")
    assert _rows(metastore, "SELECT * FROM paimon_table_properties") == []
    metastore.register_table("db", "v", "/wh/db.db/v", _schema())
    metastore.drop_database("db")
    assert _rows(metastore, "SELECT * FROM paimon_table_properties") == []


def test_views_are_stored_as_paimon_javas_jdbc_catalog_stores_them(open_metastore: OpenMetastore) -> None:
    metastore = open_metastore()
    metastore.create_database("db", "/wh/db.db", {})
    assert metastore.list_views("db") == [] and metastore.get_view("db", "v") is None
    assert "paimon_views" not in _catalog_tables(metastore)  # made by the first view only
    view = ViewDef("db", "v", (DataField(0, "id", parse_type("BIGINT NOT NULL")),), "SELECT id FROM db.t",
                   {"spark": "SELECT id FROM db.t"}, "ids", {"k": "v"})
    metastore.create_view(view)
    assert metastore.get_view("db", "v") == view
    assert metastore.list_views("db") == ["v"]
    [(key, db, name, schema_json)] = _rows(metastore, "SELECT * FROM paimon_views")
    assert (key, db, name) == ("jdbc", "db", "v")
    assert list(json.loads(schema_json)) == ["fields", "query", "dialects", "comment", "options"]  # ViewSchema
    assert json.loads(schema_json)["fields"] == [{"id": 0, "name": "id", "type": "BIGINT NOT NULL"}]
    with pytest.raises(TableAlreadyExistError, match="db.v"):
        metastore.create_view(view)
    with pytest.raises(TableAlreadyExistError, match="db.v"):
        metastore.register_table("db", "v", "/wh/db.db/v", _schema())
    metastore.register_table("db", "t", "/wh/db.db/t", _schema())
    with pytest.raises(TableAlreadyExistError, match="db.t"):
        metastore.create_view(ViewDef("db", "t", view.fields, "SELECT 1"))
    metastore.create_view(ViewDef("only_views", "w", view.fields, "SELECT 1"))  # a view's database is listed
    assert metastore.list_databases() == ["db", "only_views"]
    metastore.drop_view("db", "v")
    assert metastore.list_views("db") == []
    metastore.drop_database("only_views")
    assert _rows(metastore, "SELECT * FROM paimon_views") == []


# ---------------------------------------------------------------------------------------------------------- lock

def test_the_lock_row_is_javas_and_is_gone_after_release(open_metastore: OpenMetastore) -> None:
    metastore = open_metastore({"lock.enabled": "true"})
    with metastore.lock("db", "t"):
        assert _rows(metastore, "SELECT lock_id, expire_time_seconds FROM paimon_distributed_locks") == [
            ("jdbc.db.t", 480)]  # the 8 min default acquire timeout, in seconds, as Java writes it
    assert _rows(metastore, "SELECT * FROM paimon_distributed_locks") == []
    with pytest.raises(RuntimeError, match="boom"), metastore.lock("db", "t"):
        raise RuntimeError("boom")
    assert _rows(metastore, "SELECT * FROM paimon_distributed_locks") == []


def test_without_lock_enabled_there_is_no_lock(open_metastore: OpenMetastore) -> None:
    metastore = open_metastore()
    with metastore.lock("db", "t"), metastore.lock("db", "t"):
        pass
    assert "paimon_distributed_locks" not in _catalog_tables(metastore)


def test_two_writers_contend_and_the_second_gets_the_lock_after_release(open_metastore: OpenMetastore) -> None:
    first, second = open_metastore(FAST_LOCK), open_metastore(FAST_LOCK)
    events: list[str] = []
    held = threading.Event()

    def hold() -> None:
        with first.lock("db", "t"):
            events.append("first in")
            held.set()
            time.sleep(0.5)
            events.append("first out")

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(10)
    start = time.monotonic()
    with second.lock("db", "t"):
        events.append("second in")
        waited = time.monotonic() - start
    thread.join(10)
    assert events == ["first in", "first out", "second in"]
    assert 0.3 < waited < 5
    assert _rows(first, "SELECT * FROM paimon_distributed_locks") == []


def test_a_stale_lock_is_cleared(open_metastore: OpenMetastore) -> None:
    metastore = open_metastore(FAST_LOCK)
    _execute(metastore, "INSERT INTO paimon_distributed_locks (lock_id, acquired_at, expire_time_seconds) "
                        "VALUES ('jdbc.db.t', '2000-01-01 00:00:00', 480)")
    start = time.monotonic()
    with metastore.lock("db", "t"):
        assert time.monotonic() - start < 1  # taken at the first attempt: the stale row was deleted
        [(acquired_at,)] = _rows(metastore, "SELECT acquired_at FROM paimon_distributed_locks")
        assert not str(acquired_at).startswith("2000")


def test_a_lock_held_too_long_times_out_naming_the_lock(open_metastore: OpenMetastore) -> None:
    holder = open_metastore(FAST_LOCK)  # its row expires after its own acquire timeout (8 min), as Java's
    impatient = open_metastore({**FAST_LOCK, "lock-acquire-timeout": "1 s"})
    other = open_metastore({**FAST_LOCK, "catalog-key": "other"})
    with holder.lock("db", "t"):
        with other.lock("db", "t"):  # another key's lock of the same table is another lock
            pass
        start = time.monotonic()
        with pytest.raises(CommitConflictError, match=r"the lock jdbc\.db\.t ") as caught, \
                impatient.lock("db", "t"):
            pass
        assert 1 <= time.monotonic() - start < 4
    assert caught.value.retryable
    assert _rows(holder, "SELECT * FROM paimon_distributed_locks") == []


# ---------------------------------------------------------------------------------------------------- bad input

def _log_everything(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="sqlalchemy")  # its statements and pool events too


def _assert_secret_kept(secret: str, error: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    assert secret not in str(error) and secret not in repr(error)
    assert error.__cause__ is None and error.__context__ is None or secret not in str(error.__context__)
    for record in caplog.records:
        assert secret not in record.getMessage()
    assert secret not in caplog.text  # tracebacks of logged errors included


@pytest.mark.integration
def test_a_wrong_password_is_one_catalog_error_without_the_password(
        postgres: PostgresServer, caplog: pytest.LogCaptureFixture) -> None:
    _log_everything(caplog)
    wrong = "wrong-password-DO-NOT-LEAK-93d1"
    with pytest.raises(CatalogError, match="password authentication failed") as caught:
        JdbcMetastore({"uri": postgres.jdbc_uri(), "jdbc.user": postgres_server.USER, "jdbc.password": wrong}, "/wh")
    assert f"jdbc catalog jdbc:postgresql://127.0.0.1:{postgres.port}/postgres" in str(caught.value)
    _assert_secret_kept(wrong, caught.value, caplog)


@pytest.mark.integration
def test_an_unknown_database_is_one_catalog_error(postgres: PostgresServer, caplog: pytest.LogCaptureFixture) -> None:
    _log_everything(caplog)
    with pytest.raises(CatalogError, match='database "nope" does not exist') as caught:
        JdbcMetastore({"uri": postgres.jdbc_uri("nope"), "jdbc.user": postgres_server.USER,
                       "jdbc.password": postgres_server.PASSWORD}, "/wh")
    _assert_secret_kept(postgres_server.PASSWORD, caught.value, caplog)


def test_an_unreachable_server_is_one_catalog_error(caplog: pytest.LogCaptureFixture) -> None:
    _log_everything(caplog)
    port = free_port()
    start = time.monotonic()
    with pytest.raises(CatalogError, match=f"jdbc catalog jdbc:postgresql://127.0.0.1:{port}/db: opening failed") \
            as caught:
        JdbcMetastore({"uri": f"jdbc:postgresql://127.0.0.1:{port}/db?password=s3cret-in-the-uri",
                       "jdbc.user": "u", "jdbc.connectTimeout": "2"}, "/wh")
    assert time.monotonic() - start < 10
    _assert_secret_kept("s3cret-in-the-uri", caught.value, caplog)


def test_a_missing_driver_is_one_catalog_error(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("sqlalchemy")
    try:
        import pymysql  # noqa: F401
        pytest.skip("PyMySQL is installed here")
    except ImportError:
        pass
    _log_everything(caplog)
    with pytest.raises(CatalogError, match=r"jdbc catalog jdbc:mysql://db.example:3306/paimon: .*PyMySQL") as caught:
        JdbcMetastore({"uri": "jdbc:mysql://db.example/paimon", "jdbc.user": "u", "jdbc.password": "my-s3cret"}, "/wh")
    _assert_secret_kept("my-s3cret", caught.value, caplog)


@pytest.mark.parametrize(("options", "message"), [
    ({"uri": "jdbc:oracle:thin:@h:1521:x"}, "'uri'.*'jdbc:oracle:thin:@h:1521:x' is not a JDBC URL"),
    ({"uri": "jdbc:mariadb://u:pw-s3cret@h/db?password=pw-s3cret"}, "'jdbc:mariadb://h/db' is not a JDBC URL"),
    ({"uri": "jdbc:sqlite::memory:"}, "in-memory"),
    ({"uri": "jdbc:postgresql://h/db", "jdbc.password": "pw-s3cret", "jdbc.loginTimeout": "3"},
     "'jdbc.loginTimeout'.*postgresql"),
    ({"uri": "jdbc:postgresql://h/db", "jdbc.connectTimeout": "soon"}, "'jdbc.connectTimeout'"),
    ({"uri": "jdbc:sqlite:/x.db", "lock-acquire-timeout": "forever"}, "lock-acquire-timeout"),
    ({"uri": "jdbc:sqlite:/x.db", "client-pool-size": "0"}, "client-pool-size"),
    ({}, "'uri'"),
])
def test_bad_options_are_refused_naming_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message) as caught:
        JdbcMetastore(options, "/wh")
    assert "pw-s3cret" not in str(caught.value)


def test_jdbc_uris_map_to_sqlalchemy_urls() -> None:
    sqlite = sqlalchemy_url("jdbc:sqlite:/data/catalog.db", {"busy_timeout": "5000"})
    assert (str(sqlite.url), sqlite.connect_args, sqlite.sqlite_file) == \
        ("sqlite:////data/catalog.db", {"timeout": 5.0}, "/data/catalog.db")
    pg = sqlalchemy_url("jdbc:postgresql://pg.internal/lake?sslmode=require&password=p%40ss",
                        {"user": "ana", "connectTimeout": "3", "ApplicationName": "etl"})
    assert pg.url.render_as_string(hide_password=False) == "postgresql+psycopg://ana:p%40ss@pg.internal:5432/lake"
    assert pg.url.password == "p@ss" and "p@ss" not in str(pg.url)
    assert pg.connect_args == {"sslmode": "require", "connect_timeout": 3, "application_name": "etl"}
    assert pg.shown == "jdbc:postgresql://pg.internal:5432/lake"
    my = sqlalchemy_url("jdbc:mysql://root:pw@my.internal:3307/lake", {"connectTimeout": "2500"})
    assert my.url.render_as_string(hide_password=False) == "mysql+pymysql://root:pw@my.internal:3307/lake"
    assert my.connect_args == {"connect_timeout": 3} and my.shown == "jdbc:mysql://my.internal:3307/lake"
