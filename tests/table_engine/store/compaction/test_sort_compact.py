"""Sort compaction of append tables (``compact`` with ``order_strategy`` and ``order_by``) through the public API:
the same rows afterwards, each partition's files in key order and pruning filters on the ``order_by`` columns, a
COMPACT snapshot that keeps a concurrent append, deletion vectors applied, partition selection, and refusals that
leave the table byte-for-byte as it was; a property test against a multiset model."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import CommandError, SchemaError, UnsupportedError
from table_engine.format.snapshot import CommitKind
from table_engine.store.compaction import sort_compact
from table_engine.table import Table
from tests.budget import examples
from tests.table_engine.store.compaction.test_append_compact import delete_rows, dv_entries, table_bytes

SCHEMA = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("s", pa.string()), ("dt", pa.string())])


def rows(n: int, seed: int, dt: str = "d1") -> pa.Table:
    rng = random.Random(seed)
    return pa.table({"a": [rng.randrange(1000) for _ in range(n)], "b": [rng.randrange(1000) for _ in range(n)],
                     "s": [f"s{rng.randrange(50)}" for _ in range(n)], "dt": [dt] * n}, schema=SCHEMA)


def table(catalog: Catalog, **options: str) -> Table:
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"],
                                options={"bucket": "-1", "target-file-size": "4 kb", "write-only": "true", **options})


def multiset(t: Table, **kw: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.values()) for r in t.read(**kw).to_pylist())


def files_read(t: Table, flt: Any) -> int:
    return sum(len(s.files) for s in t.plan(filter=flt))


@pytest.mark.parametrize("strategy", ["order", "zorder", "hilbert"])
def test_a_sort_compaction_keeps_the_rows_and_prunes(catalog: Catalog, strategy: str) -> None:
    t = table(catalog)
    for seed in range(6):
        t.write(rows(1500, seed))
    before = multiset(t)
    unsorted = files_read(t, [("a", "<", 100)])
    total = files_read(t, None)
    assert unsorted == total  # every appended file spans the whole range
    sid = t.maintenance.compact(order_strategy=strategy, order_by=["a", "b"])
    assert sid is not None and t.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert multiset(t) == before
    after_total = files_read(t, None)
    assert after_total > 1, "the output was not rolled at target-file-size"
    pruned = files_read(t, [("a", "<", 100)])
    assert pruned <= after_total * (0.25 if strategy != "order" else 0.15), (strategy, pruned, after_total)


def test_order_lays_the_files_out_in_key_order(catalog: Catalog) -> None:
    t = table(catalog)
    for seed in range(4):
        t.write(rows(1000, seed))
    t.maintenance.compact(order_strategy="order", order_by="a")
    assert len(t.plan()[0].files) > 1
    read_back = t.read().column("a").to_pylist()  # files in sequence order, each sorted: one ascending run
    assert read_back == sorted(read_back) and len(read_back) == 4000


def test_only_the_selected_partitions_are_sorted(catalog: Catalog) -> None:
    t = table(catalog)
    for seed in range(3):
        t.write(rows(500, seed, "d1"))
        t.write(rows(500, seed + 10, "d2"))
    d2_files = {f.file_name for s in t.plan() if s.partition_values[0] == "d2" for f in s.files}
    before = multiset(t)
    t.maintenance.compact(order_strategy="zorder", order_by="a,b", partitions=[{"dt": "d1"}])
    assert multiset(t) == before
    now = {s.partition_values[0]: {f.file_name for f in s.files} for s in t.plan()}
    assert now["d2"] == d2_files


def test_deleted_rows_stay_deleted_and_their_vectors_go(catalog: Catalog) -> None:
    t = table(catalog, **{"deletion-vectors.enabled": "true"})
    for seed in range(3):
        t.write(rows(800, seed))
    first = sorted((f for s in t.plan() for f in s.files), key=lambda f: f.min_sequence_number)[0]
    delete_rows(t, {first.file_name: [0, 1, 2]})
    before = multiset(t)
    assert dv_entries(t)
    t.maintenance.compact(order_strategy="hilbert", order_by=["b", "a"])
    assert multiset(t) == before
    assert dv_entries(t) == []


def test_an_append_committed_while_the_sort_runs_survives(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    t = table(catalog)
    for seed in range(3):
        t.write(rows(500, seed))
    other = catalog.get_table("db.t")
    original = sort_compact.sort_partition
    late = rows(7, 99)

    def with_a_concurrent_append(*args: Any, **kw: Any) -> Any:
        other.write(late)  # another writer commits to the partition being sorted
        return original(*args, **kw)

    monkeypatch.setattr("table_engine.store.compaction.compact.sort_partition", with_a_concurrent_append)
    expected = multiset(t) + Counter(tuple(r.values()) for r in late.to_pylist())
    t.maintenance.compact(order_strategy="order", order_by="a")
    assert multiset(t) == expected  # Paimon's OVERWRITE would have dropped the 7 rows


def test_a_concurrent_compaction_of_the_same_files_makes_the_sort_plan_again(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    t = table(catalog, **{"compaction.min.file-num": "2"})
    for seed in range(4):
        t.write(rows(300, seed))
    other = catalog.get_table("db.t")
    original = sort_compact.sort_partition
    calls: list[int] = []

    def racing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            assert other.maintenance.compact(full=True) is not None  # rewrites the files being sorted
        return original(*args, **kw)

    monkeypatch.setattr("table_engine.store.compaction.compact.sort_partition", racing)
    before = multiset(t)
    t.maintenance.compact(order_strategy="zorder", order_by="a,b")
    assert len(calls) == 2 and multiset(t) == before
    assert t.latest_snapshot().commit_kind == CommitKind.COMPACT


@pytest.mark.parametrize(("options", "kw", "error", "match"), [
    ({}, {"order_strategy": "zorder", "order_by": "a,dt"}, CommandError, "order_by should not contain partition cols"),
    ({}, {"order_strategy": "zorder", "order_by": "nope"}, SchemaError, "Can't find column 'nope'"),
    ({}, {"order_strategy": "none", "order_by": "a"}, CommandError, 'order_strategy "none" cannot work'),
    ({}, {"order_strategy": "zorder"}, CommandError, "needs order_by columns"),
    ({}, {"order_by": "a"}, CommandError, "order_by needs order_strategy"),
    ({}, {"order_strategy": "bogus", "order_by": "a"}, CommandError, "order_strategy 'bogus' is not one of"),
    ({}, {"order_strategy": "hilbert", "order_by": "a"}, CommandError, "Hilbert sort needs at least two columns"),
    ({}, {"order_strategy": "order", "order_by": "a", "idle_partitions_older_than_ms": 1}, CommandError,
     "sort compact do not support 'partition_idle_time'"),
    ({"bucket": "2", "bucket-key": "a"}, {"order_strategy": "order", "order_by": "a"}, UnsupportedError,
     "only append tables with bucket = -1 can be sorted"),
    ({"row-tracking.enabled": "true"}, {"order_strategy": "order", "order_by": "a"}, UnsupportedError,
     "row-tracking.enabled"),
])
def test_refusals_name_the_problem_and_change_nothing(catalog: Catalog, options: dict[str, str], kw: dict[str, Any],
                                                      error: type[Exception], match: str) -> None:
    t = table(catalog, **options)
    t.write(rows(100, 1))
    t.write(rows(100, 2))
    state = table_bytes(t.path)
    with pytest.raises(error, match=match):
        t.maintenance.compact(**kw)
    assert table_bytes(t.path) == state


def test_a_primary_key_table_is_refused(catalog: Catalog) -> None:
    t = catalog.create_table("db.pk", SCHEMA, primary_keys=["a", "dt"], partition_keys=["dt"],
                             options={"bucket": "1"})
    t.write(rows(10, 1).group_by(["a", "dt"]).aggregate([("b", "max"), ("s", "max")])
            .rename_columns(["a", "dt", "b", "s"]).select(["a", "b", "s", "dt"]).cast(SCHEMA))
    state = table_bytes(t.path)
    with pytest.raises(UnsupportedError, match="only append tables with bucket = -1"):
        t.maintenance.compact(order_strategy="order", order_by="b")
    assert table_bytes(t.path) == state


# ---- a property test against a multiset model --------------------------------------------------------------------
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.one_of(st.tuples(st.just("append"), st.integers(1, 60), st.sampled_from(["d1", "d2"])),
                              st.tuples(st.just("sort"), st.sampled_from(["order", "zorder", "hilbert"]),
                                        st.sampled_from([["a"], ["b", "a"], ["s", "a"], ["a", "b", "s"]])),
                              st.tuples(st.just("compact"), st.booleans(), st.just(None))),
                    min_size=1, max_size=10),
       seed=st.integers(0, 10_000))
def test_appends_sorts_and_compactions_read_as_the_model(tmp_path_factory: pytest.TempPathFactory,
                                                         ops: list[tuple[str, Any, Any]], seed: int) -> None:
    catalog = Catalog(str(tmp_path_factory.mktemp("wh")))
    t = table(catalog, **{"target-file-size": "1 kb", "compaction.min.file-num": "2"})
    model: Counter[tuple[Any, ...]] = Counter()
    for i, (op, x, y) in enumerate(ops):
        if op == "append":
            batch = rows(x, seed + i, y)
            t.write(batch)
            model += Counter(tuple(r.values()) for r in batch.to_pylist())
        elif op == "sort":
            if x == "hilbert" and len(y) < 2:
                continue
            t.maintenance.compact(order_strategy=x, order_by=y)
        else:
            t.maintenance.compact(full=x)
        assert multiset(t) == model


@pytest.mark.parametrize("strategy", ["order", "zorder"])
def test_a_partition_larger_than_the_buffer_is_sorted_in_spilled_runs(catalog: Catalog, strategy: str,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    t = table(catalog, **{"write-buffer-size": "64 kb", "target-file-size": "16 kb"})
    for seed in range(8):
        t.write(rows(2000, seed))
    before = multiset(t)
    with caplog.at_level("INFO", logger="table_engine"):
        t.maintenance.compact(order_strategy=strategy, order_by="a,b")
    assert "runs spilled" in caplog.text
    assert multiset(t) == before
    if strategy == "order":
        a = t.read().column("a").to_pylist()
        assert a == sorted(a)
    sizes = sorted(f.file_size for s in t.plan() for f in s.files)
    assert len(sizes) > 3 and sizes[1] > sizes[-1] // 2  # files near target-file-size: one smaller at most


def test_the_planner_sorts_a_partition_whose_files_overlap_on_the_clustering_column(catalog: Catalog) -> None:
    """An append table that declares clustering.columns (Paimon's write-time range partitioning, without incremental
    clustering) gets a sort compaction from the planner once a filter on the first column reads
    maintenance.sort.files-per-value files (default 4) per value; the sort runs through ``maintain``."""
    from table_engine.catalog import Catalog as _Catalog
    from table_engine.ops import Maintain
    from table_engine.ops.maintain import maintain, plan_table

    t = table(catalog, **{"clustering.columns": "a,b", "target-file-size": "8 kb"})
    for seed in range(3):
        t.write(rows(600, seed))
    assert not [a for a in plan_table(t).actions if a.order_strategy]  # 3 files per value < 4
    t.write(rows(600, 3))
    sort = next(a for a in plan_table(t).actions if a.order_strategy)
    assert (sort.kind, sort.order_strategy, sort.order_by, sort.partitions) == ("compact", "zorder", ["a", "b"],
                                                                                 ["dt=d1"])
    assert "a filter on a reads 4 files or more on average (worst 4.9; maintenance.sort.files-per-value)" in sort.reason
    before = multiset(t)
    assert isinstance(catalog, _Catalog)
    result = maintain(Maintain(warehouse=catalog.warehouse, table="db.t"), catalog)
    assert any(r["command"].get("order_strategy") == "zorder" for r in result["results"])
    t = catalog.get_table("db.t")
    assert multiset(t) == before and t.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert t.maintenance.overlap()[0].mean_files_per_value < 4
    assert not [a for a in plan_table(t).actions if a.order_strategy]
    off = catalog.get_table("db.t").copy({"maintenance.sort.files-per-value": "0"})
    for seed in range(5):
        off.write(rows(300, 10 + seed))
    assert not [a for a in plan_table(off).actions if a.order_strategy]


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.one_of(st.tuples(st.just("append"), st.integers(1, 40), st.sampled_from(["d1", "d2"])),
                              st.tuples(st.just("sort"), st.sampled_from(["order", "zorder", "hilbert"]),
                                        st.sampled_from([["b", "a"], ["s", "a"], ["a", "b", "s"]])),
                              st.tuples(st.just("compact"), st.booleans(), st.just(None)),
                              st.tuples(st.just("delete"), st.integers(0, 7), st.just(None))),
                    min_size=1, max_size=10),
       tracking=st.booleans(), seed=st.integers(0, 10_000))
def test_appends_deletes_sorts_and_compactions_keep_rows_and_row_ids(tmp_path_factory: pytest.TempPathFactory,
                                                                     ops: list[tuple[str, Any, Any]], tracking: bool,
                                                                     seed: int) -> None:
    """Deletion vectors applied; with row tracking, a sort is refused (ADR 0049) and changes nothing, and every live
    row keeps the row id it got when it was appended through compactions and deletes."""
    catalog = Catalog(str(tmp_path_factory.mktemp("wh")))
    t = table(catalog, **{"target-file-size": "1 kb", "compaction.min.file-num": "2",
                          "deletion-vectors.enabled": "true", **({"row-tracking.enabled": "true"} if tracking else {})})
    model: Counter[tuple[Any, ...]] = Counter()
    ids: dict[int, tuple[Any, ...]] = {}
    deleted: dict[str, int] = {}

    def row_ids() -> dict[int, tuple[Any, ...]]:
        got = catalog.get_table("db.t$row_tracking").read(columns=[*SCHEMA.names, "_ROW_ID"]).to_pylist()
        return {r.pop("_ROW_ID"): tuple(r.values()) for r in got}

    for i, (op, x, y) in enumerate(ops):
        if op == "append":
            batch = rows(x, seed + i, y)
            t.write(batch)
            model += Counter(tuple(r.values()) for r in batch.to_pylist())
            if tracking:
                ids.update({k: v for k, v in row_ids().items() if k not in ids})
        elif op == "sort":
            if tracking:
                before = table_bytes(t.path)
                with pytest.raises(UnsupportedError, match="row-tracking.enabled"):
                    t.maintenance.compact(order_strategy=x, order_by=y)
                assert table_bytes(t.path) == before
            else:
                t.maintenance.compact(order_strategy=x, order_by=y)
        elif op == "compact":
            t.maintenance.compact(full=x)
        else:  # a deletion vector marks the next row of a file: what it removed is taken from the reads around it
            files = [f for s in t.plan() for f in s.files]
            if not files:
                continue
            f = files[x % len(files)]
            position = deleted.get(f.file_name, 0)
            if position >= f.row_count:
                continue
            deleted[f.file_name] = position + 1
            before_rows = multiset(t)
            delete_rows(t, {f.file_name: list(range(position + 1))})
            model -= before_rows - multiset(t)
        assert multiset(t) == model
        if tracking:
            live = row_ids()
            assert all(ids[k] == v for k, v in live.items()) and Counter(live.values()) == model
