"""MetastoreCatalog over the in-memory metastore: the metastore says which databases, tables and views exist; the
files are where the filesystem catalog keeps them; failures leave nothing behind."""

from __future__ import annotations

import os
import pathlib

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog
from table_engine.catalog.metastore_catalog import MetastoreCatalog
from table_engine.errors import (
    CatalogError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    ReadOnlyTableError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedError,
    ViewAlreadyExistError,
    ViewNotExistError,
)
from table_engine.schema_change import AddColumn, SetOption
from tests.table_engine.catalog.fake_metastore import FakeMetastore

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
ROWS = pa.table({"id": [1, 2], "v": ["a", "b"]})


@pytest.fixture
def fake() -> FakeMetastore:
    return FakeMetastore()


@pytest.fixture
def catalog(tmp_path: pathlib.Path, fake: FakeMetastore) -> MetastoreCatalog:
    return MetastoreCatalog(str(tmp_path), {"metastore": "jdbc"}, fake)


def test_databases_are_the_metastores(catalog: MetastoreCatalog, fake: FakeMetastore,
                                      tmp_path: pathlib.Path) -> None:
    (tmp_path / "stray.db").mkdir()  # a directory the metastore does not know: not a database of this catalog
    catalog.create_database("db", properties={"owner": "me"})
    assert catalog.list_databases() == ["db"] and catalog.database_exists("db")
    assert not catalog.database_exists("stray")
    assert (tmp_path / "db.db").is_dir()
    assert fake.databases["db"][0] == f"{tmp_path}/db.db"
    assert catalog.database_properties("db") == {"location": f"{tmp_path}/db.db", "owner": "me"}
    catalog.drop_database("db")
    assert catalog.list_databases() == [] and not (tmp_path / "db.db").exists()
    with pytest.raises(DatabaseNotExistError, match="'db' does not exist in the jdbc catalog of"):
        catalog.list_tables("db")


def test_a_failed_database_registration_leaves_no_directory(catalog: MetastoreCatalog, fake: FakeMetastore,
                                                            tmp_path: pathlib.Path) -> None:
    fake.databases["db"] = ("elsewhere", {})
    fake.database_exists = lambda db: False  # type: ignore[method-assign]  # the race: registered meanwhile
    with pytest.raises(CatalogError, match="fake metastore: database db exists"):
        catalog.create_database("db")
    assert not (tmp_path / "db.db").exists()


def test_tables_are_registered_and_read_back(catalog: MetastoreCatalog, fake: FakeMetastore,
                                             tmp_path: pathlib.Path) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    assert catalog.database_exists("db")  # made with the table, as the filesystem catalog does
    reg = fake.tables[("db", "t")]
    assert reg.location == f"{tmp_path}/db.db/t" and reg.schema == t.schema
    assert (tmp_path / "db.db" / "t" / "schema" / "schema-0").is_file()
    t.write(ROWS)
    assert catalog.get_table("db.t").read().sort_by("id").to_pylist() == ROWS.to_pylist()
    assert catalog.get_table("db.t$snapshots").read().num_rows == 1
    assert catalog.list_tables("db") == ["t"] and catalog.table_exists("db.t")
    with pytest.raises(TableAlreadyExistError):
        catalog.create_table("db.t", SCHEMA)
    assert catalog.create_table("db.t", SCHEMA, ignore_if_exists=True).schema == t.schema


def test_a_table_the_metastore_does_not_know_does_not_exist(catalog: MetastoreCatalog, tmp_path: pathlib.Path) -> None:
    catalog.create_database("db")
    Catalog(str(tmp_path)).create_table("db.files_only", SCHEMA)  # files, no registration
    assert catalog.list_tables("db") == [] and not catalog.table_exists("db.files_only")
    with pytest.raises(TableNotExistError, match="'db.files_only' does not exist in the jdbc catalog of"):
        catalog.get_table("db.files_only")


def test_a_registered_table_whose_files_are_missing_is_one_error(catalog: MetastoreCatalog,
                                                                 tmp_path: pathlib.Path) -> None:
    catalog.create_table("db.t", SCHEMA)
    for root, dirs, files in os.walk(tmp_path / "db.db" / "t", topdown=False):
        for f in files:
            os.remove(os.path.join(root, f))
        for d in dirs:
            os.rmdir(os.path.join(root, d))
    with pytest.raises(TableNotExistError, match=r"'db.t' is registered in the jdbc catalog of .*files are missing"):
        catalog.get_table("db.t")


def test_a_failed_registration_leaves_no_files(catalog: MetastoreCatalog, fake: FakeMetastore,
                                               tmp_path: pathlib.Path) -> None:
    catalog.create_database("db")
    fake.fail_register = True
    with pytest.raises(CatalogError, match="registration refused"):
        catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    assert not (tmp_path / "db.db" / "t").exists() and list((tmp_path / "db.db").iterdir()) == []
    fake.fail_register = False
    assert catalog.create_table("db.t", SCHEMA).schema.id == 0  # nothing left in the way


