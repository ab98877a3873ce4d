"""File-index skipping in scans, the write path (embedded vs sidecar), rewrite_file_index and option checks."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import OptionError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.file_index.format import FileIndexFile, read_file_index
from table_engine.format.snapshot import CommitKind
from table_engine.schema_change import RenameColumn, SetOption
from table_engine.store.indexes.file_index_filter import index_file_path
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("v", pa.int32())])
INDEXED = {"file-index.bloom-filter.columns": "name", "file-index.bloom-filter.name.items": "200",
           "file-index.bitmap.columns": "v", "file-index.bsi.columns": "id"}


def _batch(k: int, n: int = 50) -> pa.Table:
    return pa.table({"id": pa.array(range(k * 1000, k * 1000 + n), pa.int64()),
                     "name": [f"n{k}_{i}" for i in range(n)], "v": pa.array([k] * n, pa.int32())})


def _files(table, flt=None) -> int:
    return sum(len(s.files) for s in table.plan(flt))


def _sorted(t: pa.Table) -> list[dict[str, object]]:
    return sorted(t.to_pylist(), key=lambda r: (r["id"], str(r)))


def _full_scan(table, flt) -> list[dict[str, object]]:
    from table_engine.predicate import conjunction, parse_filters

    expr = conjunction(parse_filters(flt))
    return _sorted(table.read() if expr is None else table.read().filter(expr))


@pytest.fixture
def append_table(catalog: Catalog):
    # append-table writers would compact the six small files: keep one file per write
    t = catalog.create_table("db.app", SCHEMA, options={**INDEXED, "compaction.min.file-num": "1000"})
    for k in range(6):
        t.write(_batch(k))
    return t


# ---- append tables ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("flt, files", [
    (None, 6),
    ([("name", "=", "n3_7")], 1),                 # bloom filter
    ([("name", "in", ["n1_1", "n4_2"])], 2),
    ([("name", "=", "absent")], 0),
    ([("v", "=", 2)], 1),                         # bitmap
    ([("v", "!=", 2)], 5),
    ([("v", "in", [0, 5])], 2),
    ([("v", "not in", [0, 1, 2])], 3),
    ([("id", ">=", 2000), ("id", "<", 4000)], 2),  # bsi (and stats)
    ([("id", "=", 3010)], 1),
    ([("v", "=", 2), ("name", "=", "n3_1")], 0),  # different files: the conjunction holds nowhere
])
def test_append_scan_skips_files(append_table, flt, files) -> None:
    assert _files(append_table, flt) == files
    assert _sorted(append_table.read(filter=flt)) == _full_scan(append_table, flt)


def test_bitmap_conjunction_inside_one_file(catalog: Catalog) -> None:
    t = catalog.create_table("db.conj", SCHEMA, options={"file-index.bitmap.columns": "v,name",
                                                        "metadata.stats-mode": "none"})
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"], "v": pa.array([1, 2], pa.int32())}))
    assert _files(t, [("v", "=", 1), ("name", "=", "b")]) == 0  # both values occur, never in the same row
    assert _files(t, [("v", "=", 1), ("name", "=", "a")]) == 1


def test_read_enabled_false_disables_skipping(catalog: Catalog) -> None:
    t = catalog.create_table("db.off", SCHEMA, options={**INDEXED, "file-index.read.enabled": "false",
                                                       "metadata.stats-mode": "none"})
    for k in range(3):
        t.write(_batch(k))
    assert _files(t, [("name", "=", "n1_1")]) == 3


def test_small_indexes_are_embedded_large_ones_are_sidecars(catalog: Catalog) -> None:
    small = catalog.create_table("db.small", SCHEMA, options={"file-index.bitmap.columns": "v"})
    small.write(_batch(1))
    f = small.plan()[0].files[0]
    assert f.embedded_file_index is not None and f.extra_files == []
    assert FileIndexFile.parse(f.embedded_file_index).columns() == ["v"]

    big = catalog.create_table("db.big", SCHEMA, options={**INDEXED, "file-index.in-manifest-threshold": "10 b"})
    big.write(_batch(1))
    split = big.plan()[0]
    f = split.files[0]
    assert f.embedded_file_index is None and f.extra_files == [f.file_name + ".index"]
    path = index_file_path(big.store.path_factory.data_file(split.partition, split.bucket, f), f)
    assert path is not None and big.file_io.exists(path)
    assert sorted(read_file_index(big.file_io, path).columns()) == ["id", "name", "v"]
    assert _files(big, [("name", "=", "zzz")]) == 0


def test_writer_abort_removes_sidecars(catalog: Catalog) -> None:
    t = catalog.create_table("db.abort", SCHEMA, options={**INDEXED, "file-index.in-manifest-threshold": "1b"})
    w = t.new_write()
    w.write(_batch(1))
    w.flush()
    paths = w.written_paths()
    assert any(p.endswith(".index") for p in paths)
    w.abort()
    assert not any(t.file_io.exists(p) for p in paths)


# ---- primary-key tables --------------------------------------------------------------------------------------------

def _pk_table(catalog: Catalog, name: str, **opts: str):
    return catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"],
                                options={"bucket": "1", "write-only": "true", "file-index.bitmap.columns": "v",
                                         "file-index.bloom-filter.columns": "name",
                                         "file-index.bloom-filter.name.items": "100", **opts})


def test_pk_overlapping_files_are_skipped_only_together(catalog: Catalog) -> None:
    t = _pk_table(catalog, "pk1")
    t.write(_batch(0, 20))                                    # ids 0..19, v = 0
    t.write(_batch(0, 20).set_column(2, "v", pa.array([7] * 20, pa.int32())))  # same keys, v = 7
    assert _files(t) == 2
    assert _files(t, [("v", "=", 3)]) == 0                    # no version anywhere: the whole section goes
    # v = 0 only in the older file: both must be read, and the newer version hides it
    assert _files(t, [("v", "=", 0)]) == 2
    assert t.read(filter=[("v", "=", 0)]).num_rows == 0
    assert t.read(filter=[("v", "=", 7)]).num_rows == 20


def test_pk_disjoint_files_are_skipped_one_by_one(catalog: Catalog) -> None:
    t = _pk_table(catalog, "pk2")
    for k in range(4):
        t.write(_batch(k, 10))                                # disjoint key ranges: one-file sections
    assert _files(t, [("v", "=", 2)]) == 1
    assert _files(t, [("name", "=", "n3_4")]) == 1
    assert _sorted(t.read(filter=[("v", "=", 2)])) == _full_scan(t, [("v", "=", 2)])


def test_pk_after_full_compaction(catalog: Catalog) -> None:
    t = _pk_table(catalog, "pk3", **{"write-only": "false"})
    for k in range(3):
        t.write(_batch(k, 10))
    t.maintenance.compact(full=True)
    assert all(f.level > 0 for s in t.plan() for f in s.files)
    assert all(f.embedded_file_index is not None or f.extra_files for s in t.plan() for f in s.files)
    assert _files(t, [("name", "=", "absent")]) == 0
    assert _sorted(t.read(filter=[("v", "=", 1)])) == _full_scan(t, [("v", "=", 1)])


def test_pk_partial_update_never_drops_merged_sections(catalog: Catalog) -> None:
    t = _pk_table(catalog, "pk4", **{"merge-engine": "partial-update"})
    t.write(pa.table({"id": pa.array([1], pa.int64()), "name": ["a"], "v": pa.array([None], pa.int32())}))
    t.write(pa.table({"id": pa.array([1], pa.int64()), "name": [None], "v": pa.array([5], pa.int32())}))
    flt = [("name", "=", "a"), ("v", "=", 5)]  # only the merged row matches
    assert _files(t, flt) == 2
    assert t.read(filter=flt).to_pylist() == [{"id": 1, "name": "a", "v": 5}]


def test_pk_aggregation_never_drops_merged_sections(catalog: Catalog) -> None:
    t = _pk_table(catalog, "pk5", **{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"})
    t.write(pa.table({"id": pa.array([1], pa.int64()), "name": ["a"], "v": pa.array([2], pa.int32())}))
    t.write(pa.table({"id": pa.array([1], pa.int64()), "name": ["a"], "v": pa.array([3], pa.int32())}))
    flt = [("v", "=", 5)]  # no stored record has v = 5: only the aggregated row does
    assert _files(t, flt) == 2
    assert t.read(filter=flt).to_pylist() == [{"id": 1, "name": "a", "v": 5}]


@pytest.mark.parametrize(("engine", "kept"), [
    ("deduplicate", 0), ("first-row", 0), ("partial-update", 2), ("aggregation", 2), (None, 2),
])
def test_overlapping_sections_are_dropped_by_merge_free_capabilities(catalog: Catalog, engine: str | None,
                                                                     kept: int) -> None:
    """The filter decides from the capabilities it is given (none given: it drops nothing that needs a merge)."""
    from table_engine.lsm.merge_engines import create_merge_function
    from table_engine.predicate import parse_filters
    from table_engine.store.indexes.file_index_filter import filter_by_file_index
    from table_engine.store.reading.scan import live_entries

    t = _pk_table(catalog, "pk6")
    t.write(_batch(0, 20))
    t.write(_batch(0, 20).set_column(2, "v", pa.array([7] * 20, pa.int32())))
    entries = live_entries(t.file_io, t.path, t.latest_snapshot())
    assert len(entries) == 2
    caps = None if engine is None else \
        create_merge_function(t.schema, options={**t.schema.options, "merge-engine": engine}).capabilities
    out = filter_by_file_index(t.file_io, t.path, t.schema, entries, parse_filters([("v", "=", 3)]),
                               merge_capabilities=caps)
    assert len(out) == kept


# ---- rewrite_file_index --------------------------------------------------------------------------------------------

def test_rewrite_file_index_adds_replaces_and_removes(catalog: Catalog) -> None:
    t = catalog.create_table("db.rw", SCHEMA, partition_keys=["v"], options={"metadata.stats-mode": "none"})
    for k in range(4):
        t.write(_batch(k))
    assert _files(t, [("name", "=", "n2_3")]) == 4
    assert t.maintenance.rewrite_file_index() is None                     # nothing declared, nothing indexed
    t.alter(SetOption("file-index.bloom-filter.columns", "name"), SetOption("file-index.bloom-filter.name.items", "64"))
    sid = t.maintenance.rewrite_file_index(partitions=[{"v": 1}, {"v": 2}])
    assert sid is not None and t.snapshot(sid).commit_kind == CommitKind.COMPACT
    assert _files(t, [("name", "=", "n2_3")]) == 3            # partitions 0 and 3 have no index yet
    t.maintenance.rewrite_file_index()
    assert _files(t, [("name", "=", "n2_3")]) == 1
    assert t.maintenance.rewrite_file_index() is None                     # unchanged indexes are not rewritten
    before = {f.file_name for s in t.plan() for f in s.files}
    t.alter(SetOption("file-index.in-manifest-threshold", "8b"))
    t.maintenance.rewrite_file_index()
    metas: list[DataFileMeta] = [f for s in t.plan() for f in s.files]
    assert {f.file_name for f in metas} == before
    assert all(f.extra_files == [f.file_name + ".index"] and f.embedded_file_index is None for f in metas)
    t.alter(SetOption("file-index.bloom-filter.name.items", "128"))
    t.maintenance.rewrite_file_index()  # a new sidecar name; the old one stays for old snapshots
    assert all(s.files[0].extra_files == [s.files[0].file_name + "-1.index"] for s in t.plan())
    assert _sorted(t.read(filter=[("name", "=", "n2_3")])) == _full_scan(t, [("name", "=", "n2_3")])
    from table_engine.schema_change import RemoveOption

    t.alter(RemoveOption("file-index.bloom-filter.columns"), RemoveOption("file-index.bloom-filter.name.items"))
    t.maintenance.rewrite_file_index()
    assert all(f.extra_files == [] and f.embedded_file_index is None for s in t.plan() for f in s.files)
    assert t.read().num_rows == 200


def test_expiry_removes_replaced_sidecars(catalog: Catalog) -> None:
    t = catalog.create_table("db.rwx", SCHEMA, options={
        "metadata.stats-mode": "none", "file-index.in-manifest-threshold": "8b",
        "file-index.bloom-filter.columns": "name", "file-index.bloom-filter.name.items": "64"})
    for k in range(2):
        t.write(_batch(k))
    t.alter(SetOption("file-index.bloom-filter.name.items", "128"))
    t.maintenance.rewrite_file_index()
    def sidecars() -> set[str]:
        return {q.name for q in pathlib.Path(t.path).rglob("*.index")}

    live = {x for s in t.plan() for f in s.files for x in f.extra_files}
    assert len(live) == 2 and sidecars() == live | {f"{f.file_name}.index" for s in t.plan() for f in s.files}
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    assert t.earliest_snapshot_id() == t.latest_snapshot_id()
    assert sidecars() == live                                  # the replaced sidecars went with their snapshots
    assert _sorted(t.read(filter=[("name", "=", "n1_3")])) == _full_scan(t, [("name", "=", "n1_3")])


def test_renamed_column_keeps_its_index(catalog: Catalog) -> None:
    t = catalog.create_table("db.ren", SCHEMA, options={"file-index.bitmap.columns": "v"})
    for k in range(3):
        t.write(_batch(k))
    with pytest.raises(OptionError, match="'v'"):
        t.alter(RenameColumn("v", "w"))                       # the option would name a missing column
    t.alter(RenameColumn("v", "w"), SetOption("file-index.bitmap.columns", "w"))
    assert _files(t, [("w", "=", 1)]) == 1                   # old files' index is keyed 'v', found by field id


# ---- table creation ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("opts, message", [
    ({"file-index.bloom-filter.columns": "nope"}, "'nope'"),
    ({"file-index.bloom-filter.columns": "flag"}, "'flag'"),
    ({"file-index.bsi.columns": "name"}, "'name'"),
    ({"file-index.bitmap.columns": "bytes"}, "'bytes'"),
])
def test_create_table_rejects_bad_index_columns(catalog: Catalog, opts: dict[str, str], message: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("flag", pa.bool_()), ("bytes", pa.binary())])
    with pytest.raises(OptionError, match=message):
        catalog.create_table("db.bad", schema, options=opts)
    assert not catalog.table_exists("db.bad")


# ---- property: skipping never drops a matching row -----------------------------------------------------------------

_OPS = ["=", "!=", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null"]


def _pred(draw, column: str, values: st.SearchStrategy, scalars: st.SearchStrategy | None = None):
    op = draw(st.sampled_from(_OPS))
    if op in ("is null", "is not null"):
        return (column, op)
    if op in ("in", "not in"):  # lists of one type, maybe with None (IN (NULL) matches nulls in the row filter)
        return (column, op, draw(st.lists(values, min_size=1, max_size=3)) + draw(st.sampled_from([[], [None]])))
    return (column, op, draw(values if scalars is None else values | scalars))


@st.composite
def _scenario(draw):
    nfiles = draw(st.integers(1, 4))
    batches = []
    for _ in range(nfiles):
        n = draw(st.integers(1, 12))
        ids = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
        names = draw(st.lists(st.none() | st.sampled_from(["a", "b", "c", "dd"]), min_size=n, max_size=n))
        vs = draw(st.lists(st.none() | st.integers(-5, 5), min_size=n, max_size=n))
        batches.append((ids, names, vs))
    preds = [_pred(draw, "v", st.integers(-6, 6), st.floats(-6, 6, allow_nan=False)),
             _pred(draw, "name", st.sampled_from(["a", "b", "zz"])),
             _pred(draw, "id", st.integers(-1, 31))]
    chosen = draw(st.lists(st.sampled_from(preds), min_size=1, max_size=3, unique_by=lambda p: p[0]))
    return batches, chosen


@pytest.mark.parametrize("kind", ["append", "pk", "pk-first-row", "pk-partial-update"])
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(scenario=_scenario())
def test_index_skipping_never_drops_matching_rows(tmp_path_factory, kind: str, scenario) -> None:
    batches, flt = scenario
    catalog = Catalog(str(tmp_path_factory.mktemp("wh")))
    opts = {"file-index.bloom-filter.columns": "name,v", "file-index.bloom-filter.name.items": "50",
            "file-index.bloom-filter.v.items": "50", "file-index.bitmap.columns": "v,name",
            "file-index.bsi.columns": "id,v", "metadata.stats-mode": "none"}
    pks: list[str] = []
    if kind != "append":
        pks = ["id"]
        opts.update({"bucket": "2", "write-only": "true"})
        if kind == "pk-first-row":
            opts["merge-engine"] = "first-row"
        elif kind == "pk-partial-update":
            opts["merge-engine"] = "partial-update"
    t = catalog.create_table("db.p", SCHEMA, primary_keys=pks, options=opts)
    for ids, names, vs in batches:
        data = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string()),
                         "v": pa.array(vs, pa.int32())})
        t.write(data)
    assert _sorted(t.read(filter=flt)) == _full_scan(t, flt)
