"""Postpone bucket tables (``bucket`` = -2): writes land in ``bucket-postpone`` as Paimon lays them out, batch reads
skip them, and the dedicated compaction assigns them to buckets (the partition's count, else
``postpone.default-bucket-num`` or the estimate) in one COMPACT snapshot, merged per the merge engine; concurrent
writers and a compactor lose nothing, on a local disk and on S3."""

from __future__ import annotations

import re
import threading
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.core_options import CommitUser
from table_engine.errors import CommitConflictError, OptionError
from table_engine.format.binary_row import decode_row
from table_engine.format.snapshot import CommitKind
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
Model = dict[tuple[str, int], int]


def make(catalog: Catalog, name: str = "db.t", **options: str) -> Table:
    return catalog.create_table(name, SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "-2", **options})


def rows(*rs: tuple[str, int, int]) -> pa.Table:
    return pa.table({"dt": [r[0] for r in rs], "id": [r[1] for r in rs], "v": [r[2] for r in rs]}, schema=SCHEMA)


def content(t: Table) -> Model:
    return {(r["dt"], r["id"]): r["v"] for r in t.read().to_pylist()}


def buckets(t: Table) -> dict[tuple[str, int], int]:
    """(partition bytes as hex, bucket) -> total buckets of the live files."""
    out = {}
    for e in live_entries(t.file_io, t.path, t.latest_snapshot()):
        out[(e.partition.hex(), e.bucket)] = e.total_buckets
    return out


def bucket_counts(t: Table) -> dict[str, int]:
    """Partition value -> the bucket count of its real buckets."""
    out: dict[str, int] = {}
    for e in live_entries(t.file_io, t.path, t.latest_snapshot()):
        if e.bucket >= 0:
            (dt,) = decode_row(e.partition, [t.schema.field("dt").type])
            assert out.setdefault(dt, e.total_buckets) == e.total_buckets
    return out


