"""Row tracking (``row-tracking.enabled``) on engine tables: every rewrite keeps ``_ROW_ID`` and ``_SEQUENCE_NUMBER``,
new rows get ids never handed out before, ``nextRowId`` is carried by every snapshot; against a model keyed by row id.
"""

from __future__ import annotations

import pathlib
import time
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.catalog import Catalog
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.schema_change import SetOption
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.committing.row_tracking import assign_row_tracking
from table_engine.store.compaction.row_tracking import row_id_runs
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])
OPTIONS = {"row-tracking.enabled": "true", "bucket": "-1", "deletion-vectors.enabled": "true",
           "compaction.min.file-num": "2"}
TRACK = ["id", "_ROW_ID", "_SEQUENCE_NUMBER"]


def rows(ids: list[int], dt: str | None = None) -> pa.Table:
    return pa.table({"id": ids, "dt": [dt or ("a" if i % 2 else "b") for i in ids], "v": [f"v{i}" for i in ids]},
                    schema=SCHEMA)


def tracked(t: Table, **kw: Any) -> dict[int, tuple[int, int]]:
    """id -> (_ROW_ID, _SEQUENCE_NUMBER) as the engine reads them."""
    d = t.read(columns=TRACK, **kw).to_pydict()
    return {i: (r, s) for i, r, s in zip(d["id"], d["_ROW_ID"], d["_SEQUENCE_NUMBER"], strict=True)}


def next_row_id(t: Table) -> int | None:
    s = t.latest_snapshot()
    return None if s is None else s.next_row_id


def delete_rows(t: Table, file_name: str, positions: list[int]) -> None:
    """Mark rows of a data file of the (bucket-unaware) table in a deletion vector, as pypaimon's delete does."""
    ctx = t.store
    snap = t.latest_snapshot()
    assert snap is not None
    (split,) = [s for s in t.plan() if any(f.file_name == file_name for f in s.files)]
    committed = [e.index_file for e in ctx.index_entries(snap)
                 if e.partition == split.partition and e.bucket == split.bucket
                 and e.index_file.index_type == DELETION_VECTORS_INDEX]
    dvs = BucketDeletionVectors(ctx.file_io, ctx.table_path, committed)
    dvs.delete(file_name, positions)
    new, old = dvs.flush()
    t.commit([CommitMessage(split.partition, split.bucket, split.total_buckets, new_index_files=new,
                            deleted_index_files=old)])


def test_assignment_follows_paimons_rules() -> None:
    """Unit: only APPEND files without ids get ids, in order; pending sequence numbers become the snapshot id."""
    import dataclasses

    from table_engine.format.data_file_meta import FileSource
    from table_engine.format.manifest import FileKind, ManifestEntry
    from tests.table_engine.format.test_feature_detection import data_file

    def entry(kind: FileKind, part: bytes, rows_: int, **kw: Any) -> ManifestEntry:
        f = dataclasses.replace(data_file(), **{"row_count": rows_, "file_source": FileSource.APPEND, **kw})
        return ManifestEntry(kind, part, 0, 1, f)

    es = [entry(FileKind.ADD, b"p1", 3, min_sequence_number=0, max_sequence_number=2),
          entry(FileKind.ADD, b"p2", 2, min_sequence_number=5, max_sequence_number=0),
          entry(FileKind.ADD, b"p1", 4, min_sequence_number=7, max_sequence_number=9),
          entry(FileKind.ADD, b"p1", 1, first_row_id=3, file_source=FileSource.COMPACT),
          entry(FileKind.DELETE, b"p2", 5, first_row_id=0)]
    out, nxt = assign_row_tracking(9, 10, es)
    assert [e.file.first_row_id for e in out] == [10, 13, 15, 3, 0] and nxt == 19
    assert [(e.file.min_sequence_number, e.file.max_sequence_number) for e in out[:3]] == [(9, 9), (5, 9), (7, 9)]
    grouped, nxt = assign_row_tracking(9, 0, es, group_by_partition=True)
    assert [(e.partition, e.file.first_row_id) for e in grouped] == [(b"p1", 0), (b"p1", 3), (b"p1", 3), (b"p2", 7),
                                                                       (b"p2", 0)] and nxt == 9
    runs = row_id_runs([[out[1].file, out[0].file, out[2].file], [out[3].file]])
    assert [[f.first_row_id for f in r] for r in runs] == [[10, 13, 15]]


