"""The forced interleavings of issue 35's defects, as regression tests (each reproduced the defect every time).

1. ABA on snapshot ids: writer A builds on ``k-1`` and pauses before publishing; writer B publishes ``k`` and
   ``k+1``; an expiry (retain 1) deletes ``k-1`` and ``k``; A's create of ``snapshot-k`` must not succeed.
2. A failure of the writer's compaction part after its APPEND was published must not delete the APPEND's files.
3. A compaction input that a concurrent commit and expiry removed must not fail the user's write.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.format.snapshot import latest_hint, list_snapshot_ids
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.committing import commit as commit_mod
from table_engine.store.committing.commit import FileStoreCommit

SCHEMA = pa.schema([("id", pa.int64())])
SHORT_RETENTION = {"snapshot.num-retained.min": "1", "snapshot.time-retained": "0 s"}


def _rows(lo: int, hi: int) -> pa.Table:
    return pa.table({"id": pa.array(range(lo, hi), pa.int64())})


def _ids(t: Any) -> list[int]:
    return sorted(t.read().column("id").to_pylist())


@pytest.fixture
def hooked(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Patch a function once: ``hooked(obj, name, before)`` runs ``before(*args)`` on the first call only."""

    def install(obj: Any, name: str, before: Any) -> None:
        original = getattr(obj, name)
        armed = {"on": True}

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if armed["on"]:
                armed["on"] = False
                before(*args, **kwargs)
            return original(*args, **kwargs)

        monkeypatch.setattr(obj, name, wrapper)

    yield install


@pytest.mark.parametrize("primary_key", [False, True])
def test_a_commit_overtaken_by_two_commits_and_an_expiry_is_not_lost(catalog: Catalog, hooked: Any,
                                                                     primary_key: bool) -> None:
    opts = dict(SHORT_RETENTION, **({"bucket": "1"} if primary_key else {}))
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"] if primary_key else [], options=opts)
    a, b, e = (catalog.get_table("db.t") for _ in range(3))
    b.write(_rows(0, 10), maintain=False)
    b.write(_rows(10, 20), maintain=False)
    seen: dict[str, Any] = {}

    def overtake(self: FileStoreCommit, pin: Any, snapshot: Any, *_: Any) -> None:
        seen["a_publishes"] = snapshot.id
        seen["b"] = [b.write(_rows(20, 30), maintain=False), b.write(_rows(30, 40), maintain=False)]
        seen["expired"] = e.expire_snapshots(retain_min=1, time_retained=0).expired_snapshot_ids

    hooked(FileStoreCommit, "_publish", overtake)
    sid = a.write(_rows(100, 110), maintain=False)
    assert seen["a_publishes"] == 3 and seen["b"] == [3, 4]
    assert 2 not in seen["expired"], "the expiry deleted the snapshot a commit in flight builds on"
    assert sid == 5  # A lost the race for 3, retried on 4
    fresh = catalog.get_table("db.t")
    assert _ids(fresh) == [*range(40), *range(100, 110)]
    assert list_snapshot_ids(fresh.file_io, fresh.path)[-1] == 5 == latest_hint(fresh.file_io, fresh.path)
    assert fresh.consumers() == {}  # the pins are gone, and never shown as consumers
    assert fresh.file_io.list_status(f"{fresh.path}/consumer") == []


def test_the_pin_holds_expiry_only_while_the_attempt_runs(catalog: Catalog, hooked: Any) -> None:
    catalog.create_table("db.t", SCHEMA, options=SHORT_RETENTION)
    t = catalog.get_table("db.t")
    for i in range(3):
        t.write(_rows(i * 10, i * 10 + 10), maintain=False)
    seen: dict[str, Any] = {}

    def look(self: FileStoreCommit, pin: Any, snapshot: Any, *_: Any) -> None:
        seen["pins"] = [st.path.rsplit("/", 1)[-1] for st in t.file_io.list_status(f"{t.path}/consumer")]
        seen["min"] = ConsumerManager.of(t.store).min_next_snapshot()

    hooked(FileStoreCommit, "_publish", look)
    t.write(_rows(30, 40), maintain=False)
    assert len(seen["pins"]) == 1 and seen["pins"][0].startswith("consumer-__commit-pin-")
    assert seen["min"] == 3
    time.sleep(0.002)
    assert t.expire_snapshots(retain_min=1, time_retained=0).expired_snapshot_ids == [1, 2, 3]


