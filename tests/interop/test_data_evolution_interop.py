"""Data evolution (``data-evolution.enabled``) on tables pypaimon 2.1.0 wrote, each in several commits: updates of
some columns by row id, upserts by key (whole rows and some columns), writes of some columns, deletes by row id and
by predicate, a column added by a schema change, a partitioned table.

The engine's batch reads (whole rows, projections, filters, streaming batches, time travel) equal a dict model keyed
by row id, which pypaimon's own read (with ``_ROW_ID``) equals too. The engine's maintenance (compaction, expiry,
orphan cleanup) keeps rows and row ids for pypaimon, which then writes on; the engine's own writes (updates by row
id, writes of some columns, whole rows) read the same in pypaimon. Reads of changes (incremental, streaming) are
refused with the table unchanged. pypaimon makes every table in one subprocess call.
"""

from __future__ import annotations

import pathlib
import shutil
import time
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import TableEngineError, UnsupportedTableFeatureError
from table_engine.store.reading.raw_files import plan_raw
from tests.interop.conftest import PypaimonClient, read_ipc
from tests.interop.data_evolution_model import RowIdModel
from tests.table_engine.test_cli_errors import state

pytestmark = pytest.mark.interop

FIELDS = [["id", "int64"], ["x", "string"], ["y", "int32"], ["z", "float64"]]


def _rows(ids: range | list[int], tag: str = "a") -> dict[str, list[Any]]:
    ids = list(ids)
    return {"id": ids, "x": [f"{tag}{i}" for i in ids], "y": list(ids), "z": [i / 2 for i in ids]}


TABLES: dict[str, dict[str, Any]] = {
    "db.updates": {"ops": [
        {"op": "write", "rows": _rows(range(10))},
        {"op": "write", "rows": _rows(range(10, 15))},
        {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [0, 2, 11], "y": [100, 102, 111]}},
        {"op": "update", "cols": ["y", "z"], "rows": {"_ROW_ID": [2, 3], "y": [202, 203], "z": [2.5, 3.5]}},
        {"op": "update", "cols": ["x"], "rows": {"_ROW_ID": [14, 9], "x": ["u14", "u9"]}},
        {"op": "write", "rows": _rows(range(15, 18))},
        {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [2, 16], "y": [302, 316]}},
    ]},
    # the issue's shape: 240 rows in three files, then upserts of every key (each an overlay of whole rows)
    "db.upserts": {"ops": [
        {"op": "write", "rows": _rows(range(80))},
        {"op": "write", "rows": _rows(range(80, 160))},
        {"op": "write", "rows": _rows(range(160, 240))},
        {"op": "upsert", "keys": ["id"], "rows": _rows(range(240), "u")},
        {"op": "upsert", "keys": ["id"], "rows": _rows(list(range(0, 240, 7)) + [240, 241], "v")},
        {"op": "upsert", "keys": ["id"], "cols": ["y"], "rows": {"id": [1, 100], "x": ["-", "-"], "y": [-1, -100],
                                                                 "z": [0.0, 0.0]}},
    ]},
    "db.partial": {"ops": [
        {"op": "write", "cols": ["id", "x"], "rows": {"id": [0, 1, 2, 3, 4], "x": ["p0", "p1", "p2", "p3", "p4"]}},
        {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [0, 1, 2, 3, 4], "y": [10, 11, 12, 13, 14]}},
        {"op": "write", "rows": _rows(range(5, 8))},
        {"op": "write", "cols": ["id", "z"], "rows": {"id": [8, 9], "z": [8.5, 9.5]}},
        {"op": "update", "cols": ["z"], "rows": {"_ROW_ID": [1, 6, 9], "z": [-1.0, -6.0, -9.0]}},
    ]},
    "db.deletes": {"options": {"deletion-vectors.enabled": "true"}, "ops": [
        {"op": "write", "rows": _rows(range(10))},
        {"op": "write", "rows": _rows(range(10, 20))},
        {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [1, 2, 15], "y": [101, 102, 115]}},
        {"op": "delete_rows", "row_ids": [2, 3, 12]},
        {"op": "delete_where", "where": ["id", ">=", 18]},
        {"op": "update", "cols": ["z"], "rows": {"_ROW_ID": [0, 15], "z": [-0.5, -15.5]}},
        {"op": "write", "rows": _rows(range(20, 22))},
        {"op": "delete_where", "where": ["y", "=", 101]},
    ]},
    "db.evolved": {"ops": [
        {"op": "write", "rows": _rows(range(5))},
        {"op": "add_column", "column": "w", "type": "BIGINT"},
        {"op": "update", "cols": ["w"], "rows": {"_ROW_ID": [1, 3], "w": [71, 73]}},
        {"op": "update", "cols": ["x"], "rows": {"_ROW_ID": [3], "x": ["e3"]}},
    ]},
    "db.partitioned": {"fields": [["id", "int64"], ["p", "string"], ["x", "string"], ["y", "int32"]],
                       "partition_keys": ["p"], "ops": [
        # one partition per write: the row ids of a commit follow its files, which follow the partitions
        {"op": "write", "rows": {"id": [0, 1], "p": ["b", "b"], "x": ["q0", "q1"], "y": [0, 1]}},
        {"op": "write", "rows": {"id": [2, 3], "p": ["a", "a"], "x": ["q2", "q3"], "y": [2, 3]}},
        {"op": "write", "rows": {"id": [4, 5], "p": ["a", "a"], "x": ["q4", "q5"], "y": [4, 5]}},
        {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [1, 2, 5], "y": [21, 22, 25]}},
        {"op": "update", "cols": ["x", "y"], "rows": {"_ROW_ID": [3], "x": ["r3"], "y": [33]}},
    ]},
}


