"""HiveMetastore against a real Hive Metastore 2.3.10 (the session's, tests/hive_metastore.py): databases, tables
registered exactly as Paimon Java 1.0 registers them (reference catalogs-paimon-java.md §2, read back through the
Thrift API), alter, rename, drop, partitions, views, the lock, and the errors."""

from __future__ import annotations

import os
import threading
import time
import uuid
from typing import Any

import pytest

from table_engine.catalog.hive import HiveMetastore
from table_engine.catalog.metastore import ViewDef
from table_engine.errors import (
    CatalogError,
    CommitConflictError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    TableAlreadyExistError,
    TableNotExistError,
)
from table_engine.format.schema_file import TableSchema, new_schema
from table_engine.types import DataField, parse_type
from tests.hive_metastore import HiveMetastore as HiveMetastoreServer
from tests.s3_server import free_port

pytestmark = pytest.mark.integration


@pytest.fixture
def metastore(hive_metastore: HiveMetastoreServer):
    m = HiveMetastore({"uri": hive_metastore.uri}, str(hive_metastore.warehouse))
    yield m
    m.close()


@pytest.fixture
def db(metastore: HiveMetastore, hive_metastore: HiveMetastoreServer) -> str:
    name = f"db_{uuid.uuid4().hex[:8]}"
    metastore.create_database(name, f"{hive_metastore.warehouse}/{name}.db", {})
    return name


def orders(options: dict[str, str] | None = None, *, extra: tuple[DataField, ...] = (),
           comment: str | None = "orders") -> TableSchema:
    fields = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "name", parse_type("STRING")),
              DataField(2, "qty", parse_type("INT")), DataField(3, "amount", parse_type("DECIMAL(12, 2)")),
              DataField(4, "day", parse_type("DATE")), DataField(5, "ts", parse_type("TIMESTAMP(6)")),
              DataField(6, "ok", parse_type("BOOLEAN")), DataField(7, "score", parse_type("DOUBLE")),
              DataField(8, "dt", parse_type("STRING")), *extra]
    return new_schema(0, fields, ["dt"], ["id", "dt"], {"bucket": "2", "hive.sample-prop": "x", **(options or {})},
                      comment=comment)


def registered(metastore: HiveMetastore, db: str, name: str) -> Any:
    """The metastore's table ``db.name`` as the thrift API returns it."""
    t = metastore._get_table(db, name)
    assert t is not None, f"{db}.{name} is not in the metastore"
    return t


def location(server: HiveMetastoreServer, db: str, table: str) -> str:
    return f"{server.warehouse}/{db}.db/{table}"


def test_databases(metastore: HiveMetastore, hive_metastore: HiveMetastoreServer) -> None:
    name = f"db_{uuid.uuid4().hex[:8]}"
    assert not metastore.database_exists(name)
    metastore.create_database(name, f"{hive_metastore.warehouse}/{name}.db", {"comment": "sales", "k": "v"})
    assert metastore.database_exists(name) and name in metastore.list_databases()
    assert metastore.database_properties(name) == {
        "comment": "sales", "k": "v", "location": f"file:{hive_metastore.warehouse}/{name}.db"}
    raw = metastore._get_database(name)  # §2: as the thrift API returns it
    assert (raw.ownerName, raw.parameters) == (None, {"k": "v"})
    with pytest.raises(DatabaseAlreadyExistError, match=name):
        metastore.create_database(name, f"{hive_metastore.warehouse}/{name}.db", {})
    metastore.drop_database(name)
    assert not metastore.database_exists(name)
    with pytest.raises(DatabaseNotExistError, match=f"hive catalog thrift://127.0.0.1:.*database {name}"):
        metastore.database_properties(name)
    with pytest.raises(DatabaseNotExistError):
        metastore.drop_database(name)