@pytest.fixture(params=["local", "s3"])
def any_catalog(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Catalog:
    """A catalog on a local disk, then on the session's S3 server (a fresh warehouse each)."""
    if request.param == "local":
        return Catalog(str(tmp_path / "wh"))
    return Catalog(request.getfixturevalue("s3_warehouse"), request.getfixturevalue("s3_options"))


def test_every_rewrite_path_keeps_row_ids(any_catalog: Catalog) -> None:
    t = any_catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options={**OPTIONS, "write-only": "true"})
    for start in (0, 4, 10, 13):
        t.write(rows(list(range(start, start + (6 if start == 4 else 3 if start else 4)))))
    assert next_row_id(t) == 16
    base = tracked(t)
    assert sorted(r for r, _ in base.values()) == list(range(16))
    assert {s for _, s in base.values()} == {1, 2, 3, 4}  # the id of the snapshot that added each row
    at_4 = (4, base)

    # deletion vectors: rows go, the others keep their ids (positions count before the vector)
    f = next(f for s in t.plan() for f in s.files if f.row_count == 3 and f.first_row_id == 4)
    delete_rows(t, f.file_name, [0, 2])
    dv_rows = {i: v for i, v in base.items() if v[0] not in (4, 6)}
    assert tracked(t) == dv_rows and next_row_id(t) == 16
    assert sorted(t.read(filter=[("_ROW_ID", ">=", 4), ("_ROW_ID", "<", 8)]).column("id").to_pylist()) == sorted(
        i for i, (r, _) in dv_rows.items() if 4 <= r < 8)

    # full compaction: adjacent runs merged (ids and sequence numbers kept), the file with a vector left alone
    files_before = sum(len(s.files) for s in t.plan())
    t.maintenance.compact(full=True)
    assert t.latest_snapshot().commit_kind.value == "COMPACT" and next_row_id(t) == 16  # type: ignore[union-attr]
    assert sum(len(s.files) for s in t.plan()) < files_before
    assert tracked(t) == dv_rows

    # file-index rewrite keeps the files' ids
    t.alter(SetOption("file-index.bloom-filter.columns", "v"))
    t = any_catalog.get_table("db.t")
    t.maintenance.rewrite_file_index()
    assert all(f.extra_files or f.embedded_file_index for s in t.plan() for f in s.files)
    assert tracked(t) == dv_rows

    # overwrite of partition a: its new rows get new ids; b keeps its rows and ids
    t.write(rows([101, 103], dt="a"), overwrite=True)  # dynamic: replaces partition a only
    got = tracked(t)
    kept_b = {i: v for i, v in dv_rows.items() if i % 2 == 0}
    assert {i: got[i] for i in kept_b} == kept_b and sorted(got[i][0] for i in (101, 103)) == [16, 17]
    assert set(got) == set(kept_b) | {101, 103} and next_row_id(t) == 18

    # drop partition b: nothing left of it, nextRowId carried
    t.maintenance.drop_partitions([{"dt": "b"}])
    assert tracked(t) == {i: got[i] for i in (101, 103)} and next_row_id(t) == 18

    # expiry and orphan cleanup change no ids; the next append continues
    t.expire_snapshots(retain_max=1, retain_min=1)
    t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    t.write(rows([201, 202]))
    final = tracked(t)
    assert sorted(final[i][0] for i in (201, 202)) == [18, 19] and next_row_id(t) == 20
    assert {i: final[i] for i in (101, 103)} == {i: got[i] for i in (101, 103)}
    assert at_4[1] == base


def test_rollback_restores_the_ids_of_the_target(any_catalog: Catalog) -> None:
    t = any_catalog.create_table("db.t", SCHEMA, options=OPTIONS)
    t.write(rows([1, 2, 3]))
    t.write(rows([4, 5]))
    at_2 = tracked(t)
    t.write(rows([6]))
    t.maintenance.compact(full=True)
    t.rollback_to(2)
    assert tracked(t) == at_2 and next_row_id(t) == 5
    t.write(rows([7]))  # as Paimon's rollback: the ids of removed rows are free again
    assert tracked(t)[7][0] == 5


