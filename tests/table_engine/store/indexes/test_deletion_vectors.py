"""Merge-on-write (``deletion-vectors.enabled``): lookup compaction writes deletion vectors, batch reads skip level 0
and apply the vectors without merging; merge-on-read; value filters and file indexes; other merge engines;
validation; commit conflicts; expiry and orphan removal keep referenced DV index files."""

from __future__ import annotations

import os
import time
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog, CommitConflictError
from table_engine.errors import OptionError
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.io.paths import index_dir
from table_engine.schema_change import SetOption
from table_engine.store.compaction.compact import compaction_messages
from table_engine.system_tables import system_table
from table_engine.table import Table
from table_engine.table.reading import read_optimized_view

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])
DV = {"deletion-vectors.enabled": "true", "bucket": "1"}


def data(ids: Any, v: str = "x", n: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids],
                     "n": pa.array([n] * len(ids), pa.int64())}, schema=SCHEMA)


def make(catalog: Catalog, name: str = "db.t", **options: str) -> Table:
    return catalog.create_table(name, SCHEMA, primary_keys=["id"], options={**DV, **options})


def rows(t: Table, **kw: Any) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"], r["n"]) for r in t.read(**kw).to_pylist())


def dv_entries(t: Table) -> list[Any]:
    return [e for e in t.store.index_entries(t.latest_snapshot())
            if e.index_file.index_type == DELETION_VECTORS_INDEX]


def deleted_rows(t: Table) -> int:
    return sum(r.cardinality or 0 for e in dv_entries(t) for r in e.index_file.dv_ranges or ())


def test_level0_is_invisible_until_compacted(catalog: Catalog) -> None:
    t = make(catalog, **{"write-only": "true"})
    t.write(data(range(5)))
    t.write(data([1, 2], "u"))
    assert rows(t) == []  # only level-0 files so far
    mor = t.copy({"deletion-vectors.merge-on-read": "true"})
    assert [r[:2] for r in rows(mor)] == [(0, "x0"), (1, "u1"), (2, "u2"), (3, "x3"), (4, "x4")]
    sid = t.maintenance.compact()
    assert sid is not None and t.snapshot(sid).commit_kind.value == "COMPACT"
    assert [r[:2] for r in rows(t)] == [(0, "x0"), (1, "u1"), (2, "u2"), (3, "x3"), (4, "x4")]
    assert all(f.level > 0 for s in t.plan() for f in s.files)


def test_writer_compaction_makes_each_commit_visible_with_vectors(catalog: Catalog) -> None:
    t = make(catalog)
    expected: dict[int, tuple[str, int]] = {}
    seen_vectors = False
    for i in range(6):
        batch = data(range(i * 3, i * 3 + 10), f"w{i}-", i)
        t.write(batch)
        for r in batch.to_pylist():
            expected[r["id"]] = (r["v"], r["n"])
        if i == 3:
            t.write(data([4, 5]), row_kinds=["-D", "-D"])
            expected.pop(4)
            expected.pop(5)
        assert rows(t) == sorted((k, *v) for k, v in expected.items())
        assert not [f for s in t.plan() for f in s.files if f.level == 0]
        # older versions live on in higher-level files, hidden by deletion vectors
        physical = sum(f.row_count for s in t.plan() for f in s.files)
        assert physical - deleted_rows(t) == len(expected)
        seen_vectors = seen_vectors or deleted_rows(t) > 0
    assert seen_vectors
    # a full compaction rewrites everything: no vector is left
    t.write(data([0], "last"))
    expected[0] = ("last0", 0)
    t.maintenance.compact(full=True)
    assert rows(t) == sorted((k, *v) for k, v in expected.items())
    assert dv_entries(t) == []