def test_a_failed_compaction_part_keeps_the_published_append(catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    catalog.create_table("db.t", SCHEMA, options={"compaction.min.file-num": "2"})
    t = catalog.get_table("db.t")
    t.write(_rows(0, 10))
    original = FileStoreCommit._commit_one

    def failing(self: FileStoreCommit, messages: Any, *args: Any, **kwargs: Any) -> Any:
        if any(m.compact_before for m in messages):
            raise OSError("injected: storage error while committing the compaction part")
        return original(self, messages, *args, **kwargs)

    monkeypatch.setattr(FileStoreCommit, "_commit_one", failing)
    sid = t.write(_rows(10, 20))  # the APPEND is published; its compaction is dropped, the write succeeds
    monkeypatch.setattr(FileStoreCommit, "_commit_one", original)
    fresh = catalog.get_table("db.t")
    assert sid == fresh.latest_snapshot_id() == 2
    assert _ids(fresh) == list(range(20))
    assert "injected" in caplog.text


@pytest.mark.parametrize("primary_key", [False, True])
def test_a_vanished_compaction_input_does_not_fail_the_write(catalog: Catalog, hooked: Any,
                                                             primary_key: bool) -> None:
    opts = {"compaction.min.file-num": "2", **SHORT_RETENTION}
    if primary_key:
        opts.update({"bucket": "1", "full-compaction.delta-commits": "1"})
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"] if primary_key else [], options=opts)
    a, b, e = (catalog.get_table("db.t") for _ in range(3))
    a.write(_rows(0, 10), maintain=False)
    a.write(_rows(10, 20), maintain=False)

    def compact_and_expire(*args: Any, **kwargs: Any) -> None:
        if primary_key:  # B's write and full compaction replace every file A restored
            b.write(_rows(200, 210), maintain=False)
            b.maintenance.compact(full=True)
        else:  # B compacts A's two small files
            b.maintenance.compact()
            b.write(_rows(200, 210), maintain=False)
        time.sleep(0.002)
        e.expire_snapshots(retain_min=1, time_retained=0)

    # A has restored its writer from snapshot 2 (its compaction will read snapshot 2's files): B compacts them
    # away and the expiry deletes them
    hooked(commit_mod, "live_entries", compact_and_expire) if not primary_key else None
    if primary_key:
        from table_engine.store.compaction import compact as compact_mod

        hooked(compact_mod.BucketCompactor, "compact", compact_and_expire)
    sid = a.write(_rows(20, 30), maintain=False)
    assert sid is not None
    assert _ids(catalog.get_table("db.t")) == [*range(30), *range(200, 210)]


def test_a_rollback_waits_for_a_commit_in_flight_and_a_commit_waits_for_a_rollback(catalog: Catalog,
                                                                                     hooked: Any) -> None:
    """A rollback that starts while a commit is between reading its base and publishing waits for the commit's
    pin: the commit publishes (on its base, which the rollback has not touched) and the rollback then removes it
    with the rest. A commit that starts while the rollback holds its fence waits for it and publishes on the target.
    The lineage stays contiguous."""
    import threading

    from table_engine.store import pins

    catalog.create_table("db.t", SCHEMA)
    a, b, r = catalog.get_table("db.t"), catalog.get_table("db.t"), catalog.get_table("db.t")
    for i in range(4):
        r.write(_rows(i * 10, i * 10 + 10), maintain=False)
    waiting = threading.Event()
    original_wait = pins.HistoryFence._wait_for_pins
    result: dict[str, Any] = {}

    def signalling_wait(self: Any) -> None:
        waiting.set()
        original_wait(self)
        # the fence stands and the pins are gone: a commit starting now waits for the rollback
        result["b"] = threading.Thread(target=lambda: result.update(b_sid=b.write(_rows(200, 210), maintain=False)))
        result["b"].start()

    hooked(pins.HistoryFence, "_wait_for_pins", signalling_wait)

    def rollback() -> None:
        result["rollback"] = r.rollback_to(2)

    rollbacker = threading.Thread(target=rollback)

    def start_rollback(self: FileStoreCommit, pin: Any, snapshot: Any, *_: Any) -> None:
        result["a_built_on"] = snapshot.id - 1
        rollbacker.start()
        assert waiting.wait(30), "the rollback never started waiting"
        assert "rollback" not in result  # it waits for this commit's pin

    hooked(FileStoreCommit, "_publish", start_rollback)
    sid = a.write(_rows(100, 110), maintain=False)
    rollbacker.join(30)
    result["b"].join(30)
    assert not rollbacker.is_alive() and not result["b"].is_alive()
    assert result["a_built_on"] == 4 and sid == 5  # published before the rollback rewrote anything
    assert result["rollback"].removed_snapshot_ids == [3, 4, 5]  # A's commit is rolled back with the rest
    assert result["b_sid"] == 3  # B waited for the rollback and published on its target
    fresh = catalog.get_table("db.t")
    assert list_snapshot_ids(fresh.file_io, fresh.path) == [1, 2, 3]
    assert _ids(fresh) == [*range(20), *range(200, 210)]
    assert fresh.file_io.list_status(f"{fresh.path}/consumer") == []