def test_writes_are_postponed_until_a_compaction_publishes_them(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(rows(("a", 1, 10), ("a", 2, 20), ("b", 3, 30)))
    t.write(rows(("a", 1, 11), ("b", 3, 0)), row_kinds=["+U", "-D"])
    assert t.read().num_rows == 0  # invisible before the compaction
    entries = live_entries(t.file_io, t.path, t.latest_snapshot())
    assert {e.bucket for e in entries} == {-2} and {e.total_buckets for e in entries} == {-2}
    for e in entries:  # Paimon's postpone layout: level 0, writer-prefixed names, sequence numbers from 0
        assert e.file.level == 0 and e.file.min_sequence_number == 0
        assert re.fullmatch(r"data--u-[^/]+-s-\d+-w-[0-9a-f-]+-0\.avro", e.file.file_name), e.file.file_name
        assert t.file_io.exists(f"{t.path}/dt={'a' if b'a' in e.partition else 'b'}/bucket-postpone/"
                                f"{e.file.file_name}")
    sid = t.maintenance.compact()
    assert sid is not None
    assert t.snapshot(sid).commit_kind is CommitKind.COMPACT
    assert content(t) == {("a", 1): 11, ("a", 2): 20}
    assert all(b >= 0 for _, b in buckets(t))  # every postponed file was removed
    assert t.maintenance.compact() is None  # nothing left to do


def test_new_partition_gets_default_bucket_num_existing_keeps_its_count(catalog: Catalog) -> None:
    t = make(catalog, **{"postpone.default-bucket-num": "3"})
    t.write(rows(*(("a", i, i) for i in range(50))))
    t.maintenance.compact()
    assert bucket_counts(t) == {"a": 3}
    # a later default does not rescale a partition that has buckets; a new partition takes it
    t2 = t.copy({"postpone.default-bucket-num": "5"})
    t2.write(rows(*(("a", i, -i) for i in range(0, 50, 2)), *(("b", i, i) for i in range(40))))
    t2.maintenance.compact()
    assert bucket_counts(t2) == {"a": 3, "b": 5}
    expected = {("a", i): (-i if i % 2 == 0 else i) for i in range(50)} | {("b", i): i for i in range(40)}
    assert content(t2) == expected
    assert len({b for (_, b) in buckets(t2) if b >= 0}) == 5


def test_bucket_count_estimated_from_target_rows(catalog: Catalog) -> None:
    t = make(catalog, **{"postpone.target-row-num-per-bucket": "10"})
    t.write(rows(*(("a", i, i) for i in range(25))))
    t.maintenance.compact()
    assert bucket_counts(t) == {"a": 3}
    # default: ceil(file bytes / 1 gb) = 1 bucket
    u = make(catalog, "db.u")
    u.write(rows(("a", 1, 1)))
    u.maintenance.compact()
    assert bucket_counts(u) == {"a": 1}


def test_merge_engine_and_existing_bucket_data(catalog: Catalog) -> None:
    t = make(catalog, **{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                         "postpone.default-bucket-num": "2"})
    t.write(rows(("a", 1, 1), ("a", 2, 2)))
    t.maintenance.compact()
    t.write(rows(("a", 1, 10)))
    t.write(rows(("a", 1, 100), ("a", 3, 3)))
    assert content(t) == {("a", 1): 1, ("a", 2): 2}
    t.maintenance.compact(full=True)
    assert content(t) == {("a", 1): 111, ("a", 2): 2, ("a", 3): 3}


def test_read_windows_cut_files_by_bytes_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from table_engine.store.writing import postpone_compact

    monkeypatch.setattr(postpone_compact, "_READ_WINDOW_BYTES", 100)
    monkeypatch.setattr(postpone_compact, "_READ_WINDOW_FILES", 3)
    files: Any = [SimpleNamespace(file_size=s) for s in (40, 50, 20, 200, 10, 10, 10, 10)]
    windows = postpone_compact.read_windows(files)
    assert [[f.file_size for f in w] for w in windows] == [[40, 50], [20], [200], [10, 10, 10], [10]]
    assert postpone_compact.read_windows([]) == []


def test_compaction_reading_one_file_at_a_time_keeps_the_writers_order(catalog: Catalog,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of one file (files bigger than the window): the same result, the last write of a key wins."""
    from table_engine.store.writing import postpone_compact

    monkeypatch.setattr(postpone_compact, "_READ_WINDOW_BYTES", 1)
    t = make(catalog, **{"postpone.default-bucket-num": "3"})
    model: Model = {}
    for n in range(6):
        batch = [("a" if i % 2 else "b", i, n * 100 + i) for i in range(n, n + 20)]
        t.write(rows(*batch))
        model.update({(dt, i): v for dt, i, v in batch})
    t.maintenance.compact()
    assert content(t) == model


def test_postpone_needs_a_primary_key(catalog: Catalog) -> None:
    with pytest.raises(OptionError, match="bucket = -2"):
        catalog.create_table("db.a", SCHEMA, options={"bucket": "-2"})
    assert not catalog.table_exists("db.a")


def test_a_second_compactor_of_the_same_files_conflicts(catalog: Catalog) -> None:
    from table_engine.store.context import StoreContext
    from table_engine.store.writing.postpone_compact import postpone_compaction_messages

    t = make(catalog)
    t.write(rows(("a", 1, 1)))
    ctx = StoreContext(t.file_io, t.path, t.schema, t.options)
    stale = postpone_compaction_messages(ctx)
    assert t.maintenance.compact() is not None
    commit = t.new_commit()
    with pytest.raises(CommitConflictError):
        commit.commit(stale)
    commit.abort(stale)
    assert content(t) == {("a", 1): 1}


def _concurrent(t: Table, writers: int = 3, batches: int = 4) -> Model:
    """``writers`` threads write ``batches`` commits each while a compactor compacts; the expected content."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def write(w: int) -> None:
        try:
            table = t.copy({"write-only": "true"})
            for b in range(batches):
                table.write(rows(*((f"p{i % 2}", w * 1000 + b * 10 + i, b) for i in range(10))))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def compact() -> None:
        while not stop.is_set():
            try:
                t.maintenance.compact()
            except CommitConflictError:
                pass
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
                return

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    compactor = threading.Thread(target=compact)
    compactor.start()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stop.set()
    compactor.join()
    assert not errors, errors
    t.maintenance.compact()
    return {(f"p{i % 2}", w * 1000 + b * 10 + i): b for w in range(writers) for b in range(batches)
            for i in range(10)}


def test_concurrent_write_only_writers_and_a_compactor(catalog: Catalog) -> None:
    t = make(catalog, **{"postpone.default-bucket-num": "2"})
    expected = _concurrent(t)
    assert content(t) == expected


def test_concurrent_writers_and_a_compactor_on_s3(s3_catalog: Catalog) -> None:
    t = make(s3_catalog, **{"postpone.default-bucket-num": "2"})
    expected = _concurrent(t, writers=2, batches=2)
    assert content(t) == expected


OPS = st.lists(st.one_of(
    st.tuples(st.just("write"), st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 8), st.integers(0, 99),
                                                   st.booleans()), min_size=1, max_size=8)),
    st.tuples(st.just("compact"), st.booleans()),
    st.tuples(st.just("rescale"), st.integers(1, 4))), min_size=1, max_size=8)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_random_writes_compactions_and_rescales_match_a_dict_model(tmp_path_factory: Any, ops: list[Any]) -> None:
    catalog = Catalog(str(tmp_path_factory.mktemp("w")))
    t = make(catalog, **{"postpone.default-bucket-num": "2"})
    published: Model = {}
    pending: Model = {}
    deleted: set[tuple[str, int]] = set()
    for op in ops:
        if op[0] == "write":
            batch = op[1]
            kinds = ["-D" if d else "+I" for *_, d in batch]
            t.write(rows(*((p, k, v) for p, k, v, _ in batch)), row_kinds=kinds)
            for p, k, v, d in batch:
                if d:
                    pending.pop((p, k), None)
                    deleted.add((p, k))
                else:
                    pending[(p, k)] = v
                    deleted.discard((p, k))
        elif op[0] == "rescale":
            if t.latest_snapshot() is not None:  # rewrites the published rows only; postponed rows stay postponed
                t.maintenance.rescale(op[1])
        else:
            t.maintenance.compact(full=op[1])
            for key in deleted:
                published.pop(key, None)
            published.update(pending)
            pending, deleted = {}, set()
        assert content(t) == published