def test_table_is_registered_exactly_as_java_registers_it(metastore: HiveMetastore, db: str,
                                                         hive_metastore: HiveMetastoreServer) -> None:
    before = int(time.time())
    metastore.register_table(db, "orders", location(hive_metastore, db, "orders"), orders())
    t = registered(metastore, db, "orders")
    assert (t.tableName, t.dbName, t.tableType, t.retention) == ("orders", db, "MANAGED_TABLE", 2147483647)
    # both set to the client's second (Java's HiveCatalog); the server sets createTime again at its own second, so
    # across a second boundary lastAccessTime is the second before (seen: 1796630834 vs 1796630835)
    assert before <= t.lastAccessTime <= t.createTime <= time.time() and t.createTime - t.lastAccessTime <= 1
    assert t.owner
    params = {k: v for k, v in t.parameters.items() if k not in ("transient_lastDdlTime", "numFiles", "totalSize")}
    assert params == {"table_type": "PAIMON", "storage_handler": "org.apache.paimon.hive.PaimonStorageHandler",
                      "comment": "orders", "sample-prop": "x"}
    assert t.partitionKeys == []
    sd = t.sd
    assert [(c.name, c.type, c.comment) for c in sd.cols] == [
        ("id", "bigint", None), ("name", "string", None), ("qty", "int", None), ("amount", "decimal(12,2)", None),
        ("day", "date", None), ("ts", "timestamp", None), ("ok", "boolean", None), ("score", "double", None),
        ("dt", "string", None)]
    assert sd.location == f"file:{hive_metastore.warehouse}/{db}.db/orders"
    assert sd.inputFormat == "org.apache.paimon.hive.mapred.PaimonInputFormat"
    assert sd.outputFormat == "org.apache.paimon.hive.mapred.PaimonOutputFormat"
    assert (sd.serdeInfo.name, sd.serdeInfo.serializationLib, sd.serdeInfo.parameters) == (
        None, "org.apache.paimon.hive.PaimonSerDe", {})
    assert (sd.compressed, sd.numBuckets, sd.bucketCols, sd.sortCols, sd.parameters, sd.storedAsSubDirectories) == (
        False, 0, [], [], {}, False)
    assert (sd.skewedInfo.skewedColNames, sd.skewedInfo.skewedColValues,
            sd.skewedInfo.skewedColValueLocationMaps) == ([], [], {})
    assert (t.viewOriginalText, t.viewExpandedText, t.temporary, t.rewriteEnabled) == (None, None, False, False)

    assert metastore.table_exists(db, "orders") and metastore.list_tables(db) == ["orders"]
    with pytest.raises(TableAlreadyExistError, match=f"{db}.orders exists already"):
        metastore.register_table(db, "orders", location(hive_metastore, db, "orders"), orders())


def test_alter_follows_the_schema(metastore: HiveMetastore, db: str, hive_metastore: HiveMetastoreServer) -> None:
    loc = location(hive_metastore, db, "t")
    metastore.register_table(db, "t", loc, orders())
    wider = orders({"hive.other": "y", "hive.sample-prop": "z"},
                   extra=(DataField(9, "tags", parse_type("ARRAY<STRING>"), "labels"),), comment="new comment")
    metastore.alter_table(db, "t", loc, wider)
    t = registered(metastore, db, "t")
    assert [(c.name, c.type, c.comment) for c in t.sd.cols][-2:] == [("dt", "string", None),
                                                                     ("tags", "array<string>", "labels")]
    assert {k: t.parameters[k] for k in ("sample-prop", "other", "comment", "table_type")} == {
        "sample-prop": "z", "other": "y", "comment": "new comment", "table_type": "PAIMON"}
    assert t.sd.location == f"file:{loc}"
    with pytest.raises(TableNotExistError, match=f"{db}.missing"):
        metastore.alter_table(db, "missing", loc, wider)


def test_rename_moves_the_registration_not_the_files(metastore: HiveMetastore, db: str,
                                                    hive_metastore: HiveMetastoreServer) -> None:
    old, new = location(hive_metastore, db, "a"), location(hive_metastore, db, "b")
    os.makedirs(f"{old}/schema")
    open(f"{old}/schema/schema-0", "w").close()
    schema = orders({"metastore.partitioned-table": "true"})
    metastore.register_table(db, "a", old, schema)
    metastore.add_partitions(db, "a", old, schema, [{"dt": "2024-01-01"}])
    metastore.rename_table(db, "a", "b", new)
    assert not metastore.table_exists(db, "a") and metastore.list_tables(db) == ["b"]
    t = registered(metastore, db, "b")
    assert t.sd.location == f"file:{new}"
    assert metastore._call("", "get_partition", db, "b", ["2024-01-01"]).sd.location == \
        f"file:{new}/dt=2024-01-01"
    assert os.path.exists(f"{old}/schema/schema-0") and not os.path.exists(new)  # the catalog moves files
    metastore.register_table(db, "c", location(hive_metastore, db, "c"), orders())
    with pytest.raises(TableAlreadyExistError, match="c exists already"):
        metastore.rename_table(db, "b", "c", location(hive_metastore, db, "c"))


