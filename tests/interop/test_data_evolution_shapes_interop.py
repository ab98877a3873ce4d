"""Every shape of data-evolution write, by pypaimon 2.1.0 and by the engine on the same table, against a model keyed
by row id (issue 23): upserts by key (whole rows and some columns), updates of some columns by row id, writes of
whole rows and of some columns, deletes by row id and by predicate, and the engine's compaction.

pypaimon builds a base table with each of its shapes (module fixture, one subprocess call). Each hypothesis example
copies it, applies a random sequence of operations with the engine, then a random sequence with pypaimon in ONE
subprocess call (its read before, its operations, its read after, an append of one row and a read), and finally
reads and compacts with the engine. Every read, by either side, equals the model with the same ``_ROW_ID`` for every
row; pypaimon's append continues the row ids (the engine keeps ``nextRowId``).
"""

from __future__ import annotations

import pathlib
import shutil
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient
from tests.interop.data_evolution_model import RowIdModel

pytestmark = pytest.mark.interop

FIELDS = [["id", "int64"], ["x", "string"], ["y", "int32"]]
OPTIONS = {"deletion-vectors.enabled": "true"}
BASE_OPS: list[dict[str, Any]] = [  # pypaimon writes each of its shapes once
    {"op": "write", "rows": {"id": [0, 1, 2, 3], "x": ["a0", "a1", "a2", "a3"], "y": [0, 1, 2, 3]}},
    {"op": "write", "cols": ["id", "y"], "rows": {"id": [4, 5], "y": [4, 5]}},
    {"op": "update", "cols": ["x"], "rows": {"_ROW_ID": [1, 4], "x": ["b1", "b4"]}},
    {"op": "upsert", "keys": ["id"], "rows": {"id": [2, 6], "x": ["c2", "c6"], "y": [20, 60]}},
    {"op": "delete_rows", "row_ids": [3]},
    {"op": "delete_where", "where": ["y", "=", 5]},
]


def _in(p: str, op: dict[str, Any]) -> dict[str, Any]:
    """``op`` on the partitioned table: its rows in partition ``p`` (a write of some columns names it)."""
    out = dict(op)
    if "rows" in op and "_ROW_ID" not in op["rows"]:
        out["rows"] = {"p": [p] * len(op["rows"]["id"]), **op["rows"]}
        if "cols" in op and op["op"] == "write":
            out["cols"] = ["p", *op["cols"]]
    return out


# the partitioned table: a write per partition (a commit's row ids follow its files, which follow the partitions);
# a delete by a predicate on the partition column only makes pypaimon drop the partition's files
TABLES: dict[str, dict[str, Any]] = {
    "db.shapes": {"fields": FIELDS, "ops": BASE_OPS},
    "db.pshapes": {"fields": [["p", "string"], *FIELDS], "partition_keys": ["p"], "ops": [
        _in("a", BASE_OPS[0]), _in("b", BASE_OPS[1]), BASE_OPS[2],
        {**BASE_OPS[3], "rows": {"p": ["a", "b"], **BASE_OPS[3]["rows"]}}, BASE_OPS[4],
        {"op": "write", "rows": {"p": ["c"], "id": [7], "x": ["c7"], "y": [7]}},
        {"op": "delete_where", "where": ["p", "=", "c"]}, BASE_OPS[5]]},
}
ARROW = {"_ROW_ID": pa.int64(), "p": pa.string(), "id": pa.int64(), "x": pa.string(), "y": pa.int32()}


def _columns(name: str) -> list[str]:
    return [f for f, _ in TABLES[name]["fields"]]


def _base_model(name: str) -> RowIdModel:
    model = RowIdModel(_columns(name))
    for op in TABLES[name]["ops"]:
        model.apply(op)
    return model


