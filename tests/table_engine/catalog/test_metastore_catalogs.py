"""End to end through ``create_catalog`` over the real metastores: JDBC on SQLite, JDBC on PostgreSQL 15 and a Hive
Metastore 2.3.10 (the last two started once per session, tests/conftest.py). Each case runs against all three:
databases, a partitioned primary-key table written twice and read back, alter, rename, drop, views, the
``$``-tables, concurrent commits under ``lock.enabled``, a registered table whose files are gone, and bad
connections that fail as one CatalogError and leave the warehouse as it was. Hive adds its partitions
(``metastore.partitioned-table``) and the columns it registers."""

from __future__ import annotations

import contextlib
import pathlib
import shutil
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog, create_catalog
from table_engine.catalog.metastore_catalog import MetastoreCatalog
from table_engine.errors import CatalogError, OptionError, TableNotExistError
from table_engine.schema_change import AddColumn
from tests import postgres_server
from tests.conftest import MetastoreDefinition
from tests.hive_metastore import HiveMetastore as HiveMetastoreServer
from tests.s3_server import free_port

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
FIRST = pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": ["x", "y", "z"]})
SECOND = pa.table({"dt": ["a", "c"], "id": [1, 4], "v": ["x2", "w"]})


@dataclass
class Lake:
    """One metastore's catalog definition over a fresh warehouse; :meth:`catalog` opens catalogs on it (closed
    after the test)."""

    kind: str
    warehouse: str
    options: dict[str, str]
    db: str = field(default_factory=lambda: f"e2e_{uuid.uuid4().hex[:8]}")  # the Hive Metastore is the session's
    opened: list[Catalog] = field(default_factory=list)

    def catalog(self, extra: dict[str, str] | None = None) -> Catalog:
        catalog = create_catalog(self.warehouse, {**self.options, **(extra or {})})
        self.opened.append(catalog)
        return catalog


@pytest.fixture
def lake(metastore: MetastoreDefinition, tmp_path: pathlib.Path) -> Iterator[Lake]:
    lake = Lake(metastore.kind, str(tmp_path / "warehouse"), dict(metastore.options))
    try:
        yield lake
    finally:
        for catalog in lake.opened:
            catalog.close()


def rows(table: Any) -> list[dict[str, Any]]:
    return sorted(table.read().to_pylist(), key=lambda r: (r["dt"], r["id"]))


def registered_columns(catalog: Catalog, db: str, name: str) -> list[str]:
    """The columns a Hive Metastore keeps for a table (``sd.cols`` and the partition keys)."""
    assert isinstance(catalog, MetastoreCatalog)
    t = catalog.metastore._get_table(db, name)  # type: ignore[attr-defined]
    return [c.name for c in t.sd.cols] + [k.name for k in t.partitionKeys or []]


