"""A REST catalog's table calls that go through the server (ADR 0045): schema changes (``AlterTableRequest``),
rollback (``RollbackTableRequest``), branches (create, drop, rename, forward) and the partition statistics every
commit sends; against ``tests/rest_server.py`` on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.catalog import RestCatalog
from table_engine.catalog.rest.messages import Identifier
from table_engine.catalog.rest.table import change_json
from table_engine.errors import BranchNotExistError, SchemaError, TagNotExistError, UnsupportedError
from table_engine.schema_change import AddColumn, DropColumn, RemoveOption, RenameColumn, SetOption, UpdateColumnType
from tests.rest_server import FAST_RETRY, RestCatalogServer

pytestmark = pytest.mark.timeout(300)

SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string()), ("dt", pa.string())])


def _rows(ids: list[int], dt: str = "d1") -> pa.Table:
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[RestCatalogServer]:
    with RestCatalogServer(tmp_path / "warehouse") as server:
        yield server


@pytest.fixture
def catalog(fresh: RestCatalogServer) -> Iterator[RestCatalog]:
    options = fresh.options()
    with RestCatalog(fresh.warehouse, options, api=RestApi(options, retry=FAST_RETRY)) as c:
        yield c


def _posts(server: RestCatalogServer, suffix: str) -> list[str]:
    return [p for m, p in server.requests if m == "POST" and p.endswith(suffix)]


def test_every_engine_change_maps_onto_the_spec() -> None:
    from table_engine.format.schema_file import TableSchema
    from table_engine.schema_change import apply_changes
    from table_engine.types import fields_from_arrow_schema

    fields, _ = fields_from_arrow_schema(SCHEMA)
    base = TableSchema(id=0, fields=tuple(fields), partition_keys=(), primary_keys=(), options={},
                       highest_field_id=2)
    changes = [AddColumn("c", pa.int64(), "new"), RenameColumn("name", "label"), DropColumn("dt"),
               UpdateColumnType("id", pa.int64()), SetOption("snapshot.num-retained.min", "3"), RemoveOption("bucket")]
    after = apply_changes(base, changes, has_snapshots=False)
    assert [change_json(c, after) for c in changes] == [
        {"action": "addColumn", "fieldNames": ["c"], "dataType": "BIGINT", "comment": "new"},
        {"action": "renameColumn", "fieldNames": ["name"], "newName": "label"},
        {"action": "dropColumn", "fieldNames": ["dt"]},
        {"action": "updateColumnType", "fieldNames": ["id"], "newDataType": "BIGINT", "keepNullability": False},
        {"action": "setOption", "key": "snapshot.num-retained.min", "value": "3"},
        {"action": "removeOption", "key": "bucket"},
    ]
    with pytest.raises(UnsupportedError, match="object has no counterpart"):
        change_json(object(), after)  # type: ignore[arg-type]


def test_alter_goes_through_the_server_and_rows_before_and_after_read(
        catalog: RestCatalog, fresh: RestCatalogServer) -> None:
    table = catalog.create_table("db1.t", SCHEMA)
    table.write(_rows([1, 2]))
    new = table.alter(AddColumn("score", pa.float64()), UpdateColumnType("id", pa.int64()),
                      RenameColumn("name", "label"), SetOption("snapshot.num-retained.min", "3"))
    assert len(_posts(fresh, "/tables/t")) == 1  # one AlterTableRequest
    assert new.id == 1 and table.schema.id == 1
    assert [f.name for f in table.schema.fields] == ["id", "label", "dt", "score"]
    assert table.schema.options["snapshot.num-retained.min"] == "3"
    schema_file = json.loads(Path(table.path, "schema", "schema-1").read_text())  # the server wrote it
    assert [f["name"] for f in schema_file["fields"]] == ["id", "label", "dt", "score"]
    table.write(pa.table({"id": pa.array([3], pa.int64()), "label": ["n3"], "dt": ["d1"], "score": [0.5]}))
    reopened = catalog.get_table("db1.t")
    assert reopened.schema.id == 1
    rows = sorted(reopened.read().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "label": "n1", "dt": "d1", "score": None},
                    {"id": 2, "label": "n2", "dt": "d1", "score": None},
                    {"id": 3, "label": "n3", "dt": "d1", "score": 0.5}]
    table.alter(DropColumn("score"), RemoveOption("snapshot.num-retained.min"))
    assert [f.name for f in catalog.get_table("db1.t").schema.fields] == ["id", "label", "dt"]
    assert "snapshot.num-retained.min" not in catalog.get_table("db1.t").schema.options


def test_moves_comments_and_nullability_go_through_the_server(catalog: RestCatalog,
                                                              fresh: RestCatalogServer) -> None:
    from table_engine.schema_change import (
        Move,
        UpdateColumnComment,
        UpdateColumnNullability,
        UpdateColumnPosition,
        UpdateComment,
    )

    table = catalog.create_table("db1.t", pa.schema([("id", pa.int32()), pa.field("name", pa.string(), False),
                                                     ("dt", pa.string())]))
    table.write(pa.table({"id": pa.array([1], pa.int32()), "name": ["n1"], "dt": ["d1"]}))
    changes = [AddColumn("c", pa.int64(), "new", Move("AFTER", "id")), UpdateColumnPosition("dt", Move("FIRST")),
               UpdateColumnPosition("id", Move("BEFORE", "name")), UpdateColumnPosition("c", Move("LAST")),
               UpdateColumnComment("name", "the name"), UpdateColumnNullability("name", True),
               UpdateComment("through REST")]
    from table_engine.schema_change import apply_changes

    expected = apply_changes(table.schema, changes, has_snapshots=True)
    new = table.alter(*changes)
    assert len(_posts(fresh, "/tables/t")) == 1  # one AlterTableRequest, the server's schema as the engine's
    assert new.fields == expected.fields and new.comment == "through REST"
    assert [f.name for f in new.fields] == ["dt", "id", "name", "c"]
    assert catalog.get_table("db1.t").read().to_pylist() == [{"dt": "d1", "id": 1, "name": "n1", "c": None}]


def test_a_refused_change_sends_nothing(catalog: RestCatalog, fresh: RestCatalogServer) -> None:
    table = catalog.create_table("db1.t", SCHEMA)
    table.write(_rows([1]))
    fresh.requests.clear()
    with pytest.raises(SchemaError, match="only widening"):
        table.alter(UpdateColumnType("name", pa.int32()))
    with pytest.raises(SchemaError, match="does not exist"):
        table.alter(SetOption("snapshot.num-retained.min", "3"), DropColumn("nope"))
    assert _posts(fresh, "/tables/t") == []
    assert catalog.get_table("db1.t").schema.id == 0


def test_rollback_goes_through_the_server(catalog: RestCatalog, fresh: RestCatalogServer) -> None:
    table = catalog.create_table("db1.t", SCHEMA)
    for i in range(1, 5):
        table.write(_rows([i]))
    table.create_tag("t2", 2)
    result = table.rollback_to(3)
    assert len(_posts(fresh, "/rollback")) == 1
    assert result.snapshot_id == 3 and result.removed_snapshot_ids == [4]
    assert sorted(r["id"] for r in table.read().to_pylist()) == [1, 2, 3]
    table.write(_rows([5]))  # the server's latest moved back: the next commit's base is snapshot 3
    assert table.latest_snapshot_id() == 4
    assert sorted(r["id"] for r in catalog.get_table("db1.t").read().to_pylist()) == [1, 2, 3, 5]
    result = table.rollback_to("t2")
    assert result.snapshot_id == 2 and result.removed_snapshot_ids == [3, 4]
    assert sorted(r["id"] for r in table.read().to_pylist()) == [1, 2]
    with pytest.raises(TagNotExistError):
        table.rollback_to("missing")


def test_branches_go_through_the_server(catalog: RestCatalog, fresh: RestCatalogServer) -> None:
    table = catalog.create_table("db1.t", SCHEMA)
    table.write(_rows([1]))
    table.create_tag("t1", 1)
    branch = table.create_branch("b1", "t1")
    assert _posts(fresh, "/branches")
    assert catalog.api.list_branches(Identifier("db1", "t")) == ["b1"]
    branch.write(_rows([2]))
    assert table.fast_forward("b1") == 2
    assert _posts(fresh, "/branches/b1/forward")
    assert sorted(r["id"] for r in table.read().to_pylist()) == [1, 2]
    table.write(_rows([3]))  # the server's latest followed the forward: main commits on top of it
    assert sorted(r["id"] for r in catalog.get_table("db1.t").read().to_pylist()) == [1, 2, 3]
    table.rename_branch("b1", "b2")
    assert table.list_branches() == ["b2"]
    assert table.delete_branch("b2") is True
    assert table.delete_branch("b2", ignore_if_missing=True) is False
    with pytest.raises(BranchNotExistError):
        table.delete_branch("b2")
    with pytest.raises(UnsupportedError, match="no way to it"):
        # a branch table has no way to the server
        table.create_branch("b3").alter(SetOption("snapshot.num-retained.min", "3"))


def test_commits_send_partition_statistics(tmp_path: Path, fresh: RestCatalogServer, catalog: RestCatalog) -> None:
    table = catalog.create_table("db1.p", SCHEMA, partition_keys=["dt"])
    table.write(pa.concat_tables([_rows([1, 2], "d1"), _rows([3], "d2")]))
    table.write(_rows([4, 5, 6], "d1"))
    parts = {p.spec["dt"]: p for p in catalog.api.list_partitions(Identifier("db1", "p"))}
    assert {k: (p.record_count, p.file_count) for k, p in parts.items()} == {"d1": (5, 2), "d2": (1, 1)}
    on_disk = {d: sum(f.stat().st_size for f in Path(table.path, f"dt={d}").rglob("*") if f.is_file())
               for d in ("d1", "d2")}
    assert {k: p.file_size_in_bytes for k, p in parts.items()} == on_disk
    assert all(p.last_file_creation_time > 0 for p in parts.values())