def test_minor_compaction_keeps_vectors_of_untouched_levels(catalog: Catalog) -> None:
    t = make(catalog, **{"write-only": "true"})
    t.write(data(range(100)))
    t.maintenance.compact(full=True)  # one big file at the max level
    t.write(data(range(0, 100, 10), "u"))
    t.maintenance.compact()  # level 0 goes up below the max level; the max-level file gets a vector
    levels = sorted({f.level for s in t.plan() for f in s.files})
    assert len(levels) == 2
    (entry,) = dv_entries(t)
    (rng,) = entry.index_file.dv_ranges or []
    top = [f for s in t.plan() for f in s.files if f.level == max(levels)]
    assert rng.data_file_name == top[0].file_name and rng.cardinality == 10
    assert rows(t) == sorted([(i, f"u{i}" if i % 10 == 0 else f"x{i}", 0) for i in range(100)])
    assert [r[:2] for r in rows(read_optimized_view(t))] == [(i, f"x{i}") for i in range(100) if i % 10]


def test_filters_on_value_columns_skip_files(catalog: Catalog) -> None:
    t = make(catalog, **{"metadata.stats-mode": "full", "file-index.bloom-filter.columns": "v"})
    t.write(data(range(50), "a", 1))
    t.write(data(range(50, 100), "b", 2))
    t.write(data(range(0, 100, 2), "c", 3))  # updates half of both older files
    assert rows(t, filter=[("n", "=", 1)]) == [(i, f"a{i}", 1) for i in range(1, 50, 2)]
    assert rows(t, filter=[("v", "=", "b51")]) == [(51, "b51", 2)]
    assert rows(t, filter=[("v", "=", "b52")]) == []  # the updated version is deleted by a vector
    all_files = {f.file_name for s in t.plan() for f in s.files}
    by_stats = {f.file_name for s in t.plan(filter=[("n", "=", 3)]) for f in s.files}
    assert by_stats and by_stats < all_files  # value statistics prune a primary-key table
    by_index = {f.file_name for s in t.plan(filter=[("v", "=", "c4")]) for f in s.files}
    assert by_index and by_index < all_files


def test_partial_update_merges_the_old_version(catalog: Catalog) -> None:
    t = make(catalog, **{"merge-engine": "partial-update"})
    t.write(data(range(10), "a", 1))
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array([None, "z"], pa.string()),
                      "n": pa.array([7, None], pa.int64())}))
    got = {r[0]: r[1:] for r in rows(t)}
    assert got[1] == ("a1", 7) and got[2] == ("z", 1) and got[3] == ("a3", 1)
    assert deleted_rows(t) == 2


def test_aggregation_sums_across_levels(catalog: Catalog) -> None:
    t = make(catalog, **{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                         "fields.v.aggregate-function": "last_non_null_value"})
    for i in range(4):
        t.write(data(range(5), "s", i + 1))
    assert {r[0]: r[2] for r in rows(t)} == dict.fromkeys(range(5), 10)