@pytest.fixture(scope="module")
def base_warehouse(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("deshapes")
    pypaimon.run({"command": "data_evolution", "warehouse": str(root / "warehouse"), "out_dir": str(root),
                  "tables": [{"name": name, "options": OPTIONS, **spec} for name, spec in TABLES.items()]})
    return root / "warehouse"


@st.composite
def _op(draw: st.DrawFn, model: RowIdModel, engine: bool, tag: int) -> dict[str, Any]:
    """One operation valid on ``model`` (which it is applied to by the caller); ``tag`` makes values unique."""
    live = sorted(model.rows)
    parted = "p" in model.fields
    kinds = ["write", "write_some", "upsert"] + (["update", "delete_rows", "delete_where"] if live else [])
    kind = draw(st.sampled_from(kinds + (["compact"] if engine else [])))
    fresh = [model.next_row_id * 10 + 1000 * tag + i for i in range(draw(st.integers(1, 3)))]  # unused ids
    part = draw(st.sampled_from(["a", "b"]))  # new rows of an operation: in one partition

    def rows(ids: list[int], cols: list[str]) -> dict[str, list[Any]]:
        known = {r["id"]: r.get("p") for r in model.rows.values()}
        values = {"p": [known.get(i, part) for i in ids], "id": ids, "x": [f"t{tag}-{i}" for i in ids],
                  "y": [tag * 100 + i % 97 for i in ids]}
        return {c: values[c] for c in cols}

    some = [*(["p"] if parted else []), "id", *draw(st.lists(st.sampled_from(["x", "y"]), max_size=1))]
    if kind == "compact":
        return {"op": "compact"}
    if kind == "write":
        return {"op": "write", "rows": rows(fresh, model.fields)}
    if kind == "write_some":
        return {"op": "write", "cols": some, "rows": rows(fresh, some)}
    if kind == "update":
        rids = draw(st.lists(st.sampled_from(live), min_size=1, max_size=3, unique=True))
        col = draw(st.sampled_from(["x", "y"]))
        ids = [model.rows[r]["id"] for r in rids]
        return {"op": "update", "cols": [col], "rows": {"_ROW_ID": rids, col: rows(ids, [col])[col]}}
    if kind == "upsert":  # keys of live rows (in their partitions) and new keys; all columns or some
        hits = draw(st.lists(st.sampled_from(live), max_size=2, unique=True)) if live else []
        ids = [model.rows[r]["id"] for r in hits] + fresh[:draw(st.integers(0, 2))]
        whole = draw(st.booleans())
        data = rows(ids or fresh[:1], model.fields if whole else some)
        cols = [c for c in some if c not in ("p", "id")] or ["id"]
        if whole:
            cols = None if not parted and draw(st.booleans()) else draw(st.sampled_from([["x"], ["y"], ["x", "y"]]))
        return {"op": "upsert", "keys": ["id"], "rows": data, **({"cols": cols} if cols else {})}
    if kind == "delete_rows":
        return {"op": "delete_rows", "row_ids": draw(st.lists(st.sampled_from(live), min_size=1, max_size=2,
                                                              unique=True))}
    y = draw(st.sampled_from([r["y"] for r in model.rows.values() if r["y"] is not None] or [0]))
    wheres = [["y", "=", y], ["y", "<", y], ["y", ">=", y], *([["p", "=", part]] if parted else [])]
    return {"op": "delete_where", "where": draw(st.sampled_from(wheres))}


@st.composite
def sequences(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """(table, the engine's operations, pypaimon's operations), each valid on the model after the ones before."""
    name = draw(st.sampled_from(sorted(TABLES)))
    model = _base_model(name)
    out: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for side, engine in ((0, True), (1, False)):
        for _ in range(draw(st.integers(1, 4))):
            op = draw(_op(model, engine, len(out[0]) + len(out[1]) + 1))
            if op["op"] != "compact":
                model.apply(op)
            out[side].append(op)
    return name, *out


def _engine_apply(t: Any, op: dict[str, Any]) -> None:
    kind = op["op"]
    if kind == "compact":
        t.maintenance.compact(full=True)
        return
    if kind == "delete_rows":
        t.data_evolution.delete_by_row_id(op["row_ids"])
        return
    if kind == "delete_where":
        t.data_evolution.delete_by_predicate([tuple(op["where"])])
        return
    data = pa.table({c: pa.array(v, ARROW[c]) for c, v in op["rows"].items()})
    if kind == "write":
        t.write(data)
    elif kind == "update":
        t.data_evolution.update_by_row_id(data)
    else:
        t.data_evolution.upsert_by_key(data, op["keys"], op.get("cols"))


def _engine_rows(t: Any) -> list[dict[str, Any]]:
    return sorted(t.read(columns=["_ROW_ID", *t.schema.field_names()]).to_pylist(), key=lambda r: r["_ROW_ID"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(ops=sequences())
def test_random_sequences_by_both_equal_the_row_id_model(
        base_warehouse: pathlib.Path, pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory,
        ops: tuple[str, list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    name, engine_ops, pypaimon_ops = ops
    wh = tmp_path_factory.mktemp("seq") / "warehouse"
    shutil.copytree(base_warehouse, wh)
    model = _base_model(name)
    t = Catalog(str(wh)).get_table(name)
    assert _engine_rows(t) == model.with_row_ids()  # the engine reads each of pypaimon's shapes
    for op in engine_ops:
        _engine_apply(t, op)
        if op["op"] != "compact":
            model.apply(op)
        assert _engine_rows(t) == model.with_row_ids(), op
    after_engine = model.with_row_ids()
    for op in pypaimon_ops:
        model.apply(op)
    after_pypaimon = model.with_row_ids()
    last = {"op": "write", "rows": {"p": ["a"], "id": [-1], "x": ["last"], "y": [-1]}}
    last["rows"] = {c: last["rows"][c] for c in model.fields}
    model.apply(last)
    reads = pypaimon.run({"command": "de_sequence", "warehouse": str(wh), "table": name,
                          "ops": [{"op": "read"}, *pypaimon_ops, {"op": "read"}, last, {"op": "read"}]})["reads"]
    assert reads[0] == after_engine  # pypaimon reads each of the engine's shapes
    assert reads[1] == after_pypaimon
    assert reads[2] == model.with_row_ids()  # its append continues the row ids
    t = Catalog(str(wh)).get_table(name)
    assert _engine_rows(t) == model.with_row_ids()
    t.maintenance.compact(full=True)
    assert _engine_rows(t) == model.with_row_ids()
    snapshot = t.latest_snapshot()
    assert snapshot is not None and snapshot.next_row_id == model.next_row_id