def _model(spec: dict[str, Any]) -> RowIdModel:
    model = RowIdModel([f for f, _ in spec.get("fields", FIELDS)])
    for op in spec["ops"]:
        model.apply(op)
    return model


@pytest.fixture(scope="module")
def de_warehouse(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path,
                                                                                               dict[str, pa.Table]]:
    root = tmp_path_factory.mktemp("dataevo")
    wh = root / "warehouse"
    tables = [{"name": name, "fields": spec.get("fields", FIELDS), **spec} for name, spec in TABLES.items()]
    result = pypaimon.run({"command": "data_evolution", "warehouse": str(wh), "out_dir": str(root),
                           "tables": tables})
    return wh, {name: read_ipc(pathlib.Path(r["out"])) for name, r in result.items()}


def _sorted(t: pa.Table, key: str = "id") -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: r[key])


@pytest.mark.parametrize("name", sorted(TABLES))
def test_pypaimon_reads_the_model(de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]], name: str) -> None:
    """The model keyed by row id is pypaimon's own reading of the table (what the engine must match)."""
    model = _model(TABLES[name])
    got = de_warehouse[1][name].drop_columns(["_SEQUENCE_NUMBER"])
    assert sorted(got.to_pylist(), key=lambda r: r["_ROW_ID"]) == model.with_row_ids()


@pytest.mark.parametrize("name", sorted(TABLES))
def test_engine_batch_reads_equal_the_model(de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]],
                                            name: str) -> None:
    wh, _ = de_warehouse
    before = state(str(wh))
    model = _model(TABLES[name])
    t = Catalog(str(wh)).get_table(name)
    assert _sorted(t.read()) == model.by("id")
    # row ids and sequence numbers as pypaimon reads them
    theirs = de_warehouse[1][name]
    assert _sorted(t.read(columns=theirs.column_names), "_ROW_ID") == _sorted(theirs, "_ROW_ID")
    assert _sorted(t.read(columns=["_ROW_ID"], filter=[("_ROW_ID", ">=", 3)]), "_ROW_ID") == [
        {"_ROW_ID": r["_ROW_ID"]} for r in model.with_row_ids() if r["_ROW_ID"] >= 3]
    for col in model.fields:  # projections read only the files that hold the column
        cols = ["id", col] if col != "id" else ["id"]
        assert _sorted(t.read(columns=cols)) == model.by("id", cols), col
    assert _sorted(pa.Table.from_batches(list(t.to_batches(batch_size=7)))) == model.by("id")
    # a filter on an updated column: no file is pruned by the statistics of a column file
    want = [r for r in model.by("id") if r["y"] is not None and r["y"] > 100]
    assert _sorted(t.read(filter=[("y", ">", 100)])) == want
    # the Spark native reader takes no file of a data-evolution table as it is
    assert plan_raw(t.plan(), t.schema).raw == []
    assert state(str(wh)) == before