def test_drop_table_unregisters_then_deletes(catalog: MetastoreCatalog, fake: FakeMetastore,
                                             tmp_path: pathlib.Path) -> None:
    catalog.create_table("db.t", SCHEMA).write(ROWS)
    with pytest.raises(ReadOnlyTableError):
        catalog.drop_table("db.t$snapshots")
    catalog.drop_table("db.t")
    assert ("db", "t") not in fake.tables and not (tmp_path / "db.db" / "t").exists()
    with pytest.raises(TableNotExistError):
        catalog.drop_table("db.t")
    catalog.drop_table("db.t", ignore_if_not_exists=True)


def test_drop_database_cascades_to_tables_and_views(catalog: MetastoreCatalog, fake: FakeMetastore) -> None:
    catalog.create_table("db.t", SCHEMA)
    catalog.create_view("db.v", SCHEMA, "SELECT * FROM db.t")
    with pytest.raises(DatabaseNotEmptyError, match=r"\['t'\] and views \['v'\]"):
        catalog.drop_database("db")
    catalog.drop_database("db", cascade=True)
    assert fake.databases == {} and fake.tables == {} and fake.views == {}


def test_rename_moves_the_files_and_the_registration(catalog: MetastoreCatalog, fake: FakeMetastore,
                                                     tmp_path: pathlib.Path) -> None:
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"]).write(ROWS)
    catalog.rename_table("db.t", "db.u")
    assert catalog.list_tables("db") == ["u"] and fake.tables[("db", "u")].location == f"{tmp_path}/db.db/u"
    assert not (tmp_path / "db.db" / "t").exists()
    assert catalog.get_table("db.u").read().sort_by("id").to_pylist() == ROWS.to_pylist()
    catalog.create_database("other")
    with pytest.raises(UnsupportedError, match="within one database"):
        catalog.rename_table("db.u", "other.u")
    assert catalog.table_exists("db.u") and (tmp_path / "db.db" / "u").is_dir()


def test_a_refused_rename_moves_the_files_back(catalog: MetastoreCatalog, fake: FakeMetastore,
                                               tmp_path: pathlib.Path) -> None:
    catalog.create_table("db.t", SCHEMA)

    def refuse(db: str, table: str, new_table: str, new_location: str) -> None:
        raise CatalogError("fake metastore: rename refused")

    fake.rename_table = refuse  # type: ignore[method-assign]
    with pytest.raises(CatalogError, match="rename refused"):
        catalog.rename_table("db.t", "db.u")
    assert (tmp_path / "db.db" / "t" / "schema").is_dir() and not (tmp_path / "db.db" / "u").exists()
    assert catalog.get_table("db.t").schema.id == 0


def test_schema_changes_reach_the_metastore(catalog: MetastoreCatalog, fake: FakeMetastore) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    new = t.alter(AddColumn("w", pa.int32()), SetOption("snapshot.num-retained.max", "50"))
    assert fake.altered == [("db", "t", new)] and fake.tables[("db", "t")].schema == new
    catalog.get_table("db.t").copy({"scan.snapshot-id": "1"}).alter(SetOption("snapshot.num-retained.max", "60"))
    assert [s.id for _, _, s in fake.altered] == [1, 2]
    t.write(pa.table({"id": [1], "v": ["a"], "w": pa.array([1], pa.int32())}))
    t.create_tag("t1")
    branch = t.create_branch("b1", "t1")
    branch.alter(SetOption("snapshot.num-retained.max", "70"))  # a branch's schema: not the registered one
    assert [s.id for _, _, s in fake.altered] == [1, 2]


def test_views_round_trip(catalog: MetastoreCatalog, fake: FakeMetastore) -> None:
    catalog.create_database("db")
    catalog.create_view("db.v", SCHEMA, "SELECT id, v FROM db.t", dialects={"spark": "SELECT id, v FROM t"},
                        comment="c", options={"k": "1"})
    view = catalog.get_view("db.v")
    assert (view.database, view.name, view.query, dict(view.dialects), view.comment, dict(view.options)) == (
        "db", "v", "SELECT id, v FROM db.t", {"spark": "SELECT id, v FROM t"}, "c", {"k": "1"})
    assert [(f.id, f.name, str(f.type)) for f in view.fields] == [(0, "id", "BIGINT"), (1, "v", "STRING")]
    assert catalog.list_views("db") == ["v"]
    with pytest.raises(ViewAlreadyExistError):
        catalog.create_view("db.v", SCHEMA, "SELECT 1")
    catalog.create_view("db.v", SCHEMA, "SELECT 2", ignore_if_exists=True)
    assert catalog.get_view("db.v").query == "SELECT id, v FROM db.t"
    with pytest.raises(TableAlreadyExistError, match="is a view"):
        catalog.create_table("db.v", SCHEMA)
    catalog.create_table("db.t", SCHEMA)
    with pytest.raises(ViewAlreadyExistError, match="is a table"):
        catalog.create_view("db.t", SCHEMA, "SELECT 1")
    with pytest.raises(DatabaseNotExistError):
        catalog.create_view("nodb.v", SCHEMA, "SELECT 1")
    catalog.drop_view("db.v")
    assert catalog.list_views("db") == [] and fake.views == {}
    with pytest.raises(ViewNotExistError, match="'db.v' does not exist in the jdbc catalog"):
        catalog.get_view("db.v")
    with pytest.raises(ViewNotExistError):
        catalog.drop_view("db.v")
    catalog.drop_view("db.v", ignore_if_not_exists=True)
    with pytest.raises(CatalogError, match="names a system table or a branch: a view has neither"):
        catalog.get_view("db.v$snapshots")