def listing(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_databases_tables_alter_rename_and_drop(lake: Lake) -> None:
    catalog = lake.catalog()
    db = lake.db
    catalog.create_database(db)
    assert db in catalog.list_databases()
    t = catalog.create_table(f"{db}.orders", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1"})
    t.write(FIRST)
    t.write(SECOND)
    assert catalog.list_tables(db) == ["orders"]
    expected = [{"dt": "a", "id": 1, "v": "x2"}, {"dt": "a", "id": 2, "v": "y"}, {"dt": "b", "id": 3, "v": "z"},
                {"dt": "c", "id": 4, "v": "w"}]
    assert rows(lake.catalog().get_table(f"{db}.orders")) == expected  # another catalog on the same metastore

    t.alter(AddColumn("qty", pa.int32()))
    assert lake.catalog().get_table(f"{db}.orders").arrow_schema.names == ["dt", "id", "v", "qty"]
    if lake.kind == "hive":  # the registration follows the schema (sd.cols; dt is a column: not partitioned-table)
        assert registered_columns(catalog, db, "orders") == ["dt", "id", "v", "qty"]

    old_dir = pathlib.Path(catalog.table_path(f"{db}.orders"))
    catalog.rename_table(f"{db}.orders", f"{db}.sales")
    assert catalog.list_tables(db) == ["sales"] and not catalog.table_exists(f"{db}.orders")
    assert not old_dir.exists()
    assert [r["v"] for r in rows(lake.catalog().get_table(f"{db}.sales"))] == ["x2", "y", "z", "w"]

    new_dir = pathlib.Path(catalog.table_path(f"{db}.sales"))
    catalog.drop_table(f"{db}.sales")
    assert not new_dir.exists() and catalog.list_tables(db) == []
    assert not lake.catalog().table_exists(f"{db}.sales")
    with pytest.raises(TableNotExistError, match="sales"):
        catalog.get_table(f"{db}.sales")
    catalog.drop_database(db)
    assert db not in catalog.list_databases()


def test_views(lake: Lake) -> None:
    catalog = lake.catalog()
    db = lake.db
    catalog.create_database(db)
    schema = pa.schema([("dt", pa.string()), ("n", pa.int64())])
    catalog.create_view(f"{db}.daily", schema, "SELECT dt, count(*) AS n FROM orders GROUP BY dt",
                        comment="per day", options={"owner": "etl"})
    view = lake.catalog().get_view(f"{db}.daily")
    assert (view.query, view.comment) == ("SELECT dt, count(*) AS n FROM orders GROUP BY dt", "per day")
    # a Hive Metastore adds transient_lastDdlTime to the parameters, which Java's getView returns as options too
    assert {k: v for k, v in view.options.items() if k != "transient_lastDdlTime"} == {"owner": "etl"}
    assert [f.name for f in view.fields] == ["dt", "n"]
    assert catalog.list_views(db) == ["daily"] and catalog.list_tables(db) == []
    catalog.drop_view(f"{db}.daily")
    assert catalog.list_views(db) == []


def test_system_tables_through_the_catalog(lake: Lake) -> None:
    catalog = lake.catalog()
    t = catalog.create_table(f"{lake.db}.orders", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1"})
    t.write(FIRST)
    t.write(SECOND)
    snapshots = catalog.get_table(f"{lake.db}.orders$snapshots").read()
    assert snapshots.column("snapshot_id").to_pylist() == [1, 2]
    options = dict(zip(*catalog.get_table(f"{lake.db}.orders$options").read().select(["key", "value"]).columns))
    assert options[pa.scalar("bucket")] == pa.scalar("1")
    partitions = catalog.get_table(f"{lake.db}.orders$partitions").read()
    assert partitions.num_rows == 3
    shown = dict(zip(*catalog.get_table("sys.catalog_options").read().to_pydict().values()))
    assert shown == {**lake.options, "warehouse": lake.warehouse,
                     **({"jdbc.password": "******"} if "jdbc.password" in lake.options else {})}


def test_locked_commits_from_two_catalogs_all_land(lake: Lake) -> None:
    locked = {"lock.enabled": "true", "lock-check-max-sleep": "200 ms"}
    first, second = lake.catalog(locked), lake.catalog(locked)
    first.create_table(f"{lake.db}.events", pa.schema([("writer", pa.int64()), ("n", pa.int64())]),
                       options={"write-only": "true"})
    errors: list[BaseException] = []
    held: list[int] = []  # who holds a table lock now, across both catalogs
    taken = [0, 0]

    def watched(catalog: Catalog, writer: int) -> None:
        """Count the lock's acquisitions and check that no two holders overlap (the metastore's real lock)."""
        assert isinstance(catalog, MetastoreCatalog)
        lock = catalog.metastore.lock

        @contextlib.contextmanager
        def lock_and_watch(db: str, table: str) -> Iterator[None]:
            with lock(db, table):
                held.append(writer)
                taken[writer] += 1
                assert len(held) == 1, f"two holders of the lock on {db}.{table}: {held}"
                try:
                    yield
                finally:
                    held.remove(writer)

        catalog.metastore.lock = lock_and_watch  # type: ignore[method-assign]

    def commit_five(catalog: Catalog, writer: int) -> None:
        try:
            table = catalog.get_table(f"{lake.db}.events")
            for n in range(5):
                table.write(pa.table({"writer": [writer], "n": [n]}))
        except BaseException as e:  # noqa: BLE001 (reported by the test)
            errors.append(e)

    for i, c in enumerate((first, second)):
        watched(c, i)
    threads = [threading.Thread(target=commit_five, args=(c, i)) for i, c in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert min(taken) >= 5, taken  # every snapshot commit took the lock (and any retried one again)
    table = lake.catalog().get_table(f"{lake.db}.events")
    assert [s.id for s in table.snapshots()] == list(range(1, 11))
    assert sorted((r["writer"], r["n"]) for r in table.read().to_pylist()) == [(w, n) for w in (0, 1)
                                                                             for n in range(5)]


def test_a_table_whose_files_are_gone_is_one_error_naming_it(lake: Lake) -> None:
    catalog = lake.catalog()
    catalog.create_table(f"{lake.db}.gone", SCHEMA)
    shutil.rmtree(catalog.table_path(f"{lake.db}.gone"))
    assert catalog.table_exists(f"{lake.db}.gone")  # still registered
    with pytest.raises(TableNotExistError, match=f"'{lake.db}.gone' is registered in .* its files are missing"):
        catalog.get_table(f"{lake.db}.gone")
    with pytest.raises(TableNotExistError, match=f"{lake.db}.gone"):
        catalog.get_table(f"{lake.db}.gone$snapshots")


def bad_connections(lake: Lake, tmp_path: pathlib.Path) -> list[dict[str, str]]:
    """Catalog options that cannot reach the metastore: a wrong password, nothing listening, no such file."""
    if lake.kind == "jdbc-sqlite":
        return [{**lake.options, "uri": f"jdbc:sqlite:{tmp_path / 'no-such-dir' / 'catalog.db'}"}]
    if lake.kind == "jdbc-postgresql":
        return [{**lake.options, "jdbc.password": "wrong-pw-s3cret"},
                {**lake.options, "uri": f"jdbc:postgresql://127.0.0.1:{free_port()}/db"}]
    return [{**lake.options, "uri": f"thrift://127.0.0.1:{free_port()}"}]


def test_bad_connections_are_one_catalog_error_and_write_nothing(lake: Lake, tmp_path: pathlib.Path) -> None:
    root = pathlib.Path(lake.warehouse)
    before = listing(root)
    for options in bad_connections(lake, tmp_path):
        with pytest.raises(CatalogError) as caught:
            catalog = create_catalog(lake.warehouse, options)  # JDBC connects here, Hive at the first call
            catalog.create_database(lake.db)
            catalog.create_table(f"{lake.db}.t", SCHEMA)
        message = str(caught.value)
        assert "s3cret" not in message and postgres_server.PASSWORD not in message
        assert lake.kind.partition("-")[0] + " catalog" in message, message
        assert listing(root) == before
    # an unknown option is refused before anything connects (an unreachable uri would take a timeout)
    with pytest.raises(OptionError, match="lock.acquire-timeout.*lock-acquire-timeout"):
        create_catalog(lake.warehouse, {**bad_connections(lake, tmp_path)[-1], "lock.acquire-timeout": "1 s"})
    assert listing(root) == before


@pytest.mark.integration
def test_hive_partitions_follow_commits_drops_and_expiry(hive_metastore: HiveMetastoreServer,
                                                         tmp_path: pathlib.Path) -> None:
    catalog = create_catalog(str(tmp_path / "warehouse"), {"metastore": "hive", "uri": hive_metastore.uri})
    assert isinstance(catalog, MetastoreCatalog)
    db = f"e2e_{uuid.uuid4().hex[:8]}"
    try:
        t = catalog.create_table(f"{db}.orders", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "1", "metastore.partitioned-table": "true"})
        assert registered_columns(catalog, db, "orders") == ["id", "v", "dt"]  # dt a partition key, as Java
        names = catalog.metastore.partition_names  # type: ignore[attr-defined]
        assert names(db, "orders") == []
        t.write(pa.table({"dt": ["2020-01-01", "2020-01-02"], "id": [1, 2], "v": ["x", "y"]}))
        assert names(db, "orders") == ["dt=2020-01-01", "dt=2020-01-02"]
        catalog.get_table(f"{db}.orders").write(pa.table({"dt": ["2999-01-01"], "id": [3], "v": ["z"]}))
        assert names(db, "orders") == ["dt=2020-01-01", "dt=2020-01-02", "dt=2999-01-01"]
        t.maintenance.drop_partitions([{"dt": "2020-01-02"}])
        assert names(db, "orders") == ["dt=2020-01-01", "dt=2999-01-01"]
        expired = t.maintenance.expire_partitions(expiration_time="1 d", timestamp_formatter="yyyy-MM-dd")
        assert expired.partitions == [{"dt": "2020-01-01"}]
        assert names(db, "orders") == ["dt=2999-01-01"]
        assert rows(t) == [{"dt": "2999-01-01", "id": 3, "v": "z"}]
    finally:
        catalog.drop_database(db, ignore_if_not_exists=True, cascade=True)
        catalog.close()