def test_drop_keeps_the_files(metastore: HiveMetastore, db: str, hive_metastore: HiveMetastoreServer) -> None:
    loc = location(hive_metastore, db, "t")
    os.makedirs(f"{loc}/schema")
    open(f"{loc}/schema/schema-0", "w").close()
    metastore.register_table(db, "t", loc, orders())
    metastore.drop_table(db, "t")
    assert not metastore.table_exists(db, "t") and metastore.list_tables(db) == []
    assert os.path.exists(f"{loc}/schema/schema-0")  # deleteData=false: the catalog deletes files
    with pytest.raises(TableNotExistError):
        metastore.drop_table(db, "t")
    metastore.drop_database(db)
    assert os.path.exists(f"{loc}/schema/schema-0")


def test_partitions(metastore: HiveMetastore, db: str, hive_metastore: HiveMetastoreServer) -> None:
    loc = location(hive_metastore, db, "p")
    schema = orders({"metastore.partitioned-table": "true"})
    metastore.register_table(db, "p", loc, schema)
    t = registered(metastore, db, "p")
    assert [(k.name, k.type) for k in t.partitionKeys] == [("dt", "string")]
    assert "dt" not in [c.name for c in t.sd.cols]
    metastore.add_partitions(db, "p", loc, schema, [{"dt": "2024-01-01"}, {"dt": "2024-01-02"}])
    metastore.add_partitions(db, "p", loc, schema, [{"dt": "2024-01-02"}, {"dt": "a/b"}])  # kept, not an error
    assert sorted(metastore.partition_names(db, "p")) == ["dt=2024-01-01", "dt=2024-01-02", "dt=a%2Fb"]
    p = metastore._call("", "get_partition", db, "p", ["2024-01-01"])
    assert p.sd.location == f"file:{loc}/dt=2024-01-01"
    assert (p.sd.inputFormat, p.sd.serdeInfo.serializationLib) == (t.sd.inputFormat, t.sd.serdeInfo.serializationLib)
    assert [c.name for c in p.sd.cols] == [c.name for c in t.sd.cols]
    assert set(p.parameters) <= {"transient_lastDdlTime", "numFiles", "totalSize"}
    metastore.drop_partitions(db, "p", [{"dt": "2024-01-01"}, {"dt": "never-added"}])
    assert sorted(metastore.partition_names(db, "p")) == ["dt=2024-01-02", "dt=a%2Fb"]

    plain = orders()  # without metastore.partitioned-table nothing is registered
    metastore.register_table(db, "q", location(hive_metastore, db, "q"), plain)
    metastore.add_partitions(db, "q", location(hive_metastore, db, "q"), plain, [{"dt": "2024-01-01"}])
    metastore.drop_partitions(db, "q", [{"dt": "2024-01-01"}])
    assert metastore.partition_names(db, "q") == []


