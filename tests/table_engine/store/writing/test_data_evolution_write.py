"""Random sequences of the engine's operations on a data-evolution table (writes of whole rows and of some columns,
updates of some columns by row id, upserts by key, deletes by row id and by predicate with deletion vectors,
compactions, expiry) against a dict model keyed by row id: every read (rows with ``_ROW_ID``, projections) equals the
model, and row ids never change or repeat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.catalog import Catalog
from tests.budget import examples
from tests.interop.data_evolution_model import RowIdModel

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string())])
OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
DV = {"deletion-vectors.enabled": "true"}


@st.composite
def operations(draw: st.DrawFn, deletes: bool = False) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    rows = 0
    next_id = 0
    more = ["upsert", "delete_rows", "delete_where"] if deletes else []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["write", "write_some", "update", "compact", *more] if rows else
                                    ["write", "write_some"]))
        if kind in ("write", "write_some"):
            n = draw(st.integers(1, 5))
            ids = list(range(next_id, next_id + n))
            next_id += n
            cols = ["id", *draw(st.lists(st.sampled_from(["a", "b"]), unique=True))] if kind == "write_some" else \
                ["id", "a", "b"]
            data = {"id": ids, "a": [i * 10 for i in ids], "b": [f"b{i}" for i in ids]}
            ops.append({"op": "write", "rows": {c: data[c] for c in cols}})
            rows += n
        elif kind == "update":
            rids = draw(st.lists(st.integers(0, rows - 1), min_size=1, max_size=4, unique=True))
            col = draw(st.sampled_from(["a", "b"]))
            tag = len(ops)
            values = [tag * 1000 + r for r in rids] if col == "a" else [f"u{tag}-{r}" for r in rids]
            ops.append({"op": "update", "rows": {"_ROW_ID": rids, col: values}})
        elif kind == "upsert":  # ids of rows written before (maybe deleted) and new ones, some columns or all
            ids = draw(st.lists(st.integers(0, next_id + 2), min_size=1, max_size=4, unique=True))
            cols = ["id", *draw(st.lists(st.sampled_from(["a", "b"]), min_size=1, unique=True))]
            tag = len(ops)
            data = {"id": ids, "a": [tag * 1000 + i for i in ids], "b": [f"v{tag}-{i}" for i in ids]}
            rows += len([i for i in ids if i >= next_id])
            next_id = max(next_id, max(ids) + 1)
            ops.append({"op": "upsert", "keys": ["id"], "cols": cols[1:] if draw(st.booleans()) else None,
                        "rows": {c: data[c] for c in cols}})
        elif kind == "delete_rows":
            ops.append({"op": "delete_rows", "row_ids": draw(st.lists(st.integers(0, rows - 1), min_size=1,
                                                                      max_size=3))})
        elif kind == "delete_where":
            ops.append({"op": "delete_where", "where": ["a", draw(st.sampled_from(["<", ">=", "="])),
                                                        draw(st.integers(0, 60))]})
        else:
            ops.append({"op": "compact"})
    return ops


def _apply(t: Any, op: dict[str, Any]) -> None:
    if op["op"] == "compact":
        t.maintenance.compact(full=True)
        t.expire_snapshots(retain_max=1, retain_min=1)
        return
    if op["op"] == "delete_rows":
        t.data_evolution.delete_by_row_id(op["row_ids"])
        return
    if op["op"] == "delete_where":
        t.data_evolution.delete_by_predicate([tuple(op["where"])])
        return
    names = list(op["rows"])
    types = {"_ROW_ID": pa.int64(), **{f.name: f.type for f in SCHEMA}}
    data = pa.table({n: pa.array(op["rows"][n], types[n]) for n in names})
    if op["op"] == "update":
        t.data_evolution.update_by_row_id(data)
    elif op["op"] == "upsert":
        t.data_evolution.upsert_by_key(data, op["keys"], op["cols"])
    else:
        t.write(data)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations())
def test_random_operations_equal_the_row_id_model(tmp_path_factory: pytest.TempPathFactory,
                                                  ops: list[dict[str, Any]]) -> None:
    _check_operations(tmp_path_factory, ops, OPTIONS)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations(deletes=True))
def test_random_operations_with_upserts_and_deletes_equal_the_row_id_model(
        tmp_path_factory: pytest.TempPathFactory, ops: list[dict[str, Any]]) -> None:
    _check_operations(tmp_path_factory, ops, {**OPTIONS, **DV})


def _check_operations(tmp_path_factory: pytest.TempPathFactory, ops: list[dict[str, Any]],
                      options: dict[str, str]) -> None:
    cat = Catalog(str(tmp_path_factory.mktemp("dew")))
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, options=options)
    model = RowIdModel(SCHEMA.names)
    for op in ops:
        _apply(t, op)
        if op["op"] != "compact":
            model.apply(op)
        got = t.read(columns=["_ROW_ID", *SCHEMA.names]).to_pylist()
        assert sorted(got, key=lambda r: r["_ROW_ID"]) == model.with_row_ids(), op
    for col in ("a", "b"):
        got = t.read(columns=["_ROW_ID", col]).to_pylist()
        assert sorted(got, key=lambda r: r["_ROW_ID"]) == [{"_ROW_ID": r["_ROW_ID"], col: r[col]}
                                                          for r in model.with_row_ids()]
    snap = t.latest_snapshot()
    assert snap is not None and snap.next_row_id == model.next_row_id


def test_a_write_of_some_columns_needs_the_partition_columns(tmp_path: Path) -> None:
    from table_engine.errors import SchemaError

    cat = Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.p", pa.schema([("p", pa.string()), ("id", pa.int64()), ("v", pa.int64())]),
                         partition_keys=["p"], options=OPTIONS)
    with pytest.raises(SchemaError, match=r"the partition column\(s\) \['p'\] are missing"):
        t.write(pa.table({"id": pa.array([1], pa.int64())}))
    assert t.latest_snapshot() is None
    t.write(pa.table({"p": ["x", "y"], "id": pa.array([1, 2], pa.int64())}))
    with pytest.raises(SchemaError, match="partition column"):
        t.data_evolution.update_by_row_id(pa.table({"_ROW_ID": pa.array([0], pa.int64()), "p": ["z"]}))
    t.data_evolution.update_by_row_id(pa.table({"_ROW_ID": pa.array([1], pa.int64()), "v": pa.array([7], pa.int64())}))
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == [{"p": "x", "id": 1, "v": None},
                                                                   {"p": "y", "id": 2, "v": 7}]


def test_data_evolution_needs_row_tracking(tmp_path: Path) -> None:
    from table_engine.errors import OptionError

    cat = Catalog(str(tmp_path))
    cat.create_database("db")
    with pytest.raises(OptionError, match="data-evolution.enabled = true needs row-tracking.enabled = true"):
        cat.create_table("db.t", SCHEMA, options={"data-evolution.enabled": "true"})


def test_a_concurrent_commit_fails_an_update_instead_of_being_overwritten(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Writer A reads the range to update; writer B updates the same rows and commits first: A's commit fails (its
    file would carry B's rows with A's stale values) and B's values stay."""
    from table_engine.errors import CommitConflictError
    from table_engine.store.writing import data_evolution_write

    cat = Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, options=OPTIONS)
    t.write(pa.table({"id": pa.array([0, 1], pa.int64()), "a": pa.array([0, 10], pa.int64()), "b": ["x", "y"]}))
    other = cat.get_table("db.t")
    original = data_evolution_write.read_row_id_group

    def racing(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(data_evolution_write, "read_row_id_group", original)
        out = original(*args, **kwargs)  # A has read the range; now B commits
        other.data_evolution.update_by_row_id(
            pa.table({"_ROW_ID": pa.array([1], pa.int64()), "a": pa.array([11], pa.int64())}))
        return out

    monkeypatch.setattr(data_evolution_write, "read_row_id_group", racing)
    with pytest.raises(CommitConflictError):
        t.data_evolution.update_by_row_id(
            pa.table({"_ROW_ID": pa.array([0], pa.int64()), "a": pa.array([1], pa.int64())}))
    assert sorted(t.read(columns=["id", "a"]).to_pylist(), key=lambda r: r["id"]) == [{"id": 0, "a": 0},
                                                                                     {"id": 1, "a": 11}]


def test_on_s3(s3_catalog: Catalog) -> None:
    """The same operations on the session's S3 server (moto): column files, compaction, expiry."""
    s3_catalog.create_database("db")
    t = s3_catalog.create_table("db.t", SCHEMA, options=OPTIONS)
    model = RowIdModel(SCHEMA.names)
    ops: list[dict[str, Any]] = [
        {"op": "write", "rows": {"id": [0, 1, 2], "a": [0, 10, 20], "b": ["x", "y", "z"]}},
        {"op": "update", "rows": {"_ROW_ID": [2, 0], "b": ["u2", "u0"]}},
        {"op": "write", "rows": {"id": [3, 4]}},
        {"op": "update", "rows": {"_ROW_ID": [4], "a": [44]}},
    ]
    for op in ops:
        _apply(t, op)
        model.apply(op)
    _apply(t, {"op": "compact"})
    assert sorted(t.read(columns=["_ROW_ID", *SCHEMA.names]).to_pylist(), key=lambda r: r["_ROW_ID"]) == \
        model.with_row_ids()
    assert all(f.write_cols is None for s in t.plan() for f in s.files)


def test_bad_upserts_and_deletes_change_nothing(tmp_path: Path) -> None:
    from table_engine.errors import TableEngineError
    from tests.table_engine.test_cli_errors import state

    cat = Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, options={**OPTIONS, **DV})
    plain = cat.create_table("db.nodv", SCHEMA, options=OPTIONS)
    rows = pa.table({"id": pa.array([0, 1], pa.int64()), "a": pa.array([0, 10], pa.int64()), "b": ["x", "y"]})
    t.write(rows)
    plain.write(rows)
    before = state(str(tmp_path))
    ids = pa.array([5], pa.int64())
    de = t.data_evolution
    for call, match in [
        (lambda: t.data_evolution.delete_by_row_id([1, 7]), "row id 7 is not a row of the table"),
        (lambda: t.data_evolution.delete_by_row_id(pa.array([1, None], pa.int64())), "_ROW_ID is null in 1 row"),
        (lambda: plain.data_evolution.delete_by_row_id([0]), "needs deletion-vectors.enabled = true"),
        (lambda: plain.data_evolution.delete_by_predicate([("a", ">", 1)]), "needs deletion-vectors.enabled = true"),
        (lambda: t.data_evolution.delete_by_predicate([("nope", ">", 1)]), "nope"),
        (lambda: de.upsert_by_key(pa.table({"a": ids}), ["id"]), r"key column\(s\) \['id'\] are missing"),
        (lambda: de.upsert_by_key(pa.table({"id": ids}), ["nope"]), r"unknown key column\(s\) \['nope'\]"),
        (lambda: de.upsert_by_key(pa.table({"id": ids, "a": ids}), ["id"], ["b"]), r"\['b'\] to set are not in"),
        (lambda: de.upsert_by_key(pa.table({"id": ids, "c": ids}), ["id"]), r"unknown column\(s\) \['c'\]"),
    ]:
        with pytest.raises(TableEngineError, match=match):
            call()
    assert state(str(tmp_path)) == before
    assert t.data_evolution.delete_by_row_id([]) is None
    assert t.data_evolution.delete_by_predicate([("a", ">", 99)]) is None
    t.data_evolution.delete_by_row_id([1, 1])
    assert t.data_evolution.delete_by_row_id([1]) is None  # deleted already: nothing to commit
    assert t.read(columns=["_ROW_ID", "id"]).to_pylist() == [{"_ROW_ID": 0, "id": 0}]