def test_close_closes_the_metastore(catalog: MetastoreCatalog, fake: FakeMetastore) -> None:
    catalog.close()
    assert fake.closed


def test_partitions_are_registered_as_commits_add_them_and_drops_and_expiry_remove_them(
        catalog: MetastoreCatalog, fake: FakeMetastore) -> None:
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    t = catalog.create_table("db.p", schema, partition_keys=["dt"], options={"metastore.partitioned-table": "true"})
    t.write(pa.table({"dt": ["2020-01-01", "2020-01-02"], "id": [1, 2]}))
    t.write(pa.table({"dt": ["2020-01-01", "2999-01-01"], "id": [3, 4]}))
    registered = fake.tables[("db", "p")]
    assert sorted(p["dt"] for p in registered.partitions) == ["2020-01-01", "2020-01-02", "2999-01-01"]
    # a partition registered through this table costs no second call
    assert fake.partition_calls == [("add", [{"dt": "2020-01-01"}, {"dt": "2020-01-02"}]),
                                    ("add", [{"dt": "2999-01-01"}])]
    t.maintenance.drop_partitions([{"dt": "2020-01-02"}])
    assert fake.partition_calls[-1] == ("drop", [{"dt": "2020-01-02"}])
    expired = t.maintenance.expire_partitions(expiration_time="1 d", timestamp_formatter="yyyy-MM-dd")
    assert expired.partitions == [{"dt": "2020-01-01"}]
    assert fake.partition_calls[-1] == ("drop", [{"dt": "2020-01-01"}])
    assert [p["dt"] for p in registered.partitions] == ["2999-01-01"]
    t.write(pa.table({"dt": ["2020-01-02"], "id": [5]}))  # dropped, then written again: registered again
    assert fake.partition_calls[-1] == ("add", [{"dt": "2020-01-02"}])
    calls = len(fake.partition_calls)
    t.create_branch("b1").write(pa.table({"dt": ["2888-01-01"], "id": [6]}))  # the main branch's only
    # without the option, or on an unpartitioned table, the metastore is not told of partitions
    plain = catalog.create_table("db.q", schema, partition_keys=["dt"])
    plain.write(pa.table({"dt": ["2020-01-01"], "id": [1]}))
    plain.maintenance.drop_partitions([{"dt": "2020-01-01"}])
    assert len(fake.partition_calls) == calls and fake.tables[("db", "q")].partitions == []


def test_a_failed_partition_registration_leaves_the_commit_whole(catalog: MetastoreCatalog,
                                                                 fake: FakeMetastore) -> None:
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    t = catalog.create_table("db.p", schema, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1", "metastore.partitioned-table": "true"})
    fake.fail_partitions = True
    with pytest.raises(CatalogError, match="add_partitions refused"):
        t.write(pa.table({"dt": ["a"], "id": [1]}))
    # the snapshot is published and nothing of it was deleted (manifests, data files)
    assert catalog.get_table("db.p").read().to_pylist() == [{"dt": "a", "id": 1}]
    assert fake.tables[("db", "p")].partitions == []
    fake.fail_partitions = False
    t.write(pa.table({"dt": ["a"], "id": [2]}))  # the next commit into the partition registers it
    assert fake.tables[("db", "p")].partitions == [{"dt": "a"}]
    assert [s.id for s in t.snapshots()] == [1, 2]


def test_tag_to_partition_is_refused_by_a_hive_catalog_and_ignored_by_jdbc(tmp_path: pathlib.Path,
                                                                           catalog: MetastoreCatalog) -> None:
    tagged = {"metastore.tag-to-partition": "tag"}
    hive = MetastoreCatalog(str(tmp_path / "hive"), {"metastore": "hive"}, FakeMetastore())
    with pytest.raises(UnsupportedError, match=r"table db\.t: 'metastore.tag-to-partition' = 'tag' .*not implemented"):
        hive.create_table("db.t", SCHEMA, options=tagged)
    assert hive.list_databases() == [] and not (tmp_path / "hive").exists()  # refused before anything was written
    catalog.create_table("db.t", SCHEMA, options=tagged)  # Paimon's JdbcCatalog ignores it too
    opened_by_hive = MetastoreCatalog(str(tmp_path), {"metastore": "hive"}, catalog.metastore)
    with pytest.raises(UnsupportedError, match="metastore.tag-to-partition"):
        opened_by_hive.get_table("db.t")  # e.g. a Java table: its tags would not be registered