# ---- rescale --------------------------------------------------------------------------------------------------------

def test_rescale_changes_a_partitions_bucket_count_and_keeps_postponed_rows(catalog: Catalog) -> None:
    t = make(catalog)
    t.write(rows(*(("a", i, i) for i in range(30)), *(("b", i, i) for i in range(10))))
    t.maintenance.compact()
    assert bucket_counts(t) == {"a": 1, "b": 1}
    t.write(rows(("a", 0, 100), ("a", 99, 99)))  # postponed: rescale must not lose them
    sid = t.maintenance.rescale(4, partitions=[{"dt": "a"}])
    assert sid is not None and t.snapshot(sid).commit_kind is CommitKind.OVERWRITE
    assert bucket_counts(t) == {"a": 4, "b": 1}
    expected = {("a", i): i for i in range(30)} | {("b", i): i for i in range(10)}
    assert content(t) == expected
    assert {b for (_, b) in buckets(t)} == {-2, 0, 1, 2, 3}
    t.maintenance.compact()  # the postponed rows go to the partition's new count
    assert bucket_counts(t) == {"a": 4, "b": 1}
    assert content(t) == expected | {("a", 0): 100, ("a", 99): 99}


def test_rescale_of_a_postpone_table_needs_bucket_num_and_changes_nothing_without(catalog: Catalog,
                                                                                  warehouse: str) -> None:
    from tests.table_engine.test_bad_input import warehouse_state

    t = make(catalog)
    t.write(rows(("a", 1, 1)))
    t.maintenance.compact()
    before = warehouse_state(warehouse)
    with pytest.raises(OptionError, match="bucket_num is required"):
        t.maintenance.rescale()
    assert warehouse_state(warehouse) == before


