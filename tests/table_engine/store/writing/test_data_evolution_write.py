"""Random sequences of the engine's operations on a data-evolution table (writes of whole rows and of some columns,
updates of some columns by row id, compactions, expiry) against a dict model keyed by row id: every read (rows with
``_ROW_ID``, projections) equals the model, and row ids never change or repeat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.catalog import Catalog
from tests.interop.data_evolution_model import RowIdModel

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string())])
OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


@st.composite
def operations(draw: st.DrawFn) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    rows = 0
    next_id = 0
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["write", "write_some", "update", "compact"] if rows else ["write", "write_some"]))
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
        else:
            ops.append({"op": "compact"})
    return ops


def _apply(t: Any, op: dict[str, Any]) -> None:
    if op["op"] == "compact":
        t.compact(full=True)
        t.expire_snapshots(retain_max=1, retain_min=1)
        return
    names = list(op["rows"])
    types = {"_ROW_ID": pa.int64(), **{f.name: f.type for f in SCHEMA}}
    data = pa.table({n: pa.array(op["rows"][n], types[n]) for n in names})
    if op["op"] == "update":
        t.update_by_row_id(data)
    else:
        t.write(data)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations())
def test_random_operations_equal_the_row_id_model(tmp_path_factory: pytest.TempPathFactory,
                                                  ops: list[dict[str, Any]]) -> None:
    cat = Catalog(str(tmp_path_factory.mktemp("dew")))
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, options=OPTIONS)
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
        t.update_by_row_id(pa.table({"_ROW_ID": pa.array([0], pa.int64()), "p": ["z"]}))
    t.update_by_row_id(pa.table({"_ROW_ID": pa.array([1], pa.int64()), "v": pa.array([7], pa.int64())}))
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
        other.update_by_row_id(pa.table({"_ROW_ID": pa.array([1], pa.int64()), "a": pa.array([11], pa.int64())}))
        return out

    monkeypatch.setattr(data_evolution_write, "read_row_id_group", racing)
    with pytest.raises(CommitConflictError):
        t.update_by_row_id(pa.table({"_ROW_ID": pa.array([0], pa.int64()), "a": pa.array([1], pa.int64())}))
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