def test_time_travel_reads_each_snapshot_as_it_was(de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]]) -> None:
    wh, _ = de_warehouse
    spec = TABLES["db.updates"]
    t = Catalog(str(wh)).get_table("db.updates")
    model = RowIdModel([f for f, _ in FIELDS])
    for snapshot_id, op in enumerate(spec["ops"], start=1):
        model.apply(op)
        assert _sorted(t.read(snapshot_id=snapshot_id)) == model.by("id"), snapshot_id


def test_the_issue_upsert_table_reads_240_rows_not_660(
        de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]]) -> None:
    t = Catalog(str(de_warehouse[0])).get_table("db.upserts")
    assert t.read(columns=["id"]).num_rows == 242
    assert t.read(filter=[("id", "=", 7)]).to_pylist() == [{"id": 7, "x": "v7", "y": 7, "z": 3.5}]


# what pypaimon does after the engine's maintenance: appends and updates of rows the compaction rewrote
MORE: dict[str, list[dict[str, Any]]] = {
    name: [{"op": "write", "cols": ["id", "p"] if name == "db.partitioned" else ["id"],
            "rows": {"id": [1000, 1001], **({"p": ["a", "a"]} if name == "db.partitioned" else {})}},
           {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [0], "y": [7777]}}]
    for name in TABLES
}


def test_maintenance_keeps_rows_and_row_ids_and_pypaimon_goes_on(
        de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]], pypaimon: PypaimonClient,
        tmp_path: pathlib.Path) -> None:
    """Compaction merges each row range's column files into one file, row ids kept (deletion vectors moved with
    them); expiry then removes the column files and orphan cleanup finds nothing; pypaimon reads the same rows and row
    ids, appends rows after the last row id and updates compacted rows; the engine reads that too."""
    wh = tmp_path / "warehouse"
    shutil.copytree(de_warehouse[0], wh)
    cat = Catalog(str(wh))
    for name, spec in TABLES.items():
        t = cat.get_table(name)
        before_files = sum(len(s.files) for s in t.plan())
        assert t.maintenance.compact(full=True) is not None, name
        theirs = de_warehouse[1][name]
        assert _sorted(t.read(columns=theirs.column_names[:-1]), "_ROW_ID") == _sorted(
            theirs.drop_columns(["_SEQUENCE_NUMBER"]), "_ROW_ID"), name
        files = [f for s in t.plan() for f in s.files]
        assert len(files) < before_files and all(f.write_cols is None for f in files), name
        assert len({f.first_row_id for f in files}) == len(files), name  # one file per row range
        t.expire_snapshots(retain_max=1, retain_min=1, older_than_millis=2**62)
        assert t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000)).count == 0, name
        assert _sorted(t.read()) == _model(spec).by("id"), name
    result = pypaimon.run({"command": "data_evolution", "warehouse": str(wh), "out_dir": str(tmp_path), "tables": [
        {"name": name, "fields": spec.get("fields", FIELDS), "create": False, "ops": MORE[name]}
        for name, spec in TABLES.items()]})
    for name, spec in TABLES.items():
        model = _model(spec)
        for op in MORE[name]:
            model.apply(op)
        theirs = read_ipc(pathlib.Path(result[name]["out"]))
        assert sorted(theirs.drop_columns(["_SEQUENCE_NUMBER"]).to_pylist(), key=lambda r: r["_ROW_ID"]) == \
            model.with_row_ids(), name
        t = Catalog(str(wh)).get_table(name)
        assert _sorted(t.read(columns=theirs.column_names), "_ROW_ID") == _sorted(theirs, "_ROW_ID"), name


