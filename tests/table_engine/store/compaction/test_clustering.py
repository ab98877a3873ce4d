"""Incremental clustering (``clustering.incremental``) through the public API: Paimon's own test scenario (levels 5,
then 4 for the new files only, then 5 again after a full clustering), writers that never compact such a table,
deletion vectors, the create-time rules, and a property test against a multiset model."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.core_enums import OrderType
from table_engine.errors import OptionError, SchemaError, UnsupportedError
from table_engine.format.snapshot import CommitKind
from table_engine.lsm.compaction.universal import UniversalCompaction
from table_engine.schema_change import SetOption
from table_engine.store.compaction.clustering import clustering_runs, pick_clustering
from table_engine.table import Table
from tests.budget import examples
from tests.table_engine.lsm._files import meta
from tests.table_engine.store.compaction.test_append_compact import delete_rows, dv_entries

SCHEMA = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("c", pa.string()), ("dt", pa.string())])
CLUSTERED = {"bucket": "-1", "clustering.incremental": "true", "clustering.columns": "a,b"}


def table(catalog: Catalog, **options: str) -> Table:
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options={**CLUSTERED, **options})


def batch(pairs: list[tuple[int, int]], dt: str = "d1") -> pa.Table:
    return pa.table({"a": [a for a, _ in pairs], "b": [b for _, b in pairs], "c": [f"{a}-{b}" for a, b in pairs],
                     "dt": [dt] * len(pairs)}, schema=SCHEMA)


def levels(t: Table) -> list[int]:
    return sorted(f.level for s in t.plan() for f in s.files)


def multiset(t: Table) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.values()) for r in t.read().to_pylist())


def test_paimons_clustering_scenario(catalog: Catalog) -> None:
    """CompactProcedureTestBase's incremental clustering test: num-levels 6, trigger 2, zorder(a, b)."""
    t = table(catalog, **{"num-levels": "6", "num-sorted-run.compaction-trigger": "2"})
    # the first data is much larger than what comes later (Paimon's test has 9 rows: with files this small the
    # sizes of Parquet footers would decide the picking instead)
    t.write(batch([(a, b) for a in range(3) for b in range(3)] + [(100 + i, i) for i in range(3000)]))
    t.write(batch([(3, 3)]))
    assert levels(t) == [0, 0], "writers of a clustering table must not compact"
    t.maintenance.compact()
    assert levels(t) == [5] and t.latest_snapshot().commit_kind == CommitKind.COMPACT
    first = [(r["a"], r["b"]) for r in t.read().to_pylist()]
    assert first[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]  # z-order
    new = [(0, 3), (1, 3), (2, 3), (3, 0), (3, 1), (3, 2)]
    t.write(batch(new[:3]))
    t.write(batch(new[3:]))
    t.maintenance.compact()
    assert levels(t) == [4, 5]  # only the new level-0 files were clustered
    level4 = next(f for s in t.plan() for f in s.files if f.level == 4)
    rows = t.read().to_pylist()
    clustered_new = [(r["a"], r["b"]) for r in rows if (r["a"], r["b"]) in set(new)]
    assert clustered_new == [(0, 3), (1, 3), (3, 0), (3, 1), (2, 3), (3, 2)] and level4.row_count == 6
    before = multiset(t)
    t.maintenance.compact(full=True)
    assert levels(t) == [5] and multiset(t) == before
    assert t.maintenance.compact(full=True) is None  # one run at the top level, clustered by these columns


def test_a_full_clustering_after_the_columns_change_reclusters(catalog: Catalog) -> None:
    t = table(catalog)
    t.write(batch([(i % 7, i) for i in range(50)]))
    t.maintenance.compact(full=True)
    assert levels(t) == [t.options.num_levels() - 1]
    t.alter(SetOption("clustering.columns", "b"))
    t = catalog.get_table("db.t")
    assert t.maintenance.compact(full=True) is not None  # clustered by (a, b) before: done again by b
    assert [r["b"] for r in t.read().to_pylist()] == list(range(50))  # one column: ordered by it