def test_views_round_trip(metastore: HiveMetastore, db: str, hive_metastore: HiveMetastoreServer) -> None:
    metastore.register_table(db, "t", location(hive_metastore, db, "t"), orders())
    view = ViewDef(db, "v", (DataField(0, "id", parse_type("BIGINT")), DataField(1, "total", parse_type("DOUBLE"),
                                                                                   "sum")),
                   "SELECT id, SUM(score) AS total FROM t GROUP BY id", comment="totals", options={"k": "v"})
    metastore.create_view(view)
    got = metastore.get_view(db, "v")
    assert got is not None
    assert (got.fields, got.query, got.comment, got.dialects) == (view.fields, view.query, "totals", {})
    assert {k: v for k, v in got.options.items() if k != "transient_lastDdlTime"} == {"k": "v"}
    raw = registered(metastore, db, "v")
    assert (raw.tableType, raw.viewOriginalText, raw.viewExpandedText, raw.partitionKeys) == (
        "VIRTUAL_VIEW", view.query, view.query, [])
    assert metastore.list_views(db) == ["v"] and metastore.list_tables(db) == ["t"]
    assert not metastore.table_exists(db, "v") and metastore.get_view(db, "t") is None
    with pytest.raises(TableAlreadyExistError, match="a view"):
        metastore.create_view(view)
    with pytest.raises(TableAlreadyExistError, match="a table"):
        metastore.create_view(ViewDef(db, "t", view.fields, view.query))
    with pytest.raises(TableNotExistError):
        metastore.drop_view(db, "t")
    metastore.drop_view(db, "v")
    assert metastore.get_view(db, "v") is None and metastore.list_views(db) == []
    with pytest.raises(DatabaseNotExistError):
        metastore.create_view(ViewDef("no_such_db", "v", view.fields, view.query))


def test_lock_contention_second_waits_until_the_first_releases(db: str, hive_metastore: HiveMetastoreServer,
                                                              metastore: HiveMetastore) -> None:
    metastore.register_table(db, "t", location(hive_metastore, db, "t"), orders())
    options = {"uri": hive_metastore.uri, "lock-check-max-sleep": "100 ms", "lock-acquire-timeout": "30 s"}
    first, second = HiveMetastore(options, ""), HiveMetastore(options, "")
    held = threading.Event()
    events: list[str] = []

    def holder() -> None:
        with first.lock(db, "t"):
            events.append("first acquired")
            held.set()
            time.sleep(1.0)
            events.append("first releases")

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(30)
    started = time.monotonic()
    with second.lock(db, "t"):
        events.append("second acquired")
        waited = time.monotonic() - started
    thread.join(30)
    assert events == ["first acquired", "first releases", "second acquired"]
    assert waited >= 0.5
    with first.lock(db, "t"):  # released again
        pass
    first.close()
    second.close()


def test_lock_times_out_with_a_retryable_conflict(db: str, hive_metastore: HiveMetastoreServer,
                                                 metastore: HiveMetastore) -> None:
    metastore.register_table(db, "t", location(hive_metastore, db, "t"), orders())
    waiter = HiveMetastore({"uri": hive_metastore.uri, "lock-acquire-timeout": "600 ms",
                            "lock-check-max-sleep": "100 ms"}, "")
    with metastore.lock(db, "t"):
        started = time.monotonic()
        with pytest.raises(CommitConflictError, match=f"lock on {db}.t within 600 ms") as e:
            with waiter.lock(db, "t"):
                pass
        assert 0.6 <= time.monotonic() - started < 5
        assert e.value.retryable
    with waiter.lock(db, "t"):  # the timed-out request was withdrawn: nothing is left waiting
        pass
    waiter.close()


def test_unreachable_uri_is_one_catalog_error() -> None:
    uri = f"thrift://127.0.0.1:{free_port()}"
    m = HiveMetastore({"uri": uri}, "/w")
    with pytest.raises(CatalogError, match=f"hive catalog {uri}: cannot connect") as e:
        m.list_databases()
    assert "Connection refused" in str(e.value)
    with pytest.raises(CatalogError, match="is not thrift://host:port"):
        HiveMetastore({"uri": "thrift://nohost"}, "/w")


def test_second_address_is_tried_when_the_first_refuses(hive_metastore: HiveMetastoreServer) -> None:
    dead = f"thrift://127.0.0.1:{free_port()}"
    m = HiveMetastore({"uri": f"{dead},{hive_metastore.uri}"}, "/w")
    assert "default" in m.list_databases()
    m.close()


def test_a_metastore_exception_names_the_catalog_and_the_problem(metastore: HiveMetastore,
                                                                 hive_metastore: HiveMetastoreServer) -> None:
    with pytest.raises(CatalogError, match=f"hive catalog {hive_metastore.uri}: create table no_such_db.t: "
                                           r"\w+Exception: .*no_such_db"):
        metastore.register_table("no_such_db", "t", "/nowhere/t", orders())
    with pytest.raises(CatalogError, match="upper-case"):
        metastore.register_table("default", "Orders", "/nowhere/t", orders())