def test_writer_compaction_never_merges_files_without_ids(tmp_path: pathlib.Path) -> None:
    """A writer (not write-only) compacts after its commits: its own new files have no ids yet and are left alone,
    and the compaction commit keeps every id."""
    t = Catalog(str(tmp_path / "wh")).create_table("db.t", SCHEMA, options=OPTIONS)
    seen: dict[int, tuple[int, int]] = {}
    for k in range(6):
        t.write(rows([10 * k, 10 * k + 1]))
        now = tracked(t)
        assert {i: now[i] for i in seen} == seen
        assert sorted(r for r, _ in now.values()) == list(range(2 * (k + 1)))
        seen = now
    assert any(f.file_source == 1 for s in t.plan() for f in s.files)  # compaction did run


def test_system_columns_need_row_tracking(tmp_path: pathlib.Path) -> None:
    from table_engine.errors import SchemaError, TableEngineError
    from table_engine.predicate import PredicateError

    t = Catalog(str(tmp_path / "wh")).create_table("db.t", SCHEMA, options={"bucket": "-1"})
    t.write(rows([1]))
    with pytest.raises(SchemaError, match="_ROW_ID"):
        t.read(columns=["id", "_ROW_ID"])
    with pytest.raises(PredicateError, match="_ROW_ID"):
        t.read(filter=[("_ROW_ID", "=", 0)])
    with pytest.raises(TableEngineError, match="has no row tracking"):
        Catalog(str(tmp_path / "wh")).get_table("db.t$row_tracking")


def test_the_row_tracking_system_table(tmp_path: pathlib.Path) -> None:
    from table_engine.errors import ReadOnlyTableError

    c = Catalog(str(tmp_path / "wh"))
    t = c.create_table("db.t", SCHEMA, options=OPTIONS)
    t.write(rows([1, 2]))
    view = c.get_table("db.t$row_tracking")
    got = view.read()
    assert got.column_names == ["id", "dt", "v", "_ROW_ID", "_SEQUENCE_NUMBER"]
    assert got.column("_ROW_ID").to_pylist() == [0, 1] and view.read(columns=["id"]).column_names == ["id"]
    batches = list(t.to_batches(columns=["id", "_ROW_ID"], filter=[("_ROW_ID", ">", 0)]))  # streaming reads too
    assert pa.Table.from_batches(batches).to_pydict() == {"id": [2], "_ROW_ID": [1]}
    from table_engine.errors import SchemaError

    with pytest.raises(SchemaError, match="_ROW_ID is not readable in an incremental read"):
        t.copy({"incremental-between": "1,1"}).read(columns=["id", "_ROW_ID"])
    with pytest.raises(ReadOnlyTableError):
        view.write(rows([3]))


_OPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(1, 5)),
    st.tuples(st.just("compact"), st.booleans()),
    st.tuples(st.just("overwrite"), st.sampled_from(["a", "b"])),
    st.tuples(st.just("drop"), st.sampled_from(["a", "b"])),
    st.tuples(st.just("delete"), st.integers(0, 7)),
), min_size=1, max_size=10)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_row_ids_against_a_model(tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, Any]]) -> None:
    """Random appends, compactions, partition overwrites and drops, and deletes (deletion vectors), against a model
    row id -> (id, partition): the engine's ids equal the model's after every step, and ids are never handed out
    twice."""
    wh = tmp_path_factory.mktemp("rt")
    t = Catalog(str(wh)).create_table("db.t", SCHEMA, partition_keys=["dt"], options={**OPTIONS, "write-only": "true"})
    model: dict[int, tuple[int, str]] = {}
    next_id, next_value = 0, 0
    for op, arg in ops:
        if op == "append" or op == "overwrite":
            n = arg if op == "append" else 2
            values = list(range(next_value, next_value + n))
            next_value += n
            data = rows(values, dt=arg if op == "overwrite" else None)
            t.write(data, overwrite=op == "overwrite")
            if op == "overwrite":  # dynamic overwrite: only partition `arg` is replaced
                model = {r: v for r, v in model.items() if v[1] != arg}
            got = tracked(t)
            assert sorted(got[i][0] for i in values) == list(range(next_id, next_id + n))  # never seen before
            for k, i in enumerate(values):
                model[got[i][0]] = (i, data.column("dt")[k].as_py())
            next_id += n
            assert next_row_id(t) == next_id
        elif op == "compact":
            t.maintenance.compact(full=arg)
        elif op == "drop":
            if any(v[1] == arg for v in model.values()):
                t.maintenance.drop_partitions([{"dt": arg}])
                model = {r: v for r, v in model.items() if v[1] != arg}
        else:
            files = [f for s in t.plan() for f in s.files if f.first_row_id is not None]
            if files:
                f = files[arg % len(files)]
                victim = f.first_row_id + arg % f.row_count  # type: ignore[operator]
                if victim in model:
                    pos = victim - f.first_row_id  # type: ignore[operator]
                    delete_rows(t, f.file_name, [pos])
                    model.pop(victim)
        got = t.read(columns=["id", "dt", "_ROW_ID"]).to_pydict()
        assert {r: (i, d) for i, d, r in zip(got["id"], got["dt"], got["_ROW_ID"], strict=True)} == model, (op, arg)


