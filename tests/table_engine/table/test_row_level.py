"""``table.row_level``: DELETE, UPDATE and MERGE INTO against a model, over every merge engine and table kind, with
compactions between them; the refusals and bad input leave the table byte for byte; a compaction that lands
between a change's plan and its commit makes the change plan again."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import CommandError, CommitConflictError, DataError, SchemaError, UnsupportedError
from table_engine.format.snapshot import CommitKind
from table_engine.predicate import PredicateError
from table_engine.store.row_level import append as append_module
from table_engine.table import Table
from tests.budget import examples
from tests.table_engine.store.compaction.test_append_compact import table_bytes

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])
Row = dict[str, Any]

KINDS: dict[str, tuple[list[str], dict[str, str]]] = {
    "pk-deduplicate": (["id"], {"bucket": "2"}),
    "pk-sequence-field": (["id"], {"bucket": "1", "sequence.field": "n", "write-only": "true"}),
    "pk-dynamic-bucket": (["id"], {"bucket": "-1"}),
    "pk-partial-update": (["id"], {"bucket": "1", "merge-engine": "partial-update", "write-only": "true",
                                   "partial-update.remove-record-on-delete": "true"}),
    "pk-deletion-vectors": (["id"], {"bucket": "2", "deletion-vectors.enabled": "true"}),
    "append": ([], {"target-file-size": "1 kb"}),
    "append-deletion-vectors": ([], {"deletion-vectors.enabled": "true", "target-file-size": "1 kb"}),
    "append-fixed-bucket": ([], {"bucket": "2", "bucket-key": "id"}),
}


# ---- the model ---------------------------------------------------------------------------------------------------
class Model:
    """The rows a table of ``kind`` holds: by key for primary-key tables (merged as the engine merges), a list of
    rows for append tables."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.pk = bool(KINDS[kind][0])
        self.rows: dict[int, Row] | list[Row] = {} if self.pk else []
        self.tombstones: dict[int, Row] = {}
        """Key -> the row its ``-D`` record holds, until a full compaction drops it (these tables are write-only:
        no other compaction runs). With ``sequence.field`` it beats a later row of a lower ``n``; with
        partial-update a later row merges onto it (Paimon's ``PartialUpdateMergeFunction`` starts again from the
        deleted row's values)."""

    def all(self) -> list[Row]:
        rows = list(self.rows.values()) if isinstance(self.rows, dict) else list(self.rows)
        return sorted(rows, key=lambda r: (r["id"], r["n"], r["v"] or ""))

    def upsert(self, r: Row) -> None:
        assert isinstance(self.rows, dict)
        old = self.rows.get(r["id"])
        tomb = self.tombstones.pop(r["id"], None)
        if self.kind == "pk-sequence-field":
            if (old is not None and r["n"] < old["n"]) or (tomb is not None and r["n"] < tomb["n"]):
                if tomb is not None:
                    self.tombstones[r["id"]] = tomb
                return  # an older sequence loses, to a row or to a delete
        if old is None and tomb is not None and self.kind == "pk-partial-update":
            old = tomb
        if old is not None and self.kind == "pk-partial-update":
            r = {k: (old[k] if r[k] is None else r[k]) for k in r}
        self.rows[r["id"]] = dict(r)

    def write(self, rows: list[Row]) -> None:
        if isinstance(self.rows, list):
            self.rows.extend(dict(r) for r in rows)
            return
        for r in rows:
            self.upsert(r)

    def change(self, act: Callable[[Row], tuple[str, Row | None]]) -> None:
        """``act(row)`` -> ("keep" | "delete" | "update", new row) for every row."""
        if isinstance(self.rows, list):
            out: list[Row] = []
            for r in self.rows:
                what, new = act(r)
                if what == "keep":
                    out.append(r)
                elif what == "update":
                    assert new is not None
                    out.append(new)
            self.rows = out
            return
        for r in list(self.rows.values()):
            what, new = act(r)
            if what == "delete":
                del self.rows[r["id"]]
                if self.kind in ("pk-sequence-field", "pk-partial-update"):
                    self.tombstones[r["id"]] = dict(r)
            elif what == "update":
                assert new is not None
                self.upsert(new)