def test_reads_of_changes_are_refused(de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]],
                                              tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(de_warehouse[0], wh)
    before = state(str(wh))
    t = Catalog(str(wh)).get_table("db.updates")
    with pytest.raises(UnsupportedTableFeatureError, match="uses data-evolution.enabled .* for streaming reads"):
        t.new_stream_scan()
    with pytest.raises(UnsupportedTableFeatureError, match="for incremental reads: the engine can only batch-read"):
        t.copy({"incremental-between": "1,3"}).read()
    with pytest.raises(UnsupportedTableFeatureError, match="for changelog consumers"):
        t.changelog_consumer()
    assert state(str(wh)) == before


def _engine_apply(t: Any, op: dict[str, Any]) -> None:
    """One driver operation done by the engine (writes and updates by row id)."""
    schema = t.arrow_schema
    names = list(op["rows"])
    fields = [pa.field("_ROW_ID", pa.int64()) if n == "_ROW_ID" else schema.field(n) for n in names]
    data = pa.table({n: pa.array(op["rows"][n], f.type) for n, f in zip(names, fields, strict=True)})
    if op["op"] == "update":
        assert t.data_evolution.update_by_row_id(data) is not None
    else:
        assert op["op"] == "write"
        assert t.write(data) is not None


# the engine's writes on each table: updates by row id (of rows pypaimon updated too), some columns, whole rows
ENGINE: dict[str, list[dict[str, Any]]] = {
    name: [{"op": "update", "rows": {"_ROW_ID": [0, 3], ("x" if name != "db.evolved" else "w"): (
               ["e0", "e3"] if name != "db.evolved" else [500, 503])}},
           {"op": "write", "rows": {"id": [2000], **({"p": ["b"]} if name == "db.partitioned" else {}),
                                    "y": [2000]}},
           {"op": "write", "rows": {"id": [2001], "x": ["w"], "y": [1], **(
               {"p": ["a"]} if name == "db.partitioned" else {"z": [0.5]} if name != "db.evolved" else
               {"z": [0.5], "w": [9]})}},
           {"op": "update", "rows": {"_ROW_ID": [1, 0], "y": [-7, -8]}}]
    for name in TABLES
}


def test_engine_writes_read_the_same_in_pypaimon(de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]],
                                                 pypaimon: PypaimonClient, tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(de_warehouse[0], wh)
    models = {}
    for name, spec in TABLES.items():
        model = _model(spec)
        t = Catalog(str(wh)).get_table(name)
        for op in ENGINE[name]:
            _engine_apply(t, op)
            model.apply(op)
        assert _sorted(t.read()) == model.by("id"), name
        models[name] = model
        if name == "db.updates":
            t.maintenance.compact(full=True)
    result = pypaimon.run({"command": "data_evolution", "warehouse": str(wh), "out_dir": str(tmp_path),
                           "names": list(TABLES)})
    for name, model in models.items():
        theirs = read_ipc(pathlib.Path(result[name]["out"]))
        assert sorted(theirs.drop_columns(["_SEQUENCE_NUMBER"]).to_pylist(), key=lambda r: r["_ROW_ID"]) == \
            model.with_row_ids(), name


def test_bad_updates_change_nothing(de_warehouse: tuple[pathlib.Path, dict[str, pa.Table]],
                                    tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(de_warehouse[0], wh)
    before = state(str(wh))
    t = Catalog(str(wh)).get_table("db.deletes")
    ids = pa.array([1, 999], pa.int64())
    for data, match in [
        (pa.table({"_ROW_ID": ids, "y": pa.array([1, 2], pa.int32())}), "row id 999 is not a row of the table"),
        (pa.table({"_ROW_ID": pa.array([1, 1], pa.int64()), "y": pa.array([1, 2], pa.int32())}), "repeated _ROW_ID"),
        (pa.table({"_ROW_ID": pa.array([1], pa.int64()), "nope": [1]}), "unknown column\\(s\\) \\['nope'\\]"),
        (pa.table({"y": pa.array([1], pa.int32())}), "has no _ROW_ID column"),
    ]:
        with pytest.raises(TableEngineError, match=match):
            t.data_evolution.update_by_row_id(data)
    assert state(str(wh)) == before
