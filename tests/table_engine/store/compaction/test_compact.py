"""Compaction through the public API: dedicated full/minor compaction, writer-side compaction (stop trigger,
write-only, copy-on-write), record-level expiry, read-optimized reads, races, and a property test against a model."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import tempfile
import threading
import time
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog, CommitConflictError
from table_engine.clock import ManualClock
from table_engine.errors import SchemaError, TableNotExistError, UnsupportedError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.snapshot import CommitKind
from table_engine.lsm.compaction.universal import UniversalCompaction
from table_engine.lsm.levels import KeyCodec, Levels, overlapping_files
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.compact import compaction_messages
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
MAX_LEVEL = 5  # default num-levels = compaction trigger (5) + 1


def data(ids: Any, v: str = "x", dt: str = "a") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids], "dt": [dt] * len(ids)},
                    schema=SCHEMA)


def table(catalog: Catalog, partitioned: bool = False, **options: str) -> Table:
    opts = {"bucket": "2", **options}
    return catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"] if partitioned else ["id"],
                                partition_keys=["dt"] if partitioned else [], options=opts)


def rows(t: Table, **kw: Any) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"], r["dt"]) for r in t.read(**kw).to_pylist())


def runs_per_bucket(t: Table) -> list[int]:
    codec = KeyCodec([f.type for f in t.schema.key_fields()])
    return [Levels(s.files, t.options.num_levels(), codec).number_of_sorted_runs() for s in t.plan()]


def files(t: Table) -> list[Any]:
    return [f for s in t.plan() for f in s.files]


def history(t: Table, n: int = 6, deletes: bool = True) -> None:
    """Overlapping upserts, then deletes: n commits."""
    for i in range(n):
        t.write(data(range(i * 20, i * 20 + 50), v=f"c{i}-"))
    if deletes:
        t.write(data([0, 1, 2, 45, 1000]), row_kinds=["-D"] * 5)


# ---- dedicated compaction -------------------------------------------------------------------------------------------
def test_full_compaction_leaves_one_sorted_run_per_bucket_at_the_max_level(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "4"})
    history(t)
    expected = rows(t)
    assert all(f.level == 0 for f in files(t))
    sid = t.maintenance.compact(full=True)
    assert sid is not None and t.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert rows(t) == expected
    assert runs_per_bucket(t) == [1, 1, 1, 1]
    codec = KeyCodec([f.type for f in t.schema.key_fields()])
    for s in t.plan():
        assert all(f.level == MAX_LEVEL and f.file_source == FileSource.COMPACT for f in s.files)
        assert all(f.delete_row_count == 0 for f in s.files)  # -D rows are dropped at the max level
        assert overlapping_files(s.files, codec) is None
    assert t.maintenance.compact(full=True) is None  # nothing left to do
    assert rows(t, read_optimized=True) == expected
    # every snapshot still reads as before (time travel across compaction)
    assert rows(t, snapshot_id=sid - 1) == expected


def test_minor_compaction_does_what_the_picker_picks(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "1", "num-sorted-run.compaction-trigger": "3",
                          "compaction.max-size-amplification-percent": "100000", "compaction.size-ratio": "0"})
    t.write(data(range(2000), v="a-long-value-to-make-this-file-large-"))
    t.write(data(range(50, 60)))
    assert t.maintenance.compact() is None  # 2 runs < trigger
    assert t.maintenance.compact(full=True) is not None  # one large run at the max level (3)
    t.write(data(range(50, 60), v="y"))
    t.write(data(range(150, 160), v="z"))
    expected = rows(t)
    (split,) = t.plan()
    codec = KeyCodec([f.type for f in t.schema.key_fields()])
    levels = Levels(split.files, 4, codec)
    assert levels.number_of_sorted_runs() == 3
    unit = UniversalCompaction(100000, 0, 3).pick(4, levels.sorted_runs())
    # size ratio: the two level-0 runs are alike, the max-level run is far larger: 2 runs to level 3 - 1
    assert unit is not None and len(unit.files) == 2 and unit.output_level == 2
    assert t.maintenance.compact() is not None
    after = files(t)
    untouched = {f.file_name for f in split.files} - {f.file_name for f in unit.files}
    assert len(untouched) == 1 and untouched <= {f.file_name for f in after}
    assert {f.level for f in after if f.file_name not in untouched} == {2}
    assert runs_per_bucket(t) == [2]
    assert rows(t) == expected


def test_minor_compaction_below_the_max_level_keeps_deletes(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "1", "num-sorted-run.compaction-trigger": "3",
                          "compaction.max-size-amplification-percent": "100000"})
    t.write(data(range(3000), v="a-long-value-to-make-this-file-large-"))
    t.maintenance.compact(full=True)  # old data at the max level
    t.write(data(range(10)), row_kinds=["-D"] * 10)
    t.write(data(range(10, 20)), row_kinds=["-D"] * 10)
    assert t.maintenance.compact() is not None
    below = [f for f in files(t) if f.level < MAX_LEVEL]
    assert below and all(0 < f.level for f in below)
    assert sum(f.delete_row_count or 0 for f in below) == 20  # must stay: they delete rows of the older run
    assert [r[0] for r in rows(t)] == list(range(20, 3000))
    t.maintenance.compact(full=True)
    assert all(f.delete_row_count == 0 for f in files(t)) and [r[0] for r in rows(t)] == list(range(20, 3000))


def test_compaction_of_selected_and_idle_partitions(catalog: Catalog, clock: ManualClock) -> None:
    t = table(catalog, partitioned=True, **{"write-only": "true"})
    for dt in ("a", "b"):
        for i in range(3):
            t.write(data(range(i * 10, i * 10 + 30), v=f"{i}", dt=dt))
    expected = rows(t)
    with pytest.raises(SchemaError, match="not partition columns"):
        t.maintenance.compact(full=True, partitions=[{"nope": 1}])
    # both partitions just written
    assert t.maintenance.compact(full=True, idle_partitions_older_than_ms=3_600_000) is None
    assert t.maintenance.compact(full=True, partitions=[{"dt": "a"}]) is not None
    by_part = {s.partition_values: {f.level for f in s.files} for s in t.plan()}
    assert by_part[("a",)] == {MAX_LEVEL} and by_part[("b",)] == {0}
    clock.advance(2)  # partition b was last written 2 ms ago: idle for longer than 1 ms
    assert t.maintenance.compact(full=True, idle_partitions_older_than_ms=1) is not None
    assert {f.level for f in files(t)} == {MAX_LEVEL}
    assert rows(t) == expected


def test_compaction_of_an_empty_or_append_table(catalog: Catalog) -> None:
    t = table(catalog)
    assert t.maintenance.compact(full=True) is None
    app = catalog.create_table("db.app", SCHEMA)  # append tables compact too (tests/.../test_append_compact.py)
    assert app.maintenance.compact() is None and app.maintenance.compact(full=True) is None


# ---- writer-side compaction -----------------------------------------------------------------------------------------
def test_writer_compaction_keeps_runs_under_the_stop_trigger_across_30_commits(catalog: Catalog) -> None:
    t = table(catalog)
    model: dict[int, str] = {}
    trigger, stop = t.options.num_sorted_runs_compaction_trigger(), t.options.num_sorted_runs_stop_trigger()
    for i in range(30):
        ids = range(i * 7, i * 7 + 12)
        t.write(data(ids, v=f"c{i}-"))
        model.update({k: f"c{i}-{k}" for k in ids})
        assert max(runs_per_bucket(t)) <= trigger <= stop
    assert rows(t) == sorted((k, v, "a") for k, v in model.items())
    kinds = [s.commit_kind for s in t.snapshots()]
    assert kinds.count(CommitKind.COMPACT) > 0
    # Paimon's order: the new data first (APPEND), then its compaction (COMPACT) of the same commit
    for prev, cur in zip(t.snapshots(), t.snapshots()[1:]):
        if cur.commit_kind == CommitKind.COMPACT:
            assert prev.commit_kind == CommitKind.APPEND and prev.commit_user == cur.commit_user


def test_stop_trigger_compacts_while_writing(catalog: Catalog) -> None:
    t = table(catalog, **{"bucket": "1", "write-buffer-size": "1 kb", "num-sorted-run.compaction-trigger": "2",
                          "num-sorted-run.stop-trigger": "3"})
    w = t.new_write()
    for i in range(15):
        w.write(data(range(i * 5, i * 5 + 40), v=f"c{i}-"))
        state = next(iter(w._buckets.values()))  # the writer's levels of its only bucket
        assert state.lsm is not None and state.lsm.levels.number_of_sorted_runs() <= 3
    msgs = w.prepare_commit()
    assert msgs[0].compact_before and msgs[0].compact_after
    t.commit(msgs)
    # key k was last written by batch min(k // 5, 14)
    assert rows(t) == [(k, f"c{min(k // 5, 14)}-{k}", "a") for k in range(110)]
    assert max(runs_per_bucket(t)) <= 2
    # files compacted away within this commit were deleted; the ones of the commit are all there
    for e in live_entries(t.file_io, t.path, t.latest_snapshot()):
        assert os.path.exists(t.store.path_factory.data_file(e.partition, e.bucket, e.file))


def test_write_only_writers_never_compact(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "1"})
    for i in range(12):
        t.write(data(range(i, i + 10)))
    assert all(s.commit_kind == CommitKind.APPEND for s in t.snapshots())
    assert {f.level for f in files(t)} == {0} and len(files(t)) == 12


def test_copy_on_write_reads_only_max_level_files(catalog: Catalog) -> None:
    t = table(catalog, **{"full-compaction.delta-commits": "1"})
    ro = catalog.get_table("db.t$ro")
    for i in range(5):
        t.write(data(range(i * 10, i * 10 + 25), v=f"c{i}-"))
        assert {f.level for f in files(t)} == {MAX_LEVEL}
        assert rows(ro) == rows(t) == rows(t, read_optimized=True)
    t.write(data([3, 4]), row_kinds=["-D", "-D"])
    assert all(f.delete_row_count == 0 for f in files(t))
    assert 3 not in {r[0] for r in rows(ro)} and rows(ro) == rows(t)


def test_full_compaction_every_n_commits_of_a_writer(catalog: Catalog) -> None:
    t = table(catalog, **{"full-compaction.delta-commits": "3", "bucket": "1"})
    w = t.new_write()
    levels = []
    for i in range(6):
        w.write(data(range(i * 10, i * 10 + 15)))
        t.commit(w.prepare_commit())
        levels.append({f.level for f in files(t)})
    assert levels == [{0}, {0}, {MAX_LEVEL}, {0, MAX_LEVEL}, {0, MAX_LEVEL}, {MAX_LEVEL}]


def test_full_compaction_by_commit_identifier(catalog: Catalog) -> None:
    # Paimon: identifiers that are multiples of delta-commits, and every batch commit (Long.MAX_VALUE), compact fully
    t = table(catalog, **{"full-compaction.delta-commits": "3", "bucket": "1"})
    t.write(data(range(15)))                                  # Table.write: a batch commit
    assert {f.level for f in files(t)} == {MAX_LEVEL}
    levels = []
    for ident in (1, 2, 3):
        w = t.new_write()                                     # a fresh writer each time: the identifier decides
        w.write(data(range(ident * 10, ident * 10 + 15)))
        t.commit(w.prepare_commit(ident), commit_identifier=ident)
        levels.append({f.level for f in files(t)})
    assert levels == [{0, MAX_LEVEL}, {0, MAX_LEVEL}, {MAX_LEVEL}]


def test_overwrite_drops_the_writers_compaction(catalog: Catalog) -> None:
    t = table(catalog, **{"bucket": "1", "full-compaction.delta-commits": "1"})
    t.write(data(range(10)))
    t.write(data(range(5, 8), v="new"), overwrite=True)
    assert rows(t) == [(k, f"new{k}", "a") for k in range(5, 8)]
    assert t.latest_snapshot().commit_kind == CommitKind.OVERWRITE


# ---- record-level expiry --------------------------------------------------------------------------------------------
def test_record_level_expire_during_compaction(catalog: Catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("ts", pa.int32())])
    t = catalog.create_table("db.e", schema, primary_keys=["id"], options={
        "bucket": "1", "write-only": "true", "record-level.expire-time": "1 d", "record-level.time-field": "ts"})
    now = int(time.time())
    t.write(pa.table({"id": [1, 2, 3, 4], "ts": [now - 3 * 86400, now, now - 2 * 86400, None]}, schema=schema))
    assert len(t.read()) == 4  # expiry happens in compaction only
    t.maintenance.compact(full=True)
    assert sorted(t.read().column("id").to_pylist()) == [2, 4]
    # a single max-level run with expired records: a full compaction rewrites just that file
    (top,) = files(t)
    t2 = catalog.get_table("db.e")
    messages = compaction_messages(t2.store, full=True)
    assert messages == []  # nothing expired yet
    t.write(pa.table({"id": [5], "ts": [now - 5 * 86400]}, schema=schema))
    t.maintenance.compact(full=True)
    assert sorted(t.read().column("id").to_pylist()) == [2, 4]
    assert top.file_name not in {f.file_name for f in files(t)}


# ---- merge-on-read across levels -----------------------------------------------------------------------------------
def test_merge_on_read_across_levels_and_overlapping_sequences(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "1", "num-sorted-run.compaction-trigger": "3"})
    model: dict[int, str] = {}

    def write(ids: Any, v: str, kinds: list[str] | None = None) -> None:
        ids = list(ids)
        t.write(data(ids, v=v), row_kinds=kinds)
        for k, kind in zip(ids, kinds or ["+I"] * len(ids)):
            if kind in ("+I", "+U"):
                model[k] = f"{v}{k}"
            else:
                model.pop(k, None)

    for i in range(5):
        write(range(i * 30, i * 30 + 60), f"a{i}-")
    t.maintenance.compact()
    write(range(10, 20), "b", ["-D"] * 10)
    write(range(15, 25), "c")
    assert len({f.level for f in files(t)}) >= 2
    assert rows(t) == sorted((k, v, "a") for k, v in model.items())
    # two writers restored from the same snapshot: overlapping sequence numbers, newest file must not win blindly
    w1, w2 = t.new_write(), t.new_write()
    w1.write(data([100, 101], v="w1-"))
    w2.write(data([101, 102], v="w2-"))
    t.commit(w1.prepare_commit() + w2.prepare_commit())
    got = {r[0]: r[1] for r in rows(t)}
    assert got[100] == "w1-100" and got[102] == "w2-102" and got[101] in ("w1-101", "w2-101")
    t.maintenance.compact(full=True)
    after = {r[0]: r[1] for r in rows(t)}
    assert after == got  # compaction resolves the tie exactly as merge-on-read did


# ---- read-optimized view -----------------------------------------------------------------------------------------
def test_read_optimized_view(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true"})
    history(t, n=3)
    ro = catalog.get_table("db.t$ro")
    assert ro.identifier == "db.t$ro" and len(ro.read()) == 0  # nothing fully compacted yet
    t.maintenance.compact(full=True)
    t.write(data([7, 8000], v="late"))  # level 0: invisible to $ro until compacted
    assert rows(ro) == list(rows(t, snapshot_id=t.latest_snapshot_id() - 1))
    assert rows(ro) != rows(t)
    assert rows(t, read_optimized=True) == rows(ro)
    assert rows(ro, read_optimized=False) == rows(t)
    with pytest.raises(UnsupportedError, match="read-only"):
        ro.write(data([1]))
    with pytest.raises(TableNotExistError, match="nope"):
        catalog.get_table("db.t$nope")


# ---- concurrency ---------------------------------------------------------------------------------------------------
def test_two_racing_compactions_exactly_one_wins(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true"})
    history(t)
    expected = rows(t)
    before = {f.file_name for f in files(t)}
    m1 = compaction_messages(t.store, full=True)
    m2 = compaction_messages(t.store, full=True)  # both from the same snapshot
    sid = t.commit(m1)
    with pytest.raises(CommitConflictError, match="no longer in the table"):
        c = t.new_commit()
        try:
            c.commit(m2)
        except BaseException:
            c.abort(m2)
            raise
    assert t.latest_snapshot_id() == sid and rows(t) == expected
    live = {f.file_name for f in files(t)}
    assert live == {f.file_name for m in m1 for f in m.compact_after}
    for m in m2:  # the loser's files are gone, the winner's and the old ones (still in old snapshots) stay
        for f in m.compact_after:
            assert not os.path.exists(t.store.path_factory.data_file(m.partition, m.bucket, f))
    for f in before:
        assert any(pathlib.Path(t.path).rglob(f))


def test_concurrent_compaction_threads(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "4"})
    history(t)
    expected = rows(t)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def run() -> None:
        other = catalog.get_table("db.t")
        barrier.wait()
        try:
            outcomes.append("won" if other.maintenance.compact(full=True) is not None else "nothing")
        except CommitConflictError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=run) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert outcomes.count("won") >= 1 and sorted(outcomes) in (["conflict", "won"], ["nothing", "won"])
    assert rows(t) == expected and runs_per_bucket(t) == [1, 1, 1, 1]


def test_writer_compaction_invalidated_mid_commit_is_dropped(catalog: Catalog, monkeypatch, caplog) -> None:
    t = table(catalog, **{"bucket": "1", "full-compaction.delta-commits": "1"})
    t.write(data(range(10)))
    w = t.new_write()
    w.write(data(range(5, 15), v="n"))
    msgs = w.prepare_commit()
    assert msgs[0].compact_before and msgs[0].new_files
    original = FileStoreCommit._commit_one
    calls = []

    def racing(self: FileStoreCommit, *args: Any) -> int | None:
        sid = original(self, *args)
        if not calls:  # right after the APPEND snapshot: another job compacts the same files
            calls.append(sid)
            catalog.get_table("db.t").maintenance.compact(full=True)
        return sid

    monkeypatch.setattr(FileStoreCommit, "_commit_one", racing)
    sid = t.commit(msgs)
    assert sid == calls[0]  # the APPEND snapshot stands, the writer's compaction is dropped
    assert "compaction dropped" in caplog.text
    assert rows(t) == sorted([(k, f"x{k}", "a") for k in range(5)] + [(k, f"n{k}", "a") for k in range(5, 15)])
    for f in msgs[0].compact_after:
        assert not os.path.exists(t.store.path_factory.data_file(msgs[0].partition, 0, f))


def test_two_writers_compacting_one_bucket_keep_their_data_not_their_compactions(catalog: Catalog, caplog) -> None:
    t = table(catalog, **{"bucket": "1", "full-compaction.delta-commits": "1"})
    t.write(data(range(10)))
    w1, w2 = t.new_write(), t.new_write()
    w1.write(data(range(5, 8), v="w1-"))
    w2.write(data(range(20, 23), v="w2-"))
    m1, m2 = w1.prepare_commit(), w2.prepare_commit()
    assert m1[0].compact_before and m2[0].compact_before  # both compacted the same committed file
    t.commit(m1 + m2)
    assert "several writers compacted" in caplog.text
    assert t.latest_snapshot().commit_kind == CommitKind.APPEND
    got = {r[0]: r[1] for r in rows(t)}
    assert sorted(got) == [*range(10), 20, 21, 22] and got[6] == "w1-6" and got[21] == "w2-21"
    for m in m1 + m2:
        for f in m.compact_after:
            assert not os.path.exists(t.store.path_factory.data_file(m.partition, m.bucket, f))


def test_overlapping_outputs_at_one_level_are_an_lsm_conflict(catalog: Catalog) -> None:
    t = table(catalog, **{"write-only": "true", "bucket": "1"})
    t.write(data(range(10)))
    t.write(data(range(5, 15)))
    a, b = (e for e in live_entries(t.file_io, t.path, t.latest_snapshot()))

    def upgrade(e: Any) -> CommitMessage:
        return CommitMessage(e.partition, e.bucket, e.total_buckets, compact_before=[e.file],
                             compact_after=[dataclasses.replace(e.file, level=3)])

    t.commit([upgrade(a)])
    with pytest.raises(CommitConflictError, match="overlap in key range at level 3"):
        t.commit([upgrade(b)])


# ---- property: any commits + compactions read like the dict model ------------------------------------------------
row = st.tuples(st.integers(0, 40), st.sampled_from(["a", "b"]), st.sampled_from(["+I", "+U", "-U", "-D"]))
steps = st.lists(st.one_of(st.lists(row, min_size=1, max_size=30), st.sampled_from(["minor", "full"])),
                 min_size=1, max_size=10)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, write_only=st.booleans(), trigger=st.sampled_from(["2", "3", "5"]),
       bucket=st.sampled_from(["1", "2", "-1"]), buffer=st.sampled_from(["256 mb", "1 kb"]))
def test_commits_and_compactions_read_like_a_dict_model(steps, write_only, trigger, bucket, buffer) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cat = Catalog(str(pathlib.Path(tmp) / "wh"))
        t = cat.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={
            "bucket": bucket, "write-only": str(write_only).lower(), "num-sorted-run.compaction-trigger": trigger,
            "write-buffer-size": buffer, "target-file-size": "2 kb"})
        model: dict[tuple[int, str], str] = {}
        history_: list[tuple[int, dict[tuple[int, str], str]]] = []
        for i, s in enumerate(steps):
            if isinstance(s, str):
                sid = t.maintenance.compact(full=(s == "full"))
                if s == "full":  # everything is one run at the max level now: $ro sees it all
                    got = {(r["id"], r["dt"]): r["v"] for r in t.read(read_optimized=True).to_pylist()}
                    assert got == model
            else:
                batch = pa.table({"id": pa.array([r[0] for r in s], pa.int64()),
                                  "v": [f"s{i}-{r[0]}" for r in s], "dt": [r[1] for r in s]}, schema=SCHEMA)
                sid = t.write(batch, row_kinds=[r[2] for r in s])
                for k, dt, kind in s:
                    if kind in ("+I", "+U"):
                        model[(k, dt)] = f"s{i}-{k}"
                    else:
                        model.pop((k, dt), None)
            if sid is not None:
                history_.append((sid, dict(model)))
        for sid, expected in history_:
            got = {(r["id"], r["dt"]): r["v"] for r in t.read(snapshot_id=sid).to_pylist()}
            assert got == expected, f"snapshot {sid}"
        # every snapshot in between (the APPEND before a writer's COMPACT) holds the state after its commit
        by_sid = dict(history_)
        snaps = t.snapshots()
        for prev, cur in zip(snaps, snaps[1:]):
            if cur.commit_kind == CommitKind.COMPACT and cur.id in by_sid and prev.id not in by_sid:
                got = {(r["id"], r["dt"]): r["v"] for r in t.read(snapshot_id=prev.id).to_pylist()}
                assert got == by_sid[cur.id]


def test_a_snapshot_expired_while_its_compaction_reads_it_is_planned_again(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Other processes write, compact and expire (one snapshot retained) while a compaction reads the latest
    snapshot's manifests: they are gone; the compaction plans again on the new latest. A manifest missing from a
    snapshot that still exists is damage, and fails."""
    from table_engine.errors import MissingFileError
    from table_engine.store.compaction import compact as compact_module

    t = Catalog(str(tmp_path / "w")).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                                  primary_keys=["id"], options={"bucket": "1"})
    for i in range(3):
        t.write(pa.table({"id": pa.array([i, i + 10], pa.int64()), "v": ["a", "b"]}), maintain=False)
    real = compact_module.live_entries
    interfered: list[int] = []

    def meanwhile(file_io: Any, table_path: str, snapshot: Any, *a: Any, **k: Any) -> Any:
        if not interfered:  # once: another process commits, compacts and expires everything before the newest
            interfered.append(snapshot.id)
            other = Catalog(str(tmp_path / "w")).get_table("db.t")
            other.write(pa.table({"id": pa.array([99], pa.int64()), "v": ["z"]}), maintain=False)
            other.maintenance.compact(full=True)
            other.expire_snapshots(retain_min=1, time_retained=0)
        return real(file_io, table_path, snapshot, *a, **k)

    monkeypatch.setattr(compact_module, "live_entries", meanwhile)
    assert t.maintenance.compact(full=True) is None  # planned again on the compacted latest: nothing left to do
    assert interfered == [3] and t.latest_snapshot_id() == 5 and t.earliest_snapshot_id() == 5
    assert sorted(t.read().column("id").to_pylist()) == [0, 1, 2, 10, 11, 12, 99]

    t.write(pa.table({"id": pa.array([7], pa.int64()), "v": ["q"]}), maintain=False)
    snap = t.latest_snapshot()
    assert snap is not None
    os.remove(f"{t.path}/manifest/{snap.delta_manifest_list}")  # damage, not expiry
    with pytest.raises(MissingFileError, match="snapshot 6"):
        t.maintenance.compact(full=True)