def holds(filter: list[tuple[str, str, Any]], r: Row) -> bool:
    for col, op, value in filter:
        x = r[col]
        y = r[value["column"]] if isinstance(value, dict) else value
        if op == "in":
            ok = x in y
        elif x is None or y is None:
            ok = False
        else:
            ok = {"<": x < y, ">": x > y, "=": x == y, ">=": x >= y}[op]
        if not ok:
            return False
    return True


# ---- the operations ------------------------------------------------------------------------------------------------
FILTERS = [
    [("n", "<", 20)],
    [("id", "in", [1, 3, 5, 7, 11])],
    [("v", "=", "a")],
    [("n", ">", {"column": "id"})],
    [("id", ">=", 10), ("n", "<", 60)],
]


def rows_strategy(unique: bool) -> st.SearchStrategy[list[Row]]:
    row = st.fixed_dictionaries({"id": st.integers(0, 15), "v": st.sampled_from(["a", "b", "c", None]),
                                 "n": st.integers(0, 99)})
    if unique:
        return st.lists(row, min_size=0, max_size=8, unique_by=lambda r: r["id"])
    return st.lists(row, min_size=1, max_size=12)


OPS = st.one_of(
    st.tuples(st.just("write"), rows_strategy(False)),
    st.tuples(st.just("delete"), st.sampled_from(range(len(FILTERS)))),
    st.tuples(st.just("update"), st.tuples(st.sampled_from(range(len(FILTERS))), st.sampled_from(["lit", "col"]))),
    st.tuples(st.just("merge"), st.tuples(rows_strategy(True), st.booleans())),
    st.tuples(st.just("compact"), st.just(None)),
)


def run_op(t: Table, model: Model, op: str, arg: Any) -> None:
    if op == "write":
        t.write(pa.Table.from_pylist(arg, schema=SCHEMA))
        model.write(arg)
    elif op == "delete":
        f = FILTERS[arg]
        t.row_level.delete(f)
        model.change(lambda r: ("delete", None) if holds(f, r) else ("keep", None))
    elif op == "update":
        f, how = FILTERS[arg[0]], arg[1]
        assignment: dict[str, Any] = {"v": "u"} if how == "lit" else {"n": {"column": "id"}}
        t.row_level.update(assignment, f)

        def act(r: Row) -> tuple[str, Row | None]:
            if not holds(f, r):
                return "keep", None
            return "update", {**r, "v": "u"} if how == "lit" else {**r, "n": r["id"]}

        model.change(act)
    elif op == "merge":
        source, by_source = arg
        spec: dict[str, Any] = {
            "on": ["id"],
            "when_matched": [{"action": "update", "condition": [["source.n", ">", {"column": "target.n"}]]},
                             {"action": "delete"}],
            "when_not_matched": [{"action": "insert", "condition": [["n", "<", 80]]}],
        }
        if by_source:
            spec["when_not_matched_by_source"] = [{"action": "delete", "condition": [["n", ">", 90]]}]
        t.row_level.merge(pa.Table.from_pylist(source, schema=SCHEMA), spec)
        by_id = {s["id"]: s for s in source}
        present = {r["id"] for r in model.all()}

        def merge_act(r: Row) -> tuple[str, Row | None]:
            s = by_id.get(r["id"])
            if s is None:
                return ("delete", None) if by_source and r["n"] > 90 else ("keep", None)
            return ("update", dict(s)) if s["n"] > r["n"] else ("delete", None)

        model.change(merge_act)
        model.write([s for s in source if s["id"] not in present and s["n"] < 80])
    else:
        t.maintenance.compact(full=True)
        model.tombstones.clear()


def read_rows(t: Table) -> list[Row]:
    return sorted(t.read().to_pylist(), key=lambda r: (r["id"], r["n"], r["v"] or ""))


