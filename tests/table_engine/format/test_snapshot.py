"""Snapshot JSON, hint files and atomic publication."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError, SnapshotNotExistError
from table_engine.format.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    CommitKind,
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot,
    latest_snapshot_id,
    list_snapshot_ids,
    read_snapshot,
    snapshot_at_or_before_time,
    snapshot_path,
    try_publish_snapshot,
)
from table_engine.io.file_io import LocalFileIO
from tests.budget import examples

FIXTURES = Path(__file__).parent / "fixtures" / "pypaimon"


def _snap(snapshot_id: int, time_millis: int = 1000, **kw: object) -> Snapshot:
    args: dict[str, object] = {
        "id": snapshot_id, "schema_id": 0, "base_manifest_list": f"manifest-list-{snapshot_id}-0",
        "delta_manifest_list": f"manifest-list-{snapshot_id}-1", "commit_user": "u",
        "commit_identifier": BATCH_COMMIT_IDENTIFIER, "commit_kind": CommitKind.APPEND, "time_millis": time_millis,
        "total_record_count": 10, "delta_record_count": 5, "uuid": "00000000-0000-0000-0000-000000000000",
    }
    args.update(kw)
    return Snapshot(**args)  # type: ignore[arg-type]


@pytest.fixture
def fio() -> LocalFileIO:
    return LocalFileIO()


@pytest.fixture
def table(tmp_path: Path) -> str:
    return str(tmp_path / "db.db" / "t")


def _publish(fio: LocalFileIO, table: str, *ids: int, step: int = 1000) -> None:
    for i in ids:
        assert try_publish_snapshot(fio, table, _snap(i, time_millis=i * step))


# ------------------------------------------------------------------------------------------------ JSON


@pytest.mark.parametrize("name", ["dyn/snapshot/snapshot-1", "dyn/snapshot/snapshot-2", "app/snapshot/snapshot-1"])
def test_pypaimon_snapshot_round_trips_byte_for_byte(name: str) -> None:
    text = (FIXTURES / name).read_text("utf-8")
    snap = Snapshot.from_json(text, name)
    assert snap.to_json() == text


def test_pypaimon_snapshot_fields() -> None:
    snap = read_snapshot(LocalFileIO(), str(FIXTURES / "dyn"), 2)
    assert snap.id == 2 and snap.version == 3 and snap.schema_id == 0
    assert snap.commit_kind is CommitKind.APPEND
    assert snap.commit_identifier == BATCH_COMMIT_IDENTIFIER
    assert snap.index_manifest == "index-manifest-b05090e2-66d8-45b5-aee6-e09c40520f8c"
    assert (snap.total_record_count, snap.delta_record_count) == (6, 3)
    assert (snap.base_manifest_list_size, snap.delta_manifest_list_size) == (1337, 1337)
    assert snap.writer_version == "python-2.1.0-3a5ffe7870697e2c2605e63413fb5ac5800aae7e"
    assert snap.changelog_manifest_list is None and snap.extra == {}


def test_to_json_key_order_omits_nulls_and_has_no_trailing_newline() -> None:
    text = _snap(3, index_manifest="index-manifest-x", next_row_id=7, properties={"k": "v"},
                 log_offsets={0: 12}, writer_version="w").to_json()
    assert not text.endswith("\n") and text.startswith('{\n  "version": 3,\n  "id": 3,')
    keys = list(json.loads(text))
    assert keys == ["version", "id", "schemaId", "baseManifestList", "deltaManifestList", "totalRecordCount",
                    "deltaRecordCount", "commitUser", "commitIdentifier", "commitKind", "timeMillis",
                    "indexManifest", "nextRowId", "properties", "logOffsets", "uuid", "writerVersion"]
    assert json.loads(text)["logOffsets"] == {"0": 12}


def test_unknown_keys_are_kept() -> None:
    data = json.loads(_snap(1).to_json())
    data["futureField"] = {"a": 1}
    snap = Snapshot.from_json(json.dumps(data), "snapshot-1")
    assert snap.extra == {"futureField": {"a": 1}}
    assert json.loads(snap.to_json())["futureField"] == {"a": 1}


def test_default_uuid_is_random() -> None:
    a = Snapshot(id=1, schema_id=0, base_manifest_list="b", delta_manifest_list="d", commit_user="u",
                 commit_identifier=1, commit_kind=CommitKind.COMPACT, time_millis=1, total_record_count=0,
                 delta_record_count=0)
    assert a.uuid and len(a.uuid) == 36 and a.version == 3
    assert Snapshot.from_json(a.to_json(), "x") == a


_opt_int = st.none() | st.integers(min_value=0, max_value=2**63 - 1)
_opt_str = st.none() | st.text(max_size=10)
_snapshots = st.builds(
    Snapshot,
    id=st.integers(1, 2**40), schema_id=st.integers(0, 100), base_manifest_list=st.text(max_size=30),
    delta_manifest_list=st.text(max_size=30), changelog_manifest_list=_opt_str, index_manifest=_opt_str,
    commit_user=st.text(max_size=10), commit_identifier=st.integers(-(2**63), 2**63 - 1),
    commit_kind=st.sampled_from(list(CommitKind)), time_millis=st.integers(0, 2**45),
    log_offsets=st.none() | st.dictionaries(st.integers(0, 10), st.integers(0, 10**12), max_size=2),
    total_record_count=_opt_int, delta_record_count=_opt_int, changelog_record_count=_opt_int,
    watermark=st.none() | st.integers(-(2**63), 2**63 - 1), statistics=_opt_str,
    base_manifest_list_size=_opt_int, delta_manifest_list_size=_opt_int, changelog_manifest_list_size=_opt_int,
    properties=st.none() | st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    next_row_id=_opt_int, uuid=_opt_str, writer_version=_opt_str, operation=_opt_str,
)


@settings(max_examples=examples(150), deadline=None)
@given(_snapshots)
def test_json_round_trip(snap: Snapshot) -> None:
    assert Snapshot.from_json(snap.to_json(), "snapshot-x") == snap


@pytest.mark.parametrize(
    "text",
    ["", "{", "[]", "null", "\xff", '{"version": 3}', json.dumps({**json.loads(_snap(1).to_json()), "id": "one"}),
     json.dumps({**json.loads(_snap(1).to_json()), "commitKind": "SIDEWAYS"}),
     json.dumps({**json.loads(_snap(1).to_json()), "logOffsets": {"x": 1}})],
)
def test_malformed_json_is_corrupt_and_names_file(text: str) -> None:
    with pytest.raises(CorruptMetadataError, match="snapshot-9"):
        Snapshot.from_json(text, "/t/snapshot/snapshot-9")


def test_read_snapshot_errors(fio: LocalFileIO, table: str) -> None:
    with pytest.raises(SnapshotNotExistError, match=r"snapshot 4 .*db\.db/t"):
        read_snapshot(fio, table, 4)
    fio.write_bytes(snapshot_path(table, 4), b'{"version": 3, "id": ')
    with pytest.raises(CorruptMetadataError, match="snapshot-4"):
        read_snapshot(fio, table, 4)
    fio.write_bytes(snapshot_path(table, 5), b"")
    with pytest.raises(CorruptMetadataError, match="snapshot-5"):
        read_snapshot(fio, table, 5)


# ------------------------------------------------------------------------------------------------ hints


def test_empty_table(fio: LocalFileIO, table: str) -> None:
    assert latest_snapshot_id(fio, table) is None
    assert earliest_snapshot_id(fio, table) is None
    assert latest_snapshot(fio, table) is None
    assert list_snapshot_ids(fio, table) == []
    assert snapshot_at_or_before_time(fio, table, 10**15) is None


def test_publish_writes_hints(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, 1, 2)
    assert Path(table, "snapshot", "LATEST").read_bytes() == b"2"
    assert Path(table, "snapshot", "EARLIEST").read_bytes() == b"1"
    assert Snapshot.from_json(Path(snapshot_path(table, 2)).read_text(), "x") == _snap(2, time_millis=2000)
    assert latest_snapshot(fio, table) == _snap(2, time_millis=2000)
    assert list_snapshot_ids(fio, table) == [1, 2]


def test_publish_never_overwrites(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, 1)
    before = Path(snapshot_path(table, 1)).read_bytes()
    assert not try_publish_snapshot(fio, table, _snap(1, commit_user="other"))
    assert Path(snapshot_path(table, 1)).read_bytes() == before
    assert Path(table, "snapshot", "LATEST").read_bytes() == b"1"


def test_stale_latest_hint_falls_back_to_listing(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, 1, 2, 3)
    latest = Path(table, "snapshot", "LATEST")
    latest.write_bytes(b"1")  # lagging hint: snapshot-2 exists
    assert latest_snapshot_id(fio, table) == 3
    latest.write_bytes(b"7")  # hint beyond the last snapshot (e.g. after a rollback)
    assert latest_snapshot_id(fio, table) == 3
    latest.write_bytes(b"garbage")
    assert latest_snapshot_id(fio, table) == 3
    latest.unlink()
    assert latest_snapshot_id(fio, table) == 3
    latest.write_bytes(b"3")
    assert latest_snapshot_id(fio, table) == 3


def test_latest_hint_is_trusted_when_next_snapshot_is_absent(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, 1, 2, 3)
    Path(table, "snapshot", "LATEST").write_bytes(b"2")
    Path(snapshot_path(table, 3)).rename(Path(table, "snapshot", "moved"))
    assert latest_snapshot_id(fio, table) == 2


def test_earliest_hint(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, 1, 2, 3, 4)
    earliest = Path(table, "snapshot", "EARLIEST")
    assert earliest_snapshot_id(fio, table) == 1
    Path(snapshot_path(table, 1)).unlink()
    Path(snapshot_path(table, 2)).unlink()  # expired, hint not yet updated
    assert earliest_snapshot_id(fio, table) == 3
    earliest.write_bytes(b"4")  # a valid hint wins over listing
    assert earliest_snapshot_id(fio, table) == 4
    earliest.unlink()
    assert earliest_snapshot_id(fio, table) == 3


def test_listing_ignores_other_files(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, 1, 2)
    Path(table, "snapshot", "snapshot-x").write_text("{}")
    Path(table, "snapshot", ".snapshot-3.abc.tmp").write_text("{}")
    Path(table, "snapshot", "snapshot-10").mkdir()
    assert list_snapshot_ids(fio, table) == [1, 2]


def test_pypaimon_table_without_earliest_hint() -> None:
    fio = LocalFileIO()
    dyn = str(FIXTURES / "dyn")
    assert (earliest_snapshot_id(fio, dyn), latest_snapshot_id(fio, dyn)) == (1, 2)


# ------------------------------------------------------------------------------------------------ time travel


def test_snapshot_at_or_before_time(fio: LocalFileIO, table: str) -> None:
    _publish(fio, table, *range(1, 12))  # snapshot i has time i * 1000
    assert snapshot_at_or_before_time(fio, table, 999) is None
    for i in range(1, 12):
        for t in (i * 1000, i * 1000 + 999):
            got = snapshot_at_or_before_time(fio, table, t)
            assert got is not None and got.id == i
    Path(snapshot_path(table, 1)).unlink()
    Path(snapshot_path(table, 2)).unlink()
    assert snapshot_at_or_before_time(fio, table, 2500) is None
    got = snapshot_at_or_before_time(fio, table, 10**9)
    assert got is not None and got.id == 11


# ------------------------------------------------------------------------------------------------ concurrency


def _race(table: str, user: str, barrier: multiprocessing.synchronize.Barrier,
          results: multiprocessing.Queue[tuple[str, bool]]) -> None:
    barrier.wait()
    ok = try_publish_snapshot(LocalFileIO(), table, _snap(5, commit_user=user))
    results.put((user, ok))


@pytest.mark.slow
def test_processes_race_to_publish_same_id_exactly_one_wins(fio: LocalFileIO, table: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    n = 8
    barrier = ctx.Barrier(n)
    results = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(table, f"user-{i}", barrier, results)) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    outcomes = dict(results.get(timeout=10) for _ in range(n))
    winners = [u for u, ok in outcomes.items() if ok]
    assert len(winners) == 1
    assert read_snapshot(fio, table, 5).commit_user == winners[0]
    assert list_snapshot_ids(fio, table) == [5]
    assert sorted(p.name for p in Path(table, "snapshot").iterdir()) == ["LATEST", "snapshot-5"]
    results.close()
    shutil.rmtree(table)