def test_upsert_matches_null_keys_keeps_the_last_of_repeated_keys_and_writes_in_one_commit(tmp_path: Path) -> None:
    cat = Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, options=OPTIONS)
    t.write(pa.table({"id": pa.array([0, None], pa.int64()), "a": pa.array([0, 1], pa.int64()), "b": ["x", "y"]}))
    sid = t.data_evolution.upsert_by_key(pa.table({"id": pa.array([None, 5, 0, 5], pa.int64()),
                                    "a": pa.array([10, 50, 100, 55], pa.int64())}), ["id"])
    assert sid == 2 and t.latest_snapshot().id == 2  # type: ignore[union-attr]
    assert sorted(t.read(columns=["_ROW_ID", *SCHEMA.names]).to_pylist(), key=lambda r: r["_ROW_ID"]) == [
        {"_ROW_ID": 0, "id": 0, "a": 100, "b": "x"}, {"_ROW_ID": 1, "id": None, "a": 10, "b": "y"},
        {"_ROW_ID": 2, "id": 5, "a": 55, "b": None}]


def test_a_concurrent_commit_fails_a_delete_instead_of_being_lost(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Writer A reads the deletion vectors; writer B deletes another row of the range and commits first: A's commit
    fails (its index file would drop B's delete) and B's delete stays."""
    from table_engine.errors import CommitConflictError
    from table_engine.store.writing import data_evolution_delete

    cat = Catalog(str(tmp_path))
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, options={**OPTIONS, **DV})
    t.write(pa.table({"id": pa.array([0, 1, 2], pa.int64()), "a": pa.array([0, 10, 20], pa.int64()),
                      "b": ["x", "y", "z"]}))
    other = cat.get_table("db.t")
    original = data_evolution_delete.row_ranges

    def racing(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(data_evolution_delete, "row_ranges", original)
        out = original(*args, **kwargs)  # A has planned; now B commits
        other.data_evolution.delete_by_row_id([2])
        return out

    monkeypatch.setattr(data_evolution_delete, "row_ranges", racing)
    with pytest.raises(CommitConflictError):
        t.data_evolution.delete_by_row_id([0])
    assert t.read(columns=["id"]).to_pylist() == [{"id": 0}, {"id": 1}]
    t.data_evolution.delete_by_row_id([0])  # a retry goes through
    assert t.read(columns=["id"]).to_pylist() == [{"id": 1}]