def test_row_ids_on_s3(s3_catalog: Catalog) -> None:
    """The same on an object store: ids assigned at commit, kept by compaction and expiry, continued."""
    t = s3_catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options={**OPTIONS, "write-only": "true"})
    for start in (0, 3, 6):
        t.write(rows([start, start + 1, start + 2]))
    before = tracked(t)
    assert sorted(r for r, _ in before.values()) == list(range(9)) and next_row_id(t) == 9
    t.maintenance.compact(full=True)
    t.expire_snapshots(retain_max=1, retain_min=1)
    assert tracked(t) == before and next_row_id(t) == 9
    t.write(rows([50]))
    assert tracked(t)[50][0] == 9 and next_row_id(t) == 10


def test_row_tracking_needs_an_unaware_append_table_and_is_immutable(tmp_path: pathlib.Path) -> None:
    from table_engine.errors import OptionError, SchemaError

    c = Catalog(str(tmp_path / "wh"))
    with pytest.raises(OptionError, match="needs an append table with bucket = -1"):
        c.create_table("db.pk", SCHEMA, primary_keys=["id"], options={"row-tracking.enabled": "true"})
    with pytest.raises(OptionError, match="needs an append table with bucket = -1"):
        c.create_table("db.fixed", SCHEMA, options={"row-tracking.enabled": "true", "bucket": "2"})
    assert not c.table_exists("db.pk") and not c.table_exists("db.fixed")
    t = c.create_table("db.t", SCHEMA, options=OPTIONS)
    t.write(rows([1]))
    with pytest.raises((OptionError, SchemaError), match="row-tracking.enabled"):
        t.alter(SetOption("row-tracking.enabled", "false"))


def test_concurrent_writers_never_share_ids(tmp_path: pathlib.Path) -> None:
    """Two writers prepare their files on the same snapshot; each commit assigns ids on the snapshot it publishes
    after, so the second continues where the first ended. A commit that loses the race for a snapshot id retries on
    the winner's nextRowId."""
    t = Catalog(str(tmp_path / "wh")).create_table("db.t", SCHEMA, options=OPTIONS)
    t.write(rows([1, 2]))
    a, b = t.new_write(), t.new_write()
    a.write(rows([10, 11, 12]))
    b.write(rows([20, 21]))
    ma, mb = a.prepare_commit(), b.prepare_commit()
    assert all(f.first_row_id is None for m in (*ma, *mb) for f in m.new_files)  # not before the commit
    t.new_commit().commit(mb)
    loser = t.new_commit()
    real_publish = loser._publish
    raced = []

    def publish_after_a_rival(pin: Any, snapshot: Any, *rest: Any) -> bool:
        # another writer takes the snapshot id first, once
        if not raced:
            raced.append(snapshot.id)
            rival = t.new_write()
            rival.write(rows([30]))
            t.new_commit().commit(rival.prepare_commit())
            return False
        return bool(real_publish(pin, snapshot, *rest))

    loser._publish = publish_after_a_rival  # type: ignore[method-assign]
    loser.commit(ma)
    got = tracked(t)
    assert sorted(got[i][0] for i in (20, 21)) == [2, 3] and got[30][0] == 4
    assert sorted(got[i][0] for i in (10, 11, 12)) == [5, 6, 7] and next_row_id(t) == 8
    assert len({r for r, _ in got.values()}) == len(got)
    # the lost attempt's manifests (written with its ids) are gone
    assert t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000), dry_run=True).count == 0
