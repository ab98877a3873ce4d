"""Append-table compaction through the public API: dedicated compaction (unaware and fixed buckets, partitions,
``compaction.min.file-num``), writer-side compaction and ``write-only``, row order of fixed buckets, deletion
vectors applied and their index entries removed, and a bad partition spec leaving the table unchanged."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.clock import ManualClock
from table_engine.errors import SchemaError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.format.snapshot import CommitKind
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


def data(ids: Any, dt: str = "a") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids], "dt": [dt] * len(ids)},
                    schema=SCHEMA)


def append_table(catalog: Catalog, **options: str) -> Table:
    return catalog.create_table("db.ods", SCHEMA, partition_keys=["dt"], options={"bucket": "-1", **options})


def fixed_bucket_table(catalog: Catalog, **options: str) -> Table:
    return catalog.create_table("db.ods", SCHEMA, partition_keys=["dt"],
                                options={"bucket": "2", "bucket-key": "id", **options})


def write_batches(t: Table, n: int, size: int = 10, dt: str = "a") -> list[int]:
    ids: list[int] = []
    for i in range(n):
        batch = list(range(i * size, (i + 1) * size))
        t.write(data(batch, dt))
        ids += batch
    return ids


def files(t: Table) -> list[Any]:
    return [f for s in t.plan() for f in s.files]


def file_count(t: Table) -> dict[tuple[str, int], int]:
    """(dt, bucket) -> number of live files."""
    return {(s.partition_values[0], s.bucket): len(s.files) for s in t.plan()}


def ids_of(t: Table, **kw: Any) -> list[int]:
    return sorted(t.read(**kw).column("id").to_pylist())


def table_bytes(path: str) -> dict[str, str]:
    out = {}
    for root, _, names in os.walk(path):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out


# ---- dedicated compaction ------------------------------------------------------------------------------------------
def test_dedicated_compaction_of_an_unaware_bucket_table(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true"})
    ids = write_batches(t, 12)
    assert len(files(t)) == 12 and t.latest_snapshot().id == 12
    sid = t.maintenance.compact()
    assert sid == 13
    snap = t.latest_snapshot()
    assert snap.commit_kind == CommitKind.COMPACT and snap.total_record_count == len(ids)
    after = files(t)
    assert len(after) == 1
    assert all(f.level == 0 and f.file_source == int(FileSource.COMPACT) for f in after)
    assert (after[0].min_sequence_number, after[0].max_sequence_number) == (0, len(ids) - 1)
    assert ids_of(t) == sorted(ids)
    assert ids_of(t, snapshot_id=12) == sorted(ids)  # time travel still reads the old files
    assert t.maintenance.compact() is None and t.maintenance.compact(full=True) is None  # nothing small left to compact


def test_compaction_min_file_num_decides(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true", "compaction.min.file-num": "3"})
    write_batches(t, 2)
    assert t.maintenance.compact() is None and len(files(t)) == 2
    assert t.maintenance.compact(full=True) is not None  # a full compaction takes any two small files
    assert len(files(t)) == 1
    write_batches(t, 2, dt="b")
    t.write(data([900], "b"))
    assert t.maintenance.compact() is not None
    assert file_count(t) == {("a", 0): 1, ("b", 0): 1}


def test_default_min_file_num_is_five(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true"})
    write_batches(t, 4)
    assert t.maintenance.compact() is None
    write_batches(t, 1)
    assert t.maintenance.compact() is not None and len(files(t)) == 1


def test_partitions_select_what_is_compacted(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true"})
    for dt in ("a", "b"):
        write_batches(t, 6, dt=dt)
    assert t.maintenance.compact(partitions=[{"dt": "b"}]) is not None
    assert file_count(t) == {("a", 0): 6, ("b", 0): 1}


def test_an_unknown_partition_column_leaves_the_table_unchanged(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true"})
    write_batches(t, 6)
    before = table_bytes(t.path)
    with pytest.raises(SchemaError, match="nope"):
        t.maintenance.compact(partitions=[{"nope": "a"}])
    assert table_bytes(t.path) == before


def test_fixed_bucket_compaction_keeps_each_buckets_row_order(catalog: Catalog) -> None:
    t = fixed_bucket_table(catalog, **{"write-only": "true"})
    ids = write_batches(t, 11, size=7)
    before = {s.bucket: s.files for s in t.plan()}
    assert t.maintenance.compact() is not None
    for s in t.plan():
        old = sorted(before[s.bucket], key=lambda f: f.min_sequence_number)
        # 11 files: the first 10 are compacted in two groups of 5 consecutive files, the 11th stays
        assert len(s.files) == 3
        seqs = sorted((f.min_sequence_number, f.max_sequence_number) for f in s.files)
        assert seqs[0][0] == old[0].min_sequence_number
        assert all(a[1] + 1 == b[0] for a, b in zip(seqs, seqs[1:])), "sequence ranges must stay contiguous"
        assert seqs[-1] == (old[-1].min_sequence_number, old[-1].max_sequence_number)
    # within a bucket the rows read back in write order (ids were written ascending)
    for s in t.plan():
        got = t.new_read().read_split(s).column("id").to_pylist()
        assert got == sorted(got)
    assert ids_of(t) == sorted(ids)


def test_fixed_bucket_read_order_after_compaction(catalog: Catalog) -> None:
    t = fixed_bucket_table(catalog, **{"write-only": "true", "bucket": "1"})
    ids = write_batches(t, 10, size=5)
    order_before = t.read().column("id").to_pylist()
    assert order_before == ids
    assert t.maintenance.compact(full=True) is not None
    assert len(files(t)) == 1
    assert t.read().column("id").to_pylist() == ids


# ---- writers -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("maker", [append_table, fixed_bucket_table], ids=["unaware", "fixed"])
def test_writers_compact_as_they_write(catalog: Catalog, maker: Any) -> None:
    t = maker(catalog)
    ids = write_batches(t, 20)
    kinds = [s.commit_kind for s in t.snapshots()]
    assert CommitKind.COMPACT in kinds
    assert all(n < 5 for n in file_count(t).values()), file_count(t)
    assert ids_of(t) == sorted(ids)
    assert t.read().num_rows == len(ids)


def test_write_only_writers_leave_small_files(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true"})
    write_batches(t, 8)
    assert len(files(t)) == 8
    assert all(s.commit_kind == CommitKind.APPEND for s in t.snapshots())


def test_concurrent_writers_compacting_the_same_files_both_commit_their_data(catalog: Catalog) -> None:
    t = append_table(catalog)
    ids = write_batches(t, 4)
    w1, w2 = t.new_write(), t.new_write()
    w1.write(data([100]))
    w2.write(data([200]))
    m1, m2 = w1.prepare_commit(), w2.prepare_commit()  # both compact the same 4 committed files and their own
    assert m1[0].compact_before and m2[0].compact_before
    first = t.commit(m1)
    assert t.snapshot(first).commit_kind == CommitKind.COMPACT
    second = t.commit(m2)  # its compaction conflicts: dropped, its data committed
    assert t.snapshot(second).commit_kind == CommitKind.APPEND and second == first + 1
    assert ids_of(t) == sorted([*ids, 100, 200])
    live = {f.file_name for f in files(t)}
    leftover = [p for p in w2.written_paths() if os.path.basename(p) not in live and os.path.exists(p)]
    assert leftover == []  # the dropped compaction's output was deleted


def test_writer_whose_base_files_were_compacted_and_expired_commits_its_data(catalog: Catalog,
                                                                            clock: ManualClock) -> None:
    t = append_table(catalog, **{"snapshot.num-retained.min": "1"})
    ids = write_batches(t, 4)
    w = t.new_write()
    w.write(data([100]))  # the writer's base: the 4 committed files
    assert t.snapshot(t.maintenance.compact(full=True)).commit_kind == CommitKind.COMPACT
    clock.advance(1)  # snapshot 4 expires only once the compaction's snapshot is older than now - 0 (not the same ms)
    t.expire_snapshots(retain_min=1, time_retained=0)  # the 4 files are gone
    messages = w.prepare_commit()  # its compaction of them is skipped, not an error
    assert not any(m.compact_before for m in messages)
    sid = t.commit(messages)
    assert t.snapshot(sid).commit_kind == CommitKind.APPEND
    assert ids_of(t) == sorted([*ids, 100])
    live = {f.file_name for f in files(t)}
    assert [p for p in w.written_paths() if os.path.basename(p) not in live and os.path.exists(p)] == []


def test_writer_compaction_keeps_fixed_bucket_order(catalog: Catalog) -> None:
    t = fixed_bucket_table(catalog, bucket="1")
    ids = write_batches(t, 13, size=3)
    assert CommitKind.COMPACT in [s.commit_kind for s in t.snapshots()]
    assert t.read().column("id").to_pylist() == ids


# ---- deletion vectors ----------------------------------------------------------------------------------------------
def delete_rows(t: Table, positions: dict[str, list[int]]) -> None:
    """Mark rows of data files deleted in a new deletion-vector index file (what a DELETE on an append table with
    deletion vectors commits)."""
    snap = t.latest_snapshot()
    ctx = t.store
    by_bucket: dict[tuple[bytes, int], Any] = {}
    for s in t.plan():
        for f in s.files:
            if f.file_name in positions:
                by_bucket.setdefault((s.partition, s.bucket), (s.total_buckets, []))[1].append(f.file_name)
    live = {}
    for e in ctx.index_entries(snap):
        if e.index_file.index_type == DELETION_VECTORS_INDEX:
            live.setdefault((e.partition, e.bucket), []).append(e.index_file)
    messages = []
    for (part, bucket), (total, names) in by_bucket.items():
        dvs = BucketDeletionVectors(ctx.file_io, ctx.table_path, live.get((part, bucket), []))
        for n in names:
            dvs.delete(n, positions[n])
        new, old = dvs.flush()
        messages.append(CommitMessage(part, bucket, total, new_index_files=new, deleted_index_files=old))
    t.commit(messages)


def dv_entries(t: Table) -> list[Any]:
    return [e for e in t.store.index_entries(t.latest_snapshot())
            if e.index_file.index_type == DELETION_VECTORS_INDEX]


@pytest.mark.parametrize("maker", [append_table, fixed_bucket_table], ids=["unaware", "fixed"])
def test_compaction_drops_deleted_rows_and_their_vectors(catalog: Catalog, maker: Any) -> None:
    t = maker(catalog, **{"write-only": "true", "deletion-vectors.enabled": "true"})
    ids = write_batches(t, 6)
    victims = {}
    for s in t.plan():
        f = sorted(s.files, key=lambda x: x.min_sequence_number)[0]
        victims[f.file_name] = [0, 1]
    delete_rows(t, victims)
    expected = ids_of(t)
    assert len(expected) == len(ids) - 2 * len(victims) and dv_entries(t)
    assert t.maintenance.compact(full=True) is not None
    assert ids_of(t) == expected
    assert dv_entries(t) == []  # every file with a vector was rewritten: the index entries are gone
    assert sum(f.row_count for f in files(t)) == len(expected)
    assert not {f.file_name for f in files(t)} & set(victims)


def test_unaware_minor_compaction_takes_files_over_the_delete_ratio(catalog: Catalog) -> None:
    t = append_table(catalog, **{"write-only": "true", "deletion-vectors.enabled": "true",
                                 "target-file-size": "1 kb"})
    write_batches(t, 2)
    assert all(f.file_size >= t.options.compaction_file_size(False) for f in files(t))  # no file is small
    assert len(files(t)) == 2 and t.maintenance.compact() is None
    first = sorted(files(t), key=lambda x: x.min_sequence_number)[0]
    delete_rows(t, {first.file_name: [0, 1]})  # 2 of 10 rows: not above compaction.delete-ratio-threshold 0.2
    assert t.maintenance.compact() is None
    delete_rows(t, {first.file_name: [2]})
    assert t.maintenance.compact() is not None
    assert first.file_name not in {f.file_name for f in files(t)}
    assert dv_entries(t) == []
    assert ids_of(t) == list(range(3, 20))


# ---- a property test against a list model ---------------------------------------------------------------------------
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.one_of(st.integers(min_value=1, max_value=6), st.sampled_from(["minor", "full"])),
                    min_size=1, max_size=14),
       min_files=st.integers(min_value=2, max_value=5), write_only=st.booleans())
def test_one_bucket_reads_in_write_order_through_writes_and_compactions(
        tmp_path_factory: pytest.TempPathFactory, ops: list[int | str], min_files: int, write_only: bool) -> None:
    catalog = Catalog(str(tmp_path_factory.mktemp("wh")))
    t = fixed_bucket_table(catalog, bucket="1", **{"compaction.min.file-num": str(min_files),
                                                   "write-only": str(write_only).lower()})
    model: list[int] = []
    for op in ops:
        if isinstance(op, int):
            batch = list(range(len(model), len(model) + op))
            t.write(data(batch))
            model += batch
        else:
            t.maintenance.compact(full=op == "full")
        assert t.read().column("id").to_pylist() == model
        live = sorted(files(t), key=lambda f: f.min_sequence_number)
        assert all(a.max_sequence_number < b.min_sequence_number for a, b in zip(live, live[1:]))
        if not write_only:  # writers compact: never min_files small files in a row left behind a commit
            assert len(live) < min_files or op in ("minor", "full")