@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, min_size=1, max_size=7))
def test_changes_read_as_the_model(tmp_path_factory: pytest.TempPathFactory, kind: str,
                                   ops: list[tuple[str, Any]]) -> None:
    pk, options = KINDS[kind]
    t = Catalog(str(tmp_path_factory.mktemp("wh"))).create_table("db.t", SCHEMA, primary_keys=pk, options=options)
    model = Model(kind)
    t.write(pa.Table.from_pylist([{"id": i, "v": "a" if i % 3 else None, "n": i * 7 % 100} for i in range(12)],
                                 schema=SCHEMA))
    model.write([{"id": i, "v": "a" if i % 3 else None, "n": i * 7 % 100} for i in range(12)])
    for i, (op, arg) in enumerate(ops):
        run_op(t, model, op, arg)
        assert read_rows(t) == model.all(), f"after op {i} {op} {arg}"


def test_aggregation_takes_deletes_with_remove_record_on_delete(catalog: Catalog) -> None:
    t = catalog.create_table("db.agg", SCHEMA, primary_keys=["id"], options={
        "bucket": "1", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
        "aggregation.remove-record-on-delete": "true"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [1, 2, 3]}, schema=SCHEMA))
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [10, 20]}, schema=SCHEMA))
    r = t.row_level.delete([("n", ">", 15)])
    assert r.deleted == 1 and r.snapshot_id is not None
    assert read_rows(t) == [{"id": 1, "v": "a", "n": 11}, {"id": 3, "v": "c", "n": 3}]
    assert t.row_level.update.__doc__  # (aggregation takes no UPDATE: see the refusals)


def test_partial_update_keeps_what_the_update_leaves_null(catalog: Catalog) -> None:
    t = catalog.create_table("db.pu", SCHEMA, primary_keys=["id"], options={
        "bucket": "1", "merge-engine": "partial-update"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=SCHEMA))
    t.row_level.update({"n": 9, "v": None}, [("id", "=", 1)])  # null is "no change" in partial-update, as Paimon
    assert read_rows(t) == [{"id": 1, "v": "a", "n": 9}, {"id": 2, "v": "b", "n": 2}]


# ---- commits -----------------------------------------------------------------------------------------------------
def test_append_changes_commit_one_overwrite_snapshot_and_pk_changes_one_append(catalog: Catalog) -> None:
    for name, pk, opts in [("a", [], {}), ("dv", [], {"deletion-vectors.enabled": "true"}),
                           ("pk", ["id"], {"bucket": "1"})]:
        t = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=pk, options=opts)
        t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [1, 2, 3]}, schema=SCHEMA))
        src = pa.table({"id": [2, 9], "v": ["x", "y"], "n": [5, 5]}, schema=SCHEMA)
        r = t.row_level.merge(src, {"on": ["id"], "when_matched": [{"action": "update"}],
                                    "when_not_matched": [{"action": "insert"}]},
                              properties={"airflow.task_id": "merge"})
        snap = t.snapshot(r.snapshot_id)  # type: ignore[arg-type]
        assert snap.commit_kind is (CommitKind.APPEND if pk else CommitKind.OVERWRITE), name
        assert snap.properties == {"airflow.task_id": "merge"}
        assert (r.updated, r.inserted) == (1, 1)
        assert t.latest_snapshot_id() == r.snapshot_id or pk  # a primary-key write may compact after
        if name == "dv":
            assert r.files_marked == 1 and r.files_rewritten == 0
        if name == "a":
            assert r.files_rewritten == 1 and r.files_marked == 0


def test_a_change_that_matches_nothing_commits_nothing(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, options={"deletion-vectors.enabled": "true"})
    t.write(pa.table({"id": [1], "v": ["a"], "n": [1]}, schema=SCHEMA))
    state = table_bytes(t.path)
    assert t.row_level.delete([("id", "=", 5)]).snapshot_id is None
    assert t.row_level.update({"v": "z"}, [("n", ">", 50)]).snapshot_id is None
    assert table_bytes(t.path) == state


