"""Cross-partition upsert (primary key without every partition field, ``bucket`` = -1): one row per key, the
merge engines' handling of a key that moves between partitions, the index bootstrap and its options, and the
create-time rejection of fixed buckets."""

from __future__ import annotations

import datetime
import pathlib
import tempfile
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import DataError, SchemaError
from table_engine.schema_change import SetOption
from table_engine.store.writing.bucket_assign import Assigner
from table_engine.store.writing.cross_partition import BOOTSTRAP_BUCKET, bootstrap_keys
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
ENGINES = ["deduplicate", "partial-update", "aggregation", "first-row"]


def make(catalog: Catalog, engine: str = "deduplicate", name: str = "db.t", **options: str) -> Table:
    opts = {"merge-engine": engine, **options}
    if engine == "aggregation":
        opts["fields.v.aggregate-function"] = "sum"
    return catalog.create_table(name, SCHEMA, primary_keys=["id"], partition_keys=["dt"], options=opts)


def data(*rows: tuple[str, int, int]) -> pa.Table:
    return pa.table({"dt": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]},
                    schema=SCHEMA)


def rows(t: Table) -> list[tuple[str, int, int]]:
    return sorted(((r["dt"], r["id"], r["v"]) for r in t.read().to_pylist()), key=lambda r: r[1])


