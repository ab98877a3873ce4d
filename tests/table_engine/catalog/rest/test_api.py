"""``RestApi`` against ``tests/rest_server.py``: every endpoint, paging followed to the end, errors mapped."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from table_engine.catalog.rest import messages as m
from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.messages import Identifier, PartitionStatistics, TableSchema, ViewSchema
from table_engine.errors import (
    DatabaseAlreadyExistError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    TableAlreadyExistError,
    TableNotExistError,
    TagNotExistError,
    ViewAlreadyExistError,
    ViewNotExistError,
)
from tests.rest_server import FAST_RETRY, RestCatalogServer

pytestmark = pytest.mark.timeout(120)

SCHEMA = TableSchema(fields=[{"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
                             {"id": 1, "name": "dt", "type": "STRING"}],
                     partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"}, comment="c")


def _db() -> str:
    return f"db_{uuid.uuid4().hex[:8]}"


def _snapshot(snapshot_id: int, schema_id: int = 0) -> dict[str, object]:
    return {"version": 3, "id": snapshot_id, "schemaId": schema_id, "uuid": str(uuid.uuid4()),
            "baseManifestList": f"manifest-list-b{snapshot_id}", "deltaManifestList": f"manifest-list-d{snapshot_id}",
            "commitUser": "u", "commitIdentifier": snapshot_id, "commitKind": "APPEND", "timeMillis": 1,
            "totalRecordCount": snapshot_id, "deltaRecordCount": 1}


def test_config_gives_prefix_and_merged_options(api: RestApi, server: RestCatalogServer) -> None:
    assert api.base == "/v1/paimon"
    assert api.options["warehouse"] == str(server.warehouse_dir)  # an override wins over the user's value
    assert api.options["prefix"] == "paimon"


def test_databases(api: RestApi) -> None:
    name = _db()
    api.create_database(name, {"k1": "v1", "k2": "v2"})
    with pytest.raises(DatabaseAlreadyExistError, match=name):
        api.create_database(name)
    db = api.get_database(name)
    assert (db.name, db.options) == (name, {"k1": "v1", "k2": "v2"})
    assert db.location and db.location.endswith(f"{name}.db") and db.id and "createdAt" in db.audit
    result = api.alter_database(name, removals=["k1", "nope"], updates={"k3": "v3"})
    assert (result.removed, result.updated, result.missing) == (["k1"], ["k3"], ["nope"])
    assert api.get_database(name).options == {"k2": "v2", "k3": "v3"}
    assert name in api.list_databases()
    api.drop_database(name)
    with pytest.raises(DatabaseNotExistError, match=name):
        api.get_database(name)
    with pytest.raises(DatabaseNotExistError):
        api.drop_database(name)


def test_paging_follows_next_page_token(server: RestCatalogServer) -> None:
    api = RestApi({**server.options(), "rest.page-size": "2"}, retry=FAST_RETRY)
    try:
        names = sorted(f"page_{i}_{uuid.uuid4().hex[:4]}" for i in range(5))
        for name in names:
            api.create_database(name)
        first = api.list_databases_paged(max_results=2)
        assert len(first.elements) == 2 and first.next_page_token == first.elements[-1]
        assert [n for n in api.list_databases() if n.startswith("page_")] == names
        gets = [p for meth, p in server.requests if meth == "GET" and p == "/v1/paimon/databases"]
        assert len(gets) >= 4  # at least ceil(6+/2) pages for the full listing plus the single page
        db = names[0]
        tables = [f"t{i}" for i in range(5)]
        for t in tables:
            api.create_table(Identifier(db, t), SCHEMA)
        assert api.list_tables(db) == tables
        page = api.list_tables_paged(db, max_results=3)
        assert page.elements == tables[:3] and page.next_page_token == "t2"
        assert api.list_tables_paged(db, 3, page.next_page_token).elements == tables[3:]
    finally:
        api.close()


def test_tables(api: RestApi, server: RestCatalogServer) -> None:
    db = _db()
    api.create_database(db)
    ident = Identifier(db, "t")
    api.create_table(ident, SCHEMA)
    with pytest.raises(TableAlreadyExistError, match=f"{db}.t"):
        api.create_table(ident, SCHEMA)
    table = api.get_table(ident)
    assert table.schema_id == 0 and not table.is_external and table.name == "t"
    assert table.schema == SCHEMA
    assert Path(table.path) == server.warehouse_dir / f"{db}.db" / "t"
    schema_file = json.loads((Path(table.path) / "schema" / "schema-0").read_text())
    assert schema_file["highestFieldId"] == 1 and schema_file["primaryKeys"] == ["id", "dt"]
    assert api.list_tables(db) == ["t"]

    api.alter_table(ident, [m.set_option("snapshot.num-retained.max", "5"), m.remove_option("bucket"),
                            m.add_column(["v"], "INT", comment="value"), m.rename_column(["v"], "w"),
                            m.update_column_comment(["w"], "renamed"), m.update_column_type(["w"], "BIGINT"),
                            m.update_comment("new")])
    altered = api.get_table(ident)
    assert altered.schema_id == 1
    assert altered.schema.options == {"snapshot.num-retained.max": "5"}
    assert altered.schema.fields[-1] == {"id": 2, "name": "w", "type": "BIGINT", "description": "renamed"}
    assert altered.schema.comment == "new"
    assert (Path(table.path) / "schema" / "schema-1").exists()
    api.alter_table(ident, [m.drop_column(["w"])])
    assert [f["name"] for f in api.get_table(ident).schema.fields] == ["id", "dt"]

    moved = Identifier(db, "t2")
    api.rename_table(ident, moved)
    with pytest.raises(TableNotExistError, match=f"{db}.t"):
        api.get_table(ident)
    assert Path(api.get_table(moved).path).name == "t2"
    api.create_table(ident, SCHEMA)
    with pytest.raises(TableAlreadyExistError):
        api.rename_table(ident, moved)
    with pytest.raises(DatabaseNotEmptyError):
        api.drop_database(db)
    api.drop_table(ident)
    api.drop_table(moved)
    with pytest.raises(TableNotExistError):
        api.drop_table(moved)
    with pytest.raises(DatabaseNotExistError):
        api.get_table(Identifier(_db(), "t"))


def test_commit_snapshot_partitions_token(api: RestApi, server: RestCatalogServer) -> None:
    db = _db()
    api.create_database(db)
    ident = Identifier(db, "t")
    api.create_table(ident, SCHEMA)
    table = api.get_table(ident)
    assert api.load_snapshot(ident) is None
    stats = [PartitionStatistics({"dt": "d1"}, 3, 300, 1, 1000, 2),
             PartitionStatistics({"dt": "d2"}, 1, 100, 1, 2000, 2)]
    s1 = _snapshot(1)
    assert api.commit_snapshot(ident, table.id, None, s1, stats)
    assert not api.commit_snapshot(ident, table.id, None, _snapshot(1), [])  # stale base: a conflict
    s2 = _snapshot(2)
    assert api.commit_snapshot(ident, table.id, str(s1["uuid"]), s2, stats[:1])
    latest = api.load_snapshot(ident)
    assert latest is not None and latest.snapshot == s2
    assert (latest.record_count, latest.file_count, latest.file_size_in_bytes) == (7, 3, 700)
    snap_dir = Path(table.path) / "snapshot"
    assert json.loads((snap_dir / "snapshot-2").read_text()) == s2
    assert (snap_dir / "LATEST").read_text() == "2" and (snap_dir / "EARLIEST").read_text() == "1"
    with pytest.raises(TableNotExistError):
        api.commit_snapshot(ident, "another-table-id", str(s2["uuid"]), _snapshot(3), [])

    parts = {tuple(p.spec.items()): p for p in api.list_partitions(ident)}
    assert parts[(("dt", "d1"),)].record_count == 6 and parts[(("dt", "d2"),)].file_size_in_bytes == 100

    token = api.load_table_token(ident)
    assert token.token and token.expires_at_millis > 0
    assert not any(v in repr(token) for v in token.token.values())


def test_tags_and_branches(api: RestApi) -> None:
    db = _db()
    api.create_database(db)
    ident = Identifier(db, "t")
    api.create_table(ident, SCHEMA)
    path = Path(api.get_table(ident).path)
    (path / "tag").mkdir()
    (path / "tag" / "tag-v1").write_text(json.dumps({**_snapshot(1), "tagCreateTime": 5}))
    (path / "branch" / "branch-b1").mkdir(parents=True)
    assert api.list_tags(ident) == ["v1"]
    tag = api.get_tag(ident, "v1")
    assert tag.name == "v1" and tag.snapshot["id"] == 1 and tag.create_time == 5
    with pytest.raises(TagNotExistError, match="v2"):
        api.get_tag(ident, "v2")
    assert api.list_branches(ident) == ["b1"]


def test_views(api: RestApi) -> None:
    db = _db()
    api.create_database(db)
    ident = Identifier(db, "v")
    schema = ViewSchema(fields=[{"id": 0, "name": "a", "type": "INT"}], query="SELECT a FROM t",
                        dialects={"spark": "SELECT a FROM t"}, comment="view", options={"k": "v"})
    api.create_view(ident, schema)
    with pytest.raises(ViewAlreadyExistError):
        api.create_view(ident, schema)
    assert api.get_view(ident).schema == schema
    assert api.list_views(db) == ["v"]
    api.rename_view(ident, Identifier(db, "w"))
    with pytest.raises(ViewNotExistError):
        api.get_view(ident)
    api.drop_view(Identifier(db, "w"))
    assert api.list_views(db) == []


def test_names_needing_encoding(api: RestApi) -> None:
    db = "db with space~x"
    api.create_database(db)
    api.create_table(Identifier(db, "t/1"), SCHEMA)
    assert api.get_database(db).name == db
    assert api.list_tables(db) == ["t/1"]
    assert api.get_table(Identifier(db, "t/1")).name == "t/1"