@pytest.mark.parametrize("vectors", [False, True])
def test_a_compaction_between_plan_and_commit_makes_the_change_plan_again(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch, vectors: bool) -> None:
    t = catalog.create_table("db.t", SCHEMA, options={
        "write-only": "true", **({"deletion-vectors.enabled": "true"} if vectors else {})})
    for i in range(3):
        t.write(pa.table({"id": [i, i + 10], "v": ["a", "b"], "n": [i, i]}, schema=SCHEMA))
    real = append_module.change_append_table
    calls: list[int] = []

    def compact_after_planning(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:  # the first plan's files are compacted away before it commits
            assert t.maintenance.compact(full=True) is not None
        return out

    monkeypatch.setattr("table_engine.table.row_level.change_append_table", compact_after_planning)
    r = t.row_level.delete([("id", "in", [1, 11])])
    assert r.attempts == 2 and r.deleted == 2 and len(calls) == 2
    assert sorted(row["id"] for row in t.read().to_pylist()) == [0, 2, 10, 12]
    # the first attempt's files (a rewritten file, or a deletion-vector index) were deleted: nothing is orphaned
    orphans = t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000), dry_run=True)
    assert orphans.count == 0, orphans.paths
    assert [s.commit_kind for s in t.snapshots()][-2:] == [CommitKind.COMPACT, CommitKind.OVERWRITE]


# ---- refusals and bad input: nothing written -------------------------------------------------------------------------
def _pk(catalog: Catalog, name: str, **options: str) -> Table:
    t = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"], options={"bucket": "1", **options})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=SCHEMA))
    return t


REFUSALS: list[tuple[str, dict[str, str], str, Any, type[Exception], str]] = [
    ("agg-update", {"merge-engine": "aggregation"}, "update", ({"v": "x"}, []), UnsupportedError,
     "merge engine aggregation can not support update, currently only deduplicate, partial-update"),
    ("agg-delete", {"merge-engine": "aggregation"}, "delete", [], UnsupportedError,
     "aggregation.remove-record-on-delete"),
    ("pu-delete", {"merge-engine": "partial-update"}, "delete", [], UnsupportedError,
     "partial-update.remove-record-on-delete"),
    ("first-row-update", {"merge-engine": "first-row"}, "update", ({"v": "x"}, []), UnsupportedError,
     "merge engine first-row can not support update"),
    ("first-row-delete", {"merge-engine": "first-row"}, "delete", [], UnsupportedError, "first-row"),
    ("ignore-delete", {"ignore-delete": "true"}, "delete", [], UnsupportedError, "ignore-delete"),
    ("key-update", {}, "update", ({"id": 5}, []), SchemaError, "cannot update column 'id': it is a primary key"),
    ("unknown-column", {}, "delete", [("nope", "=", 1)], SchemaError, "unknown column 'nope'"),
    ("bad-value", {}, "update", ({"n": "many"}, []), SchemaError, "value 'many' does not fit column 'n'"),
    ("bad-op", {}, "delete", [("n", "~", 1)], PredicateError, "operator '~'"),
    ("bad-compare", {}, "delete", [("n", "=", "x")], PredicateError, "n"),
]