def table_files(t: Table) -> dict[str, bytes]:
    root = pathlib.Path(t.path)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_key_written_to_another_partition_moves_there(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(data(("a", 1, 10)))
    t.write(data(("b", 1, 11)))
    assert rows(t) == [("b", 1, 11)]
    # the old partition holds the DELETE of the key: it reads empty, and so does a read of it alone
    assert t.read(filter=[("dt", "=", "a")]).num_rows == 0


@pytest.mark.parametrize("engine, expected", [
    ("deduplicate", [("b", 1, 11), ("a", 2, 20), ("b", 3, 31)]),
    ("partial-update", [("a", 1, 11), ("a", 2, 20), ("c", 3, 31)]),
    ("aggregation", [("a", 1, 21), ("a", 2, 20), ("c", 3, 61)]),
    ("first-row", [("a", 1, 10), ("a", 2, 20), ("c", 3, 30)]),
])
def test_merge_engines_handle_a_moved_key_as_paimon_does(catalog: Catalog, engine: str,
                                                         expected: list[tuple[str, int, int]]) -> None:
    """deduplicate: delete in the old partition, insert in the new; partial-update and aggregation: update in the
    old partition; first-row: the new row is ignored. Key 3 moves within one batch."""
    t = make(catalog, engine)
    t.write(data(("a", 1, 10), ("a", 2, 20)))
    t.write(data(("b", 1, 11), ("c", 3, 30), ("b", 3, 31)))
    assert rows(t) == expected


def test_keys_move_back_and_forth_within_a_batch_and_a_writer_session(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(data(("a", 1, 1), ("a", 2, 2)))
    w = t.new_write()
    w.write(data(("b", 1, 3), ("a", 1, 4), ("c", 1, 5)))  # a -> b -> a -> c in one batch
    w.write(data(("a", 1, 6), ("b", 2, 7)))  # and again in a later batch of the same writer
    w.write(data(("b", 2, 8)))
    t.new_commit().commit(w.prepare_commit())
    assert rows(t) == [("a", 1, 6), ("b", 2, 8)]


@pytest.mark.parametrize("options", [{"deletion-vectors.enabled": "true"}, {"changelog-producer": "input"},
                                     {"changelog-producer": "lookup"}, {"write-only": "true"}])
def test_moves_with_deletion_vectors_changelog_producers_and_write_only(catalog: Catalog,
                                                                        options: dict[str, str]) -> None:
    t = make(catalog, **options)
    t.write(data(("a", 1, 1), ("a", 2, 2)))
    t.write(data(("b", 1, 3)))
    t.write(data(("c", 1, 4), ("a", 3, 5)))
    assert rows(t) == [("c", 1, 4), ("a", 2, 2), ("a", 3, 5)]


def test_a_composite_key_moves_as_one(catalog: Catalog) -> None:
    schema = pa.schema([("dt", pa.date32()), ("id", pa.int32()), ("name", pa.string()), ("v", pa.float64())])
    t = catalog.create_table("db.c", schema, primary_keys=["id", "name"], partition_keys=["dt"])
    d1, d2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)

    def batch(*r: tuple[Any, ...]) -> pa.Table:
        return pa.table({n: [x[i] for x in r] for i, n in enumerate(schema.names)}, schema=schema)

    t.write(batch((d1, 1, "x", 1.0), (d1, 1, "y", 2.0), (d1, 2, "x", 3.0)))
    t.write(batch((d2, 1, "y", 4.0), (d2, 2, "y", 5.0), (d1, 1, "y", 6.0), (d2, 1, "y", 7.0)))
    got = sorted((r["id"], r["name"], r["dt"], r["v"]) for r in t.read().to_pylist())
    assert got == [(1, "x", d1, 1.0), (1, "y", d2, 7.0), (2, "x", d1, 3.0), (2, "y", d2, 5.0)]


def test_a_delete_in_another_partition_deletes_the_key(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(data(("a", 1, 1), ("a", 2, 2)))
    t.write(data(("z", 1, 0)), row_kinds=["-D"])
    assert rows(t) == [("a", 2, 2)]
    t.write(data(("b", 1, 9)))
    assert rows(t) == [("b", 1, 9), ("a", 2, 2)]


@pytest.mark.parametrize("engine, expected", [
    ("deduplicate", [("b", 1, 11), ("a", 2, 20), ("b", 4, 40)]),
    ("partial-update", [("a", 1, 11), ("a", 2, 20), ("b", 4, 40)]),
])
def test_dynamic_overwrite_replaces_only_the_partitions_of_the_input(catalog: Catalog, engine: str,
                                                                     expected: list[tuple[str, int, int]]) -> None:
    """Rows the index sends to another partition (the DELETE of a moved key, an update in place) are committed
    into it as changes: that partition is not overwritten, so its other keys stay."""
    t = make(catalog, engine)
    t.write(data(("a", 1, 10), ("a", 2, 20), ("b", 3, 30)))
    t.write(data(("b", 1, 11), ("b", 4, 40)), overwrite=True)
    assert rows(t) == expected


def test_compaction_and_reads_after_many_moves_keep_one_row_per_key(catalog: Catalog) -> None:
    t = make(catalog, **{"num-sorted-run.compaction-trigger": "2"})
    ids = np.arange(200)
    for i, dt in enumerate(["a", "b", "c", "a", "b"]):
        t.write(pa.table({"dt": [dt] * 200, "id": ids, "v": ids + i}, schema=SCHEMA))
    got = t.read()
    assert got.num_rows == 200
    assert set(got.column("dt").to_pylist()) == {"b"}
    t.maintenance.compact(full=True)
    assert sorted(t.read().column("v").to_pylist()) == list(range(4, 204))


def test_new_keys_fill_buckets_up_to_the_target_row_num(catalog: Catalog) -> None:
    t = make(catalog, **{"dynamic-bucket.target-row-num": "2"})
    t.write(data(*[("a", i, i) for i in range(5)]))
    per_bucket = Counter({s.bucket: s.row_count for s in t.plan()})
    assert per_bucket == {0: 2, 1: 2, 2: 1}
    # a moved key frees its slot; a known key stays in its bucket
    t.write(data(("b", 0, 0), ("a", 1, 1), ("a", 9, 9)))
    keys = bootstrap_keys(t.store)
    where = {r["id"]: (r["dt"], r[BOOTSTRAP_BUCKET]) for r in keys.to_pylist()}
    assert where[1] == ("a", 0) and where[0] == ("b", 0) and where[9][0] == "a"
    assert keys.num_rows == 6


def test_no_hash_index_files_are_written(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(data(("a", 1, 1)))
    t.write(data(("b", 1, 1)))
    assert not list(pathlib.Path(t.path).glob("index/*"))


def test_index_ttl_skips_splits_whose_files_are_all_older(catalog: Catalog) -> None:
    """Paimon's IndexBootstrap: with ``cross-partition-upsert.index-ttl`` a (partition, bucket) whose data files
    were all created longer ago than the ttl is left out of the bootstrap (its keys may then be duplicated)."""
    t = make(catalog, **{"cross-partition-upsert.index-ttl": "1 h"})
    t.write(data(("a", 1, 1)))
    t.write(data(("b", 2, 2)))
    created = {s.partition_values[0]: max(f.creation_time_millis or 0 for f in s.files) for s in t.plan()}
    hour = 3_600_000
    assert bootstrap_keys(t.store, now_millis=max(created.values())).num_rows == 2
    assert bootstrap_keys(t.store, now_millis=max(created.values()) + hour + 1).num_rows == 0
    # a split is kept while any of its files is young enough: a new file in partition a brings key 1 back
    t.write(data(("a", 3, 3)))
    young = max(f.creation_time_millis or 0 for s in t.plan() for f in s.files if s.partition_values[0] == "a")
    keys = bootstrap_keys(t.store, now_millis=young + hour)
    assert {1, 3} <= set(keys.column("id").to_pylist())


@pytest.mark.parametrize("parallelism", ["1", "3"])
def test_bootstrap_reads_every_split_at_any_parallelism(catalog: Catalog, parallelism: str) -> None:
    t = make(catalog, **{"cross-partition-upsert.bootstrap-parallelism": parallelism,
                         "dynamic-bucket.target-row-num": "3"})
    t.write(data(*[(dt, i, i) for i, dt in enumerate(["a", "b", "c", "d"] * 5)]))
    keys = bootstrap_keys(t.store)
    assert sorted(keys.column("id").to_pylist()) == list(range(20))
    assert len(t.plan()) > 4
    t.write(data(*[("e", i, -i) for i in range(20)]))
    assert rows(t) == [("e", i, -i) for i in range(20)]


def test_assigners_bootstrap_only_their_keys_and_refuse_others(catalog: Catalog) -> None:
    """Several writers of one commit (Spark tasks) each own the keys whose hash modulo their count is their id."""
    t = make(catalog, **{"dynamic-bucket.target-row-num": "5"})
    t.write(data(*[("a", i, i) for i in range(40)]))
    mine = [set(bootstrap_keys(t.store, assigner=Assigner(i, 3)).column("id").to_pylist()) for i in range(3)]
    assert set().union(*mine) == set(range(40)) and sum(map(len, mine)) == 40 and all(mine)
    writers = []
    for i in range(3):
        w = t.new_write()
        w.assigner = Assigner(i, 3)
        w.write(data(*[("b", k, -k) for k in sorted(mine[i])]))
        writers.append(w)
    t.new_commit().commit([m for w in writers for m in w.prepare_commit()])
    assert rows(t) == [("b", k, -k) for k in range(40)]
    # new keys of each writer go to its own buckets only
    for s in t.plan():
        if s.partition_values == ("b",):
            ids = t.new_read().read_split(s).column("id").to_pylist()
            owners = {i for i in range(3) for k in ids if k in mine[i]}
            assert owners == {s.bucket % 3}
    stray = t.new_write()
    stray.assigner = Assigner(0, 3)
    with pytest.raises(DataError, match="routed to assigners"):
        stray.write(data(("c", next(iter(mine[1])), 0)))
    stray.abort()


# ---- create and alter --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bucket", ["2", "-2"])
def test_fixed_bucket_is_rejected_for_a_key_without_the_partition_fields(catalog: Catalog, bucket: str) -> None:
    with pytest.raises(SchemaError, match=r"'bucket' = .*\['id'\].*\['dt'\].*bucket = -1"):
        make(catalog, bucket=bucket)
    assert not catalog.table_exists("db.t")
    # the key with every partition field is fine, with any bucket count
    catalog.create_table("db.ok", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"})


def test_alter_to_fixed_bucket_or_sequence_field_is_rejected_and_changes_nothing(catalog: Catalog) -> None:
    t = make(catalog)
    before = table_files(t)
    with pytest.raises(SchemaError, match="'bucket' = 4"):
        t.alter(SetOption("bucket", "4"))
    with pytest.raises(SchemaError, match="'sequence.field'"):
        t.alter(SetOption("sequence.field", "v"))
    assert table_files(t) == before


def test_sequence_field_is_rejected_at_create(catalog: Catalog) -> None:
    with pytest.raises(SchemaError, match="'sequence.field' cannot be used with cross-partition upsert"):
        make(catalog, **{"sequence.field": "v"})


# ---- property test against a dict model -----------------------------------------------------------------------

row = st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 12), st.integers(-5, 5), st.booleans())
commit = st.lists(st.lists(row, min_size=1, max_size=12), min_size=1, max_size=3)  # write() calls of one writer
commits = st.lists(commit, min_size=1, max_size=4)


def apply(model: dict[int, tuple[str, int]], engine: str, dt: str, k: int, v: int, delete: bool) -> None:
    old = model.get(k)
    if engine == "deduplicate":
        if delete:
            model.pop(k, None)
        else:
            model[k] = (dt, v)
    elif old is None:
        model[k] = (dt, v)
    elif engine == "partial-update":
        model[k] = (old[0], v)
    elif engine == "aggregation":
        model[k] = (old[0], old[1] + v)
    # first-row keeps the old row


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine=st.sampled_from(ENGINES), history=commits, target=st.sampled_from(["2", "1000"]))
def test_writes_match_a_dict_model_with_keys_moving_between_partitions(engine: str, history: list[Any],
                                                                      target: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = make(Catalog(str(pathlib.Path(tmp) / "wh")), engine, **{"dynamic-bucket.target-row-num": target})
        model: dict[int, tuple[str, int]] = {}
        for batches in history:
            w = t.new_write()
            for batch in batches:
                delete = engine == "deduplicate"
                kinds = ["-D" if (delete and r[3]) else "+I" for r in batch]
                w.write(data(*[(dt, k, v) for dt, k, v, _ in batch]), kinds)
                for dt, k, v, d in batch:
                    apply(model, engine, dt, k, v, delete and d)
            t.new_commit().commit(w.prepare_commit())
            got = rows(t)
            assert len({r[1] for r in got}) == len(got)  # one row per key
            assert got == sorted(((dt, k, v) for k, (dt, v) in model.items()), key=lambda r: r[1])