def test_rescale_fails_when_a_compaction_committed_since_it_read(catalog: Catalog) -> None:
    from table_engine.store.context import StoreContext
    from table_engine.store.writing import rescale as rescale_module

    t = make(catalog)
    t.write(rows(("a", 1, 1)))
    t.maintenance.compact()
    t.write(rows(("a", 2, 2)))
    original = rescale_module.TableWrite

    class CompactingMeanwhile(original):  # type: ignore[misc, valid-type]
        def prepare_commit(self, commit_identifier: int | None = None) -> Any:
            out = super().prepare_commit(commit_identifier)
            t.copy({}).maintenance.compact()  # another job publishes the postponed row meanwhile
            return out

    rescale_module.TableWrite = CompactingMeanwhile  # type: ignore[misc]
    try:
        ctx = StoreContext(t.file_io, t.path, t.schema, t.options)
        with pytest.raises(CommitConflictError, match="commit.strict-mode.last-safe-snapshot"):
            rescale_module.rescale(ctx, CommitUser("rescaler"), 3)
    finally:
        rescale_module.TableWrite = original  # type: ignore[misc]
    assert content(t) == {("a", 1): 1, ("a", 2): 2}
    assert bucket_counts(t) == {"a": 1}


def test_rescale_of_a_fixed_bucket_table_rewrites_in_place(catalog: Catalog) -> None:
    t = catalog.create_table("db.f", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "3"})
    t.write(rows(*(("a", i, i) for i in range(20))))
    t.write(rows(*(("a", i, -i) for i in range(0, 20, 3))))
    expected = content(t)
    sid = t.maintenance.rescale(partitions=["dt=a"])
    assert sid is not None and content(t) == expected and bucket_counts(t) == {"a": 3}


MODES = {  # options -> the content after the second compaction
    "deletion-vectors": ({"deletion-vectors.enabled": "true"}, {("a", 1): 6, ("a", 3): 3}),
    "first-row": ({"merge-engine": "first-row"}, {("a", 1): 5, ("a", 2): 2, ("a", 3): 3}),
    "partial-update": ({"merge-engine": "partial-update", "ignore-delete": "true"},
                       {("a", 1): 6, ("a", 2): 2, ("a", 3): 3}),
    "lookup-changelog": ({"changelog-producer": "lookup"}, {("a", 1): 6, ("a", 3): 3}),
    "input-changelog": ({"changelog-producer": "input"}, {("a", 1): 6, ("a", 3): 3}),
    "sequence-field": ({"sequence.field": "v"}, {("a", 1): 7, ("a", 2): 2, ("a", 3): 3}),
}


@pytest.mark.parametrize("mode", list(MODES))
def test_table_modes_on_postpone_tables(catalog: Catalog, mode: str) -> None:
    """What the compaction publishes follows the table's mode: deletion vectors and first-row (batch reads skip level
    0: the compaction's writer pushes it up), partial update, changelog producers, sequence.field (the -D of key 2
    has a smaller sequence field than its row: ignored)."""
    options, expected = MODES[mode]
    t = make(catalog, **options)
    t.write(rows(("a", 1, 5), ("a", 2, 2)))
    t.maintenance.compact()
    t.write(rows(("a", 1, 7), ("a", 3, 3)))
    t.write(rows(("a", 1, 6), ("a", 2, 0)), row_kinds=None if mode == "first-row" else ["+U", "-D"])
    assert content(t) == {("a", 1): 5, ("a", 2): 2}
    t.maintenance.compact()
    assert content(t) == expected


def test_expiry_and_orphan_cleanup_keep_live_postponed_files(catalog: Catalog) -> None:
    import time

    t = make(catalog)
    t.write(rows(("a", 1, 1), ("b", 2, 2)))
    t.maintenance.compact()
    t.write(rows(("a", 4, 4)))  # postponed, live
    t.expire_snapshots(retain_min=1, retain_max=1)  # the compacted postponed files go with their snapshots
    postponed = [e.file.file_name for e in live_entries(t.file_io, t.path, t.latest_snapshot()) if e.bucket == -2]
    assert len(postponed) == 1
    assert len(t.file_io.list_status(f"{t.path}/dt=a/bucket-postpone")) == 1
    time.sleep(0.01)
    assert t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000)).count == 0
    t.maintenance.compact()
    assert content(t) == {("a", 1): 1, ("b", 2): 2, ("a", 4): 4}