def test_pure_picking() -> None:
    """Runs: each level-0 file alone, oldest first, then one run per level; the universal picker on them."""
    files = [meta(0, 0, name="l0-new", level=0, seq=(9, 9), size=10), meta(0, 0, name="l0-old", level=0, seq=(2, 2),
                                                                           size=10),
             meta(0, 0, name="l5", level=5, seq=(1, 1)), meta(0, 0, name="l4", level=4, seq=(5, 5), size=30)]
    runs = clustering_runs(files)
    assert [(r.level, [f.file_name for f in r.run.files]) for r in runs] == [
        (0, ["l0-old"]), (0, ["l0-new"]), (4, ["l4"]), (5, ["l5"])]
    picker = UniversalCompaction(max_size_amp=200, size_ratio=1, num_run_trigger=5)
    assert pick_clustering(6, runs, False, picker, lambda f: True) is None  # 4 runs < trigger 5
    full = pick_clustering(6, runs, True, picker, lambda f: True)
    assert full is not None and full.output_level == 5 and len(full.files) == 4
    minor = pick_clustering(6, runs, False, UniversalCompaction(200, 1, 2), lambda f: True)
    assert minor is not None and minor.output_level == 3 and [f.file_name for f in minor.files] == ["l0-old", "l0-new"]
    top = clustering_runs([meta(0, 0, name="t", level=5)])
    assert pick_clustering(6, top, True, picker, lambda f: True) is None
    assert pick_clustering(6, top, True, picker, lambda f: False) is not None  # clustered by other columns


def test_writers_never_compact_and_deleted_rows_stay_deleted(catalog: Catalog) -> None:
    t = table(catalog, **{"deletion-vectors.enabled": "true", "compaction.min.file-num": "2"})
    rng = random.Random(5)
    for _ in range(6):
        t.write(batch([(rng.randrange(100), rng.randrange(100)) for _ in range(40)]))
    assert levels(t) == [0] * 6
    first = min((f for s in t.plan() for f in s.files), key=lambda f: f.min_sequence_number)
    delete_rows(t, {first.file_name: [0, 1]})
    before = multiset(t)
    t.maintenance.compact()
    assert multiset(t) == before and dv_entries(t) == [] and 0 not in levels(t)


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"bucket": "2", "bucket-key": "a"}, UnsupportedError, "bucketed clustering"),
    ({"data-evolution.enabled": "true", "row-tracking.enabled": "true"}, SchemaError,
     "Data evolution config must disabled with clustering.incremental"),
    ({"clustering.columns": ""}, OptionError, "needs clustering.columns"),
    ({"clustering.columns": "a,nope"}, OptionError, "clustering.columns 'nope' is not a column"),
    ({"clustering.strategy": "spiral"}, OptionError, "cannot match type: spiral for ordering"),
])
def test_create_refuses_what_paimon_or_this_engine_refuses(catalog: Catalog, options: dict[str, str],
                                                          error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        table(catalog, **options)
    with pytest.raises(SchemaError, match="Cannot define primary-key for incremental clustering table"):
        catalog.create_table("db.pk", SCHEMA, primary_keys=["a", "dt"], partition_keys=["dt"],
                             options={**CLUSTERED, "bucket": "1"})


def test_a_sort_compaction_of_a_clustering_table_is_refused(catalog: Catalog) -> None:
    t = table(catalog)
    t.write(batch([(1, 2)]))
    with pytest.raises(UnsupportedError, match="The table has enabled incremental clustering"):
        t.maintenance.compact(order_strategy="order", order_by="a")


def test_auto_strategy_follows_the_number_of_columns() -> None:
    from table_engine.sort import clustering_strategy

    assert [clustering_strategy("auto", n) for n in (1, 2, 4, 5)] == [
        OrderType.ORDER, OrderType.ZORDER, OrderType.ZORDER, OrderType.HILBERT]
    assert clustering_strategy("Hilbert", 1) is OrderType.HILBERT


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.one_of(st.tuples(st.just("append"), st.integers(1, 40), st.sampled_from(["d1", "d2"])),
                              st.tuples(st.just("cluster"), st.booleans(), st.just("")),
                              st.tuples(st.just("delete"), st.integers(0, 5), st.just(""))),
                    min_size=1, max_size=12),
       trigger=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_appends_clusterings_and_deletes_read_as_the_model(tmp_path_factory: pytest.TempPathFactory,
                                                           ops: list[tuple[str, Any, str]], trigger: int,
                                                           seed: int) -> None:
    catalog = Catalog(str(tmp_path_factory.mktemp("wh")))
    t = table(catalog, **{"num-sorted-run.compaction-trigger": str(trigger), "deletion-vectors.enabled": "true",
                          "target-file-size": "1 kb"})
    rng = random.Random(seed)
    model: Counter[tuple[Any, ...]] = Counter()
    deleted: dict[str, int] = {}
    for op, x, dt in ops:
        if op == "append":
            rows = batch([(rng.randrange(-5, 50), rng.randrange(1000)) for _ in range(x)], dt)
            t.write(rows)
            model += Counter(tuple(r.values()) for r in rows.to_pylist())
        elif op == "cluster":
            t.maintenance.compact(full=x)
        else:  # a deletion vector marks one row: what it removed is taken from the reads around it
            files = [f for s in t.plan() for f in s.files]
            if files:
                f = files[x % len(files)]
                position = deleted.get(f.file_name, 0)  # the next row of the file not deleted yet
                if position >= f.row_count:
                    continue
                deleted[f.file_name] = position + 1
                before = multiset(t)
                delete_rows(t, {f.file_name: list(range(position + 1))})
                gone = before - multiset(t)
                assert sum(gone.values()) == 1
                model -= gone
        assert multiset(t) == model
    t.maintenance.compact(full=True)
    assert multiset(t) == model
    assert all(level == t.options.num_levels() - 1 for level in levels(t))


