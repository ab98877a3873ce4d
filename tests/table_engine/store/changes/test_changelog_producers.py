"""Changelog producers (``changelog-producer`` input, lookup, full-compaction): the exact changelog rows of the
seeds' sequences, the changelog files and manifests in the Paimon format, and where the changelog is committed."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import SchemaError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.snapshot import CommitKind
from table_engine.table import Table
from tests.table_engine.store.changelog_support import (
    all_changes,
    apply_changes,
    changelog_file_metas,
    changelogs,
    table_rows,
)

S = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def kv(ids: list[int], vs: list[str | None]) -> pa.Table:
    return pa.table({"id": ids, "v": vs}, schema=S)


def make(catalog: Catalog, producer: str, schema: pa.Schema = S, name: str = "t", **options: str) -> Table:
    opts = {"bucket": "1", "changelog-producer": producer, **options}
    return catalog.create_table(f"db.{name}", schema, primary_keys=["id"], options=opts)


def seed_sequence(t: Table) -> None:
    """insert 1,2,3 | update 2, insert 4 | delete 3 | update 1 twice in one commit."""
    t.write(kv([1, 2, 3], ["a", "b", "c"]))
    t.write(kv([2, 4], ["B", "d"]))
    t.write(kv([3], ["c"]), row_kinds=["-D"])
    t.write(kv([1, 1], ["a2", "x"]))


# ---- input -------------------------------------------------------------------------------------------------------
def test_input_changelog_is_every_input_record(catalog: Catalog) -> None:
    t = make(catalog, "input")
    seed_sequence(t)
    assert changelogs(t) == {
        1: [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c")],
        2: [("+I", 2, "B"), ("+I", 4, "d")],
        3: [("-D", 3, "c")],
        4: [("+I", 1, "a2"), ("+I", 1, "x")],  # both records, not folded
    }
    # the writer compacted (not write-only): COMPACT snapshots carry no changelog with input
    assert all(s.changelog_manifest_list is None for s in t.snapshots() if s.commit_kind == CommitKind.COMPACT)


def test_input_changelog_keeps_update_before_rows_of_cdc_input(catalog: Catalog) -> None:
    t = make(catalog, "input")
    t.write(kv([1], ["a"]))
    t.write(kv([1, 1, 2], ["a", "b", "z"]), row_kinds=["-U", "+U", "+I"])
    assert all_changes(t) == [("+I", 1, "a"), ("-U", 1, "a"), ("+U", 1, "b"), ("+I", 2, "z")]
    assert table_rows(t) == {(1,): (1, "b"), (2,): (2, "z")}


def test_changelog_files_and_manifests_in_the_paimon_format(catalog: Catalog) -> None:
    t = make(catalog, "input", bucket="2")
    sid = t.write(kv([1, 2, 3, 4], ["a", "b", "c", "d"]))
    assert sid is not None
    snap = t.snapshot(sid)
    assert snap.commit_kind == CommitKind.APPEND
    assert re.fullmatch(r"manifest-list-[0-9a-f-]{36}-changelog", snap.changelog_manifest_list or "")
    assert snap.changelog_manifest_list.removesuffix("changelog") == snap.delta_manifest_list.removesuffix("1")
    assert snap.changelog_record_count == 4
    assert snap.changelog_manifest_list_size and snap.changelog_manifest_list_size > 0
    text = (t.file_io.read_bytes(f"{t.path}/snapshot/snapshot-{sid}")).decode()
    assert '"changelogManifestList"' in text and '"changelogRecordCount": 4' in text
    entries = changelog_file_metas(t, snap)
    assert sorted(e.bucket for e in entries) == [0, 1]
    for e in entries:
        assert re.fullmatch(r"changelog-[0-9a-f-]{36}-0\.parquet", e.file.file_name)
        assert e.file.level == 0 and e.file.file_source == FileSource.APPEND
        assert e.total_buckets == 2
        assert t.file_io.exists(f"{t.path}/bucket-{e.bucket}/{e.file.file_name}")
    names = [p.path.rsplit("/", 1)[-1] for p in t.file_io.list_status(f"{t.path}/manifest")]
    assert any(re.fullmatch(r"manifest-[0-9a-f-]{36}-changelog-0", n) for n in names)


def test_changelog_file_prefix_option(catalog: Catalog) -> None:
    t = make(catalog, "input", **{"changelog-file.prefix": "cl-"})
    sid = t.write(kv([1], ["a"]))
    assert sid is not None
    [e] = changelog_file_metas(t, t.snapshot(sid))
    assert e.file.file_name.startswith("cl-")


def test_no_changelog_without_producer(catalog: Catalog) -> None:
    t = make(catalog, "none")
    seed_sequence(t)
    assert changelogs(t) == {}


# ---- lookup ------------------------------------------------------------------------------------------------------
def test_lookup_changelog_of_the_seed_sequence(catalog: Catalog) -> None:
    t = make(catalog, "lookup")
    seed_sequence(t)
    assert changelogs(t) == {
        2: [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c")],
        4: [("-U", 2, "b"), ("+U", 2, "B"), ("+I", 4, "d")],
        6: [("-D", 3, "c")],
        8: [("-U", 1, "a"), ("+U", 1, "x")],
    }
    # produced by the compaction each commit waits for (lookup-wait), in its COMPACT snapshot
    for sid in (2, 4, 6, 8):
        snap = t.snapshot(sid)
        assert snap.commit_kind == CommitKind.COMPACT
        for e in changelog_file_metas(t, snap):
            assert e.file.file_source == FileSource.COMPACT and e.file.level > 0
            assert e.file.file_name.startswith("changelog-")
    assert apply_changes(all_changes(t)) == table_rows(t)


def test_lookup_row_deduplicate(catalog: Catalog) -> None:
    t = make(catalog, "lookup", **{"changelog-producer.row-deduplicate": "true"})
    t.write(kv([1, 2], ["a", "b"]))
    t.write(kv([1, 2], ["a", "B"]))  # 1 unchanged: no -U/+U
    assert all_changes(t) == [("+I", 1, "a"), ("+I", 2, "b"), ("-U", 2, "b"), ("+U", 2, "B")]
    u = make(catalog, "lookup", name="u")
    u.write(kv([1], ["a"]))
    u.write(kv([1], ["a"]))  # without row-deduplicate the equal update is emitted
    assert all_changes(u) == [("+I", 1, "a"), ("-U", 1, "a"), ("+U", 1, "a")]


def test_lookup_row_deduplicate_ignore_fields(catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("ts", pa.int64())])
    t = make(catalog, "lookup", schema, **{"changelog-producer.row-deduplicate": "true",
                                           "changelog-producer.row-deduplicate-ignore-fields": "ts"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "ts": [1, 1]}, schema=schema))
    t.write(pa.table({"id": [1, 2], "v": ["a", "c"], "ts": [2, 2]}, schema=schema))
    assert all_changes(t) == [("+I", 1, "a", 1), ("+I", 2, "b", 1), ("-U", 2, "b", 1), ("+U", 2, "c", 2)]
    with pytest.raises(SchemaError, match="unknown columns"):  # at table creation
        make(catalog, "lookup", schema, name="bad", **{"changelog-producer.row-deduplicate": "true",
                                                       "changelog-producer.row-deduplicate-ignore-fields": "nope"})


PU = pa.schema([pa.field("k", pa.int32(), nullable=False), ("a", pa.float64()), ("b", pa.int32()),
                ("c", pa.string())])


def test_lookup_partial_update_emits_old_and_new_merged_rows(catalog: Catalog) -> None:
    t = catalog.create_table("db.pu", PU, primary_keys=["k"], options={
        "bucket": "1", "merge-engine": "partial-update", "changelog-producer": "lookup"})
    t.write(pa.table({"k": [1], "a": [23.0], "b": [10], "c": [None]}, schema=PU))
    t.write(pa.table({"k": [1], "a": [None], "b": [None], "c": ["This is a book"]}, schema=PU))
    t.write(pa.table({"k": [1], "a": [25.2], "b": [None], "c": [None]}, schema=PU))
    assert all_changes(t) == [
        ("+I", 1, 23.0, 10, None),
        ("-U", 1, 23.0, 10, None), ("+U", 1, 23.0, 10, "This is a book"),
        ("-U", 1, 23.0, 10, "This is a book"), ("+U", 1, 25.2, 10, "This is a book"),
    ]
    assert table_rows(t) == {(1,): (1, 25.2, 10, "This is a book")}


AGG = pa.schema([pa.field("product_id", pa.int64(), nullable=False), ("price", pa.float64()),
                 ("sales", pa.int64())])


def test_lookup_aggregation_emits_old_and_new_aggregates(catalog: Catalog) -> None:
    t = catalog.create_table("db.agg", AGG, primary_keys=["product_id"], options={
        "bucket": "1", "merge-engine": "aggregation", "changelog-producer": "lookup",
        "fields.price.aggregate-function": "max", "fields.sales.aggregate-function": "sum"})
    t.write(pa.table({"product_id": [1], "price": [23.0], "sales": [15]}, schema=AGG))
    t.write(pa.table({"product_id": [1, 2], "price": [30.2, 5.0], "sales": [20, 1]}, schema=AGG))
    t.write(pa.table({"product_id": [1], "price": [10.0], "sales": [1]}, schema=AGG))
    assert all_changes(t) == [
        ("+I", 1, 23.0, 15),
        ("-U", 1, 23.0, 15), ("+U", 1, 30.2, 35), ("+I", 2, 5.0, 1),
        ("-U", 1, 30.2, 35), ("+U", 1, 30.2, 36),
    ]
    assert table_rows(t) == {(1,): (1, 30.2, 36), (2,): (2, 5.0, 1)}


def test_lookup_first_row_is_insert_only(catalog: Catalog) -> None:
    t = make(catalog, "lookup", **{"merge-engine": "first-row"})
    t.write(kv([1, 2], ["a", "b"]))
    t.write(kv([1, 3], ["A", "c"]))
    t.write(kv([3, 4], ["C", "d"]))
    assert changelogs(t) == {2: [("+I", 1, "a"), ("+I", 2, "b")], 4: [("+I", 3, "c")], 6: [("+I", 4, "d")]}
    assert table_rows(t) == {(1,): (1, "a"), (2,): (2, "b"), (3,): (3, "c"), (4,): (4, "d")}


def test_lookup_with_write_only_writers_produces_changelog_at_dedicated_compaction(catalog: Catalog) -> None:
    t = make(catalog, "lookup", **{"write-only": "true"})
    seed_sequence(t)
    assert changelogs(t) == {}  # level 0 has not been compacted yet
    sid = t.maintenance.compact()
    assert sid is not None
    # one compaction over all four commits: the net change of each key
    assert changelogs(t) == {sid: [("+I", 1, "x"), ("+I", 2, "B"), ("+I", 4, "d")]}
    t.write(kv([2, 4], ["B2", None]), row_kinds=["+I", "-D"])
    sid2 = t.maintenance.compact()
    assert sid2 is not None
    assert changelogs(t)[sid2] == [("-U", 2, "B"), ("+U", 2, "B2"), ("-D", 4, "d")]
    assert apply_changes(all_changes(t)) == table_rows(t)


def test_lookup_looks_up_keys_in_levels_above_the_output_level(catalog: Catalog) -> None:
    t = make(catalog, "lookup", **{"write-only": "true"})
    t.write(kv([1, 2, 3], ["a", "b", "c"]))
    t.maintenance.compact(full=True)  # everything at the max level
    t.write(kv([2, 5], ["B", "e"]))
    sid = t.maintenance.compact()  # level 0 goes to a level below the max: 2 is found above
    assert sid is not None
    assert changelogs(t)[sid] == [("-U", 2, "b"), ("+U", 2, "B"), ("+I", 5, "e")]


# ---- full-compaction -----------------------------------------------------------------------------------------------
def test_full_compaction_changelog_is_the_diff_of_full_compactions(catalog: Catalog) -> None:
    t = make(catalog, "full-compaction")
    seed_sequence(t)
    assert changelogs(t) == {}  # no full compaction yet
    sid = t.maintenance.compact(full=True)
    assert sid is not None
    assert changelogs(t) == {sid: [("+I", 1, "x"), ("+I", 2, "B"), ("+I", 4, "d")]}
    t.write(kv([1, 2, 5], ["x", "B2", "e"]))
    t.write(kv([4], ["d"]), row_kinds=["-D"])
    sid2 = t.maintenance.compact(full=True)
    assert sid2 is not None
    # 1 rewritten with an equal value: -U/+U without row-deduplicate
    assert changelogs(t)[sid2] == [("-U", 1, "x"), ("+U", 1, "x"), ("-U", 2, "B"), ("+U", 2, "B2"),
                                   ("-D", 4, "d"), ("+I", 5, "e")]
    assert t.maintenance.compact(full=True) is None  # nothing new: no compaction, no changelog
    assert apply_changes(all_changes(t)) == table_rows(t)


def test_full_compaction_delta_commits_and_row_deduplicate(catalog: Catalog) -> None:
    t = make(catalog, "full-compaction", **{"full-compaction.delta-commits": "2",
                                            "changelog-producer.row-deduplicate": "true"})
    w = t.new_write()  # one long-running writer (delta commits are counted per writer, as in a streaming job)

    def commit(data: pa.Table) -> None:
        w.write(data)
        t.commit(w.prepare_commit())

    commit(kv([1, 2], ["a", "b"]))
    assert changelogs(t) == {}
    commit(kv([1, 3], ["A", "c"]))  # second commit: full compaction
    commit(kv([1, 2], ["A", "b2"]))
    commit(kv([3], ["c"]))  # 1 and 3 rewritten unchanged: deduplicated
    assert list(changelogs(t).values()) == [
        [("+I", 1, "A"), ("+I", 2, "b"), ("+I", 3, "c")],
        [("-U", 2, "b"), ("+U", 2, "b2")],
    ]
    assert apply_changes(all_changes(t)) == table_rows(t)


def test_full_compaction_partial_update_and_aggregation(catalog: Catalog) -> None:
    t = catalog.create_table("db.agg", AGG, primary_keys=["product_id"], options={
        "bucket": "1", "merge-engine": "aggregation", "changelog-producer": "full-compaction",
        "full-compaction.delta-commits": "1", "fields.price.aggregate-function": "max",
        "fields.sales.aggregate-function": "sum"})
    t.write(pa.table({"product_id": [1], "price": [23.0], "sales": [15]}, schema=AGG))
    t.write(pa.table({"product_id": [1], "price": [30.2], "sales": [20]}, schema=AGG))
    assert all_changes(t) == [("+I", 1, 23.0, 15), ("-U", 1, 23.0, 15), ("+U", 1, 30.2, 35)]
    p = catalog.create_table("db.pu", PU, primary_keys=["k"], options={
        "bucket": "1", "merge-engine": "partial-update", "changelog-producer": "full-compaction",
        "full-compaction.delta-commits": "1"})
    p.write(pa.table({"k": [1], "a": [23.0], "b": [10], "c": [None]}, schema=PU))
    p.write(pa.table({"k": [1], "a": [None], "b": [None], "c": ["This is a book"]}, schema=PU))
    assert all_changes(p) == [("+I", 1, 23.0, 10, None), ("-U", 1, 23.0, 10, None),
                              ("+U", 1, 23.0, 10, "This is a book")]


def test_compaction_changelog_of_partitioned_table(catalog: Catalog) -> None:
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                        ("v", pa.string())])
    t = catalog.create_table("db.p", schema, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2", "changelog-producer": "lookup"})
    t.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 1], "v": ["x", "y", "z"]}, schema=schema))
    t.write(pa.table({"dt": ["b"], "id": [1], "v": ["Z"]}, schema=schema))
    rows = sorted(all_changes(t))
    assert rows == sorted([("+I", "a", 1, "x"), ("+I", "a", 2, "y"), ("+I", "b", 1, "z"), ("-U", "b", 1, "z"),
                           ("+U", "b", 1, "Z")])
    snap = t.latest_snapshot()
    assert snap is not None
    for e in changelog_file_metas(t, snap):
        assert t.file_io.exists(f"{t.path}/dt=b/bucket-{e.bucket}/{e.file.file_name}")


def changes_by_kind(changes: list[tuple[Any, ...]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in changes:
        out[c[0]] = out.get(c[0], 0) + 1
    return out


def test_changelog_record_count_counts_changelog_rows(catalog: Catalog) -> None:
    t = make(catalog, "lookup")
    seed_sequence(t)
    for sid, rows in changelogs(t).items():
        assert t.snapshot(sid).changelog_record_count == len(rows)
    assert changes_by_kind(all_changes(t)) == {"+I": 4, "-U": 2, "+U": 2, "-D": 1}


# ---- options -----------------------------------------------------------------------------------------------------
def test_option_rules_of_paimon(catalog: Catalog) -> None:
    from table_engine.errors import OptionError

    with pytest.raises(OptionError, match="incompatible with 'changelog-producer'='lookup'"):
        make(catalog, "lookup", name="a", **{"full-compaction.delta-commits": "1"})
    with pytest.raises(OptionError, match="read duplicated changes"):
        make(catalog, "full-compaction", name="b", **{"streaming-read-overwrite": "true"})
    with pytest.raises(OptionError, match="changelog-file.format"):
        make(catalog, "input", name="c", **{"changelog-file.format": "csv"})
    make(catalog, "input", name="c2", **{"changelog-file.format": "orc"})  # parquet, orc and avro are formats
    with pytest.raises(OptionError):
        make(catalog, "input", name="d", **{"changelog-file.stats-mode": "bogus"})
    with pytest.raises(OptionError, match="without primary keys"):
        catalog.create_table("db.append", S, options={"changelog-producer": "input"})
    t = make(catalog, "lookup", name="e")
    with pytest.raises(OptionError, match="read duplicated changes"):
        t.copy({"streaming-read-overwrite": "true"})


def test_changelog_file_compression_and_stats_mode(catalog: Catalog) -> None:
    import pyarrow.parquet as pq

    t = make(catalog, "input", **{"changelog-file.compression": "snappy", "changelog-file.stats-mode": "full",
                                  "metadata.stats-mode": "none"})
    sid = t.write(kv([1, 2], ["a", "b"]))
    assert sid is not None
    [e] = changelog_file_metas(t, t.snapshot(sid))
    meta = pq.ParquetFile(f"{t.path}/bucket-0/{e.file.file_name}").metadata
    assert meta.row_group(0).column(0).compression == "SNAPPY"
    assert e.file.value_stats_cols is None  # full stats on every column
    data = t.plan()[0].files[0]
    assert data.value_stats_cols == []  # data files: metadata.stats-mode none


def test_aborted_compaction_deletes_its_changelog_files(catalog: Catalog) -> None:
    from table_engine.store.compaction.compact import compaction_messages

    t = make(catalog, "lookup", **{"write-only": "true"})
    t.write(kv([1, 2], ["a", "b"]))
    messages = compaction_messages(t.store)
    files = [f"{t.path}/bucket-0/{f.file_name}" for m in messages for f in m.compact_changelog_files]
    assert files and all(t.file_io.exists(p) for p in files)
    assert all(not m.changelog_files for m in messages)  # compaction changelog goes with the COMPACT snapshot
    t.new_commit().abort(messages)
    assert not any(t.file_io.exists(p) for p in files)
    assert changelogs(t) == {}