@pytest.mark.parametrize(("name", "options", "op", "arg", "error", "text"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_leave_the_table_byte_for_byte(catalog: Catalog, name: str, options: dict[str, str], op: str,
                                                arg: Any, error: type[Exception], text: str) -> None:
    t = _pk(catalog, name, **options)
    state = table_bytes(t.path)
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")) as info:
        if op == "delete":
            t.row_level.delete(arg)
        else:
            t.row_level.update(arg[0], arg[1])
    assert "\n" not in str(info.value)
    assert table_bytes(t.path) == state


def test_merge_errors_leave_the_table_byte_for_byte(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, options={"deletion-vectors.enabled": "true"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=SCHEMA))
    state = table_bytes(t.path)
    twice = pa.table({"id": [1, 1], "v": ["x", "y"], "n": [5, 6]}, schema=SCHEMA)
    with pytest.raises(DataError, match="matched by 2 source rows"):
        t.row_level.merge(twice, {"on": ["id"], "when_matched": [{"action": "update"}]})
    src = pa.table({"id": [1], "v": ["x"], "n": [5]}, schema=SCHEMA)
    bad: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"on": ["id"], "when_matched": [{"action": "update", "set": {"v": {"column": "v"}}}]}, SchemaError,
         "in both target and source"),
        ({"on": ["id"], "when_matched": [{"action": "insert"}]}, CommandError, "'insert' is not allowed here"),
        ({"on": ["id"]}, CommandError, "no clause"),
        ({"on": ["nope"], "when_matched": [{"action": "delete"}]}, SchemaError, "'nope' is not a column"),
        ({"on": ["id"], "when_matched": [{"action": "upsert"}]}, CommandError, "action 'upsert'"),
        ({"on": ["id"], "when_not_matched": [{"action": "insert", "set": {"zz": 1}}]}, SchemaError,
         "unknown column 'zz'"),
    ]
    for spec, error, text in bad:
        with pytest.raises(error, match=text):
            t.row_level.merge(src, spec)
    with pytest.raises(SchemaError, match="lacks"):
        t.row_level.merge(src.select(["id", "v"]), {"on": ["id"], "when_matched": [{"action": "update"}]})
    assert table_bytes(t.path) == state


def test_data_evolution_delete_uses_row_ids_and_refuses_update(catalog: Catalog) -> None:
    t = catalog.create_table("db.de", SCHEMA, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true", "deletion-vectors.enabled": "true"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [1, 2, 3]}, schema=SCHEMA))
    r = t.row_level.delete([("n", ">=", 2)])
    assert r.deleted == 2 and [row["id"] for row in t.read().to_pylist()] == [1]
    with pytest.raises(UnsupportedError, match="changed by row id"):
        t.row_level.update({"v": "x"})


def test_row_tracking_takes_deletes_in_deletion_vectors_only(catalog: Catalog) -> None:
    t = catalog.create_table("db.rt", SCHEMA, options={"row-tracking.enabled": "true"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=SCHEMA))
    state = table_bytes(t.path)
    with pytest.raises(UnsupportedError, match="row-tracking.enabled"):
        t.row_level.delete([("id", "=", 1)])
    assert table_bytes(t.path) == state
    dv = catalog.create_table("db.rtdv", SCHEMA, options={"row-tracking.enabled": "true",
                                                          "deletion-vectors.enabled": "true"})
    dv.write(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=SCHEMA))
    before = dv.read(columns=["id", "_ROW_ID"]).to_pylist()
    assert dv.row_level.delete([("id", "=", 1)]).deleted == 1
    assert dv.read(columns=["id", "_ROW_ID"]).to_pylist() == before[1:]


def test_a_compaction_that_read_a_file_before_a_delete_marked_it_conflicts(catalog: Catalog) -> None:
    """The simulation's finding (scenario append-row-level-dv): a compaction planned before a row-level change
    marked rows of a file it rewrites would bring them back; its commit now conflicts instead."""
    from table_engine.store.compaction.append_compact import AppendCompactionSettings, compact_append_bucket
    from table_engine.store.indexes.deletion_vectors import dv_index_files
    from table_engine.table.writing import committer

    t = catalog.create_table("db.t", SCHEMA, options={"deletion-vectors.enabled": "true", "write-only": "true"})
    for i in range(3):
        t.write(pa.table({"id": [i, i + 10], "v": ["a", "b"], "n": [i, i]}, schema=SCHEMA))
    (split,) = t.plan()
    base = t.latest_snapshot()
    message = compact_append_bucket(t.store, AppendCompactionSettings.of(t.store), split.partition, split.bucket,
                                    split.total_buckets, split.files,
                                    dv_index_files(t.store.index_entries(base)).get((split.partition, 0), []),
                                    full=True)
    assert message is not None
    assert t.row_level.delete([("id", "=", 1)]).files_marked == 1
    with pytest.raises(CommitConflictError, match="got a deletion vector after it was read"):
        committer(t).commit([message])
    assert sorted(r["id"] for r in t.read().to_pylist()) == [0, 2, 10, 11, 12]