@pytest.mark.parametrize("options, message", [
    ({"merge-engine": "first-row"}, "first-row"),
    ({"changelog-producer": "full-compaction"}, "changelog-producer"),
])
def test_invalid_combinations_are_rejected(catalog: Catalog, options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        make(catalog, **options)
    t = catalog.create_table("db.other", SCHEMA, primary_keys=["id"], options=options)
    with pytest.raises(OptionError, match=message):
        t.alter(SetOption("deletion-vectors.enabled", "true"))


def test_concurrent_compactions_of_one_bucket_conflict(catalog: Catalog) -> None:
    t = make(catalog, **{"write-only": "true"})
    t.write(data(range(20)))
    t.maintenance.compact(full=True)
    t.write(data(range(5), "u"))
    first = compaction_messages(t.store)
    second = compaction_messages(t.store)
    t.new_commit().commit(first)
    with pytest.raises(CommitConflictError):
        t.new_commit().commit(second)
    assert [r[:2] for r in rows(t)] == [(i, f"u{i}" if i < 5 else f"x{i}") for i in range(20)]


def test_expiry_and_orphans_keep_referenced_vectors(catalog: Catalog) -> None:
    t = make(catalog, **{"write-only": "true", "num-sorted-run.compaction-trigger": "10"})
    t.write(data(range(1000)))
    t.maintenance.compact(full=True)
    dv_files_by_snapshot = []
    for i in range(4):
        t.write(data(range(i, 1000, 200), f"u{i}-"))
        t.maintenance.compact()
        dv_files_by_snapshot.append({e.index_file.file_name for e in dv_entries(t)})
    live = dv_files_by_snapshot[-1]
    assert live and len(set().union(*dv_files_by_snapshot)) > len(live)
    expected = rows(t)
    idx = index_dir(t.path)
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    on_disk = {n for n in os.listdir(idx) if n.startswith("index-")}
    assert live <= on_disk
    assert not (set().union(*dv_files_by_snapshot[:-1]) - live) & on_disk  # replaced vectors are gone
    old = time.time() - 3 * 86400
    for n in os.listdir(idx):
        os.utime(os.path.join(idx, n), (old, old))
    result = t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    assert not [p for p in result.paths if os.path.basename(p) in live]
    assert live <= set(os.listdir(idx))
    assert rows(t) == expected


def test_tags_keep_their_vectors(catalog: Catalog) -> None:
    t = make(catalog, **{"write-only": "true"})
    t.write(data(range(10)))
    t.maintenance.compact(full=True)
    t.write(data([1, 2], "u"))
    t.maintenance.compact()
    t.create_tag("v1")
    tagged = rows(t, tag="v1")
    for i in range(3):
        t.write(data(range(10), f"w{i}-"))
        t.maintenance.compact(full=True)
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    assert rows(t, tag="v1") == tagged
    t.rollback_to("v1")
    assert rows(t) == tagged


def append_table_with_vector(catalog: Catalog, deleted: list[int]) -> Table:
    """An append table whose one data file gets a deletion vector, committed as pypaimon's delete-by-row-id does."""
    from pyroaring import BitMap

    from table_engine.format.deletion_vector import write_dv_index
    from table_engine.format.index_manifest import IndexFileMeta
    from table_engine.io.paths import new_index_file_name
    from table_engine.store.committing.commit_message import CommitMessage

    t = catalog.create_table("db.app", SCHEMA, options={"deletion-vectors.enabled": "true"})
    t.write(data(range(10)))
    (split,) = t.plan()
    (f,) = split.files
    name = new_index_file_name(1)
    written = write_dv_index(t.file_io, f"{index_dir(t.path)}/{name}", {f.file_name: BitMap(deleted)})
    meta = IndexFileMeta(DELETION_VECTORS_INDEX, name, written.file_size, 1, written.ranges)
    t.commit([CommitMessage(split.partition, split.bucket, split.total_buckets, new_index_files=[meta])])
    return t


def test_append_tables_apply_vectors(catalog: Catalog) -> None:
    t = append_table_with_vector(catalog, [3, 5])
    assert [r[0] for r in rows(t)] == [0, 1, 2, 4, 6, 7, 8, 9]
    assert [r[0] for r in rows(t, filter=[("id", ">", 4)])] == [6, 7, 8, 9]
    assert t.read(snapshot_id=1).num_rows == 10


def test_table_indexes_system_table_lists_vectors(catalog: Catalog) -> None:
    t = make(catalog, **{"write-only": "true"})
    t.write(data(range(100)))
    t.maintenance.compact(full=True)
    t.write(data([1, 2, 3], "u"))
    t.maintenance.compact()
    idx = system_table(t, "table_indexes").read().to_pylist()
    (row,) = [r for r in idx if r["index_type"] == DELETION_VECTORS_INDEX]
    assert row["bucket"] == 0 and row["row_count"] == 1
    (rng,) = row["dv_ranges"]
    assert rng["f1"] == 1 and rng["_CARDINALITY"] == 3
    assert row["file_size"] == 1 + 4 + rng["f2"] + 4


def test_overwrite_is_visible_at_once(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(data(range(10)))
    t.write(data([1, 2], "o"), overwrite=True)
    assert [r[:2] for r in rows(t)] == [(1, "o1"), (2, "o2")]
    assert t.latest_snapshot().commit_kind.value == "COMPACT"
    wo = make(catalog, "db.wo", **{"write-only": "true"})
    wo.write(data(range(10)))
    wo.maintenance.compact()
    wo.write(data([1], "o"), overwrite=True)
    assert rows(wo) == []  # write-only: invisible until a compaction
    wo.maintenance.compact()
    assert [r[:2] for r in rows(wo)] == [(1, "o1")]