def test_the_planner_clusters_when_paimons_picker_would(catalog: Catalog) -> None:
    from table_engine.ops.maintain import plan_table

    t = table(catalog, **{"num-sorted-run.compaction-trigger": "3"})
    t.write(batch([(1, 1)]))
    t.write(batch([(2, 2)]))
    assert not [a for a in plan_table(t).actions if a.kind == "compact"]  # 2 runs < 3
    t.write(batch([(3, 3)]))
    action = next(a for a in plan_table(t).actions if a.kind == "compact")
    assert "runs to cluster" in action.reason and action.option == "num-sorted-run.compaction-trigger"
    assert action.partitions == ["dt=d1"] and not action.full
    t.maintenance.compact(partitions=action.partitions)
    assert 0 not in levels(t) and not [a for a in plan_table(t).actions if a.kind == "compact"]


def test_overlap_counts_the_files_a_filter_reads_per_value(catalog: Catalog) -> None:
    t = table(catalog)
    for i in range(3):
        t.write(batch([(a, i) for a in range(200)]))  # one file each, spanning every value of a
    before = t.maintenance.overlap()
    assert [(o.partition, o.files) for o in before] == [("dt=d1", 3)] and before[0].mean_files_per_value == 3.0
    t.alter(SetOption("target-file-size", "1 kb"))
    t = catalog.get_table("db.t")
    t.maintenance.compact(full=True)
    after = t.maintenance.overlap("a")[0]
    assert after.files > 3 and after.max_files_per_value <= 2
    with pytest.raises(SchemaError, match="no column 'nope'"):
        t.maintenance.overlap("nope")
    plain = catalog.create_table("db.plain", SCHEMA, options={"bucket": "-1"})
    from table_engine.errors import CommandError

    with pytest.raises(CommandError, match="name a column"):
        plain.maintenance.overlap()
    assert plain.maintenance.overlap("a") == []
