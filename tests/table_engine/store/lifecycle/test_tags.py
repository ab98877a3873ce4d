"""Tags: create/replace/rename/delete/list, retention and expiry, file clean-up when the last holder goes."""

from __future__ import annotations

import datetime
import os
import time

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock
from table_engine.errors import SnapshotNotExistError, TagAlreadyExistError, TagError, TagNotExistError
from table_engine.store.lifecycle.tags import TagManager
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import (
    assert_exact_files,
    assert_nothing_missing,
    capture,
    disk_files,
    rows,
)

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def make(catalog: Catalog, **options: str) -> Table:
    return catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", **options})


def write(t: Table, i: int) -> None:
    t.write(pa.table({"id": [i % 3, 10 + i], "v": [f"v{i}", f"w{i}"]}, schema=SCHEMA))


def fill(t: Table, n: int, contents: dict[int, list[tuple[object, ...]]] | None = None,
         start: int = 0) -> dict[int, list[tuple[object, ...]]]:
    contents = {} if contents is None else contents
    for i in range(start, start + n):
        write(t, i)
        capture(t, contents)
    return contents


def test_create_list_get(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 4)
    assert t.create_tag("latest").id == 4
    assert t.create_tag("second", 2).id == 2
    assert t.list_tags() == ["latest", "second"]
    assert [tag.name for tag in t.tags()] == ["latest", "second"]
    assert t.tag_snapshot("second").id == 2
    assert rows(t.read(tag="second")) == contents[2]
    with pytest.raises(TagAlreadyExistError):
        t.create_tag("second", 3)
    with pytest.raises(TagError):
        t.create_tag("  ")
    with pytest.raises(TagError):
        t.create_tag("a/b")
    with pytest.raises(SnapshotNotExistError):
        t.create_tag("x", 99)
    with pytest.raises(TagNotExistError):
        t.tag_snapshot("nope")
    with pytest.raises(SnapshotNotExistError):  # TagNotExistError is a SnapshotNotExistError
        t.read(tag="nope")


def test_create_on_empty_table(catalog: Catalog) -> None:
    with pytest.raises(SnapshotNotExistError):
        make(catalog).create_tag("t")


def test_time_retained_and_default(catalog: Catalog) -> None:
    t = make(catalog, **{"tag.default-time-retained": "2 h"})
    fill(t, 2)
    t.create_tag("explicit", 1, time_retained_ms=60_000)
    t.create_tag("default", 2)
    tags = {tag.name: tag for tag in t.tags()}
    assert tags["explicit"].time_retained_ms == 60_000
    assert tags["default"].time_retained_ms == 7_200_000
    assert tags["default"].create_time is not None
    assert abs((datetime.datetime.now() - tags["default"].create_time).total_seconds()) < 60
    with pytest.raises(TagError):
        t.create_tag("bad", 1, time_retained_ms=0)


def test_expire_tags_by_retention(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog)
    fill(t, 3)
    t.create_tag("short", 1, time_retained_ms=1)
    t.create_tag("long", 2, time_retained_ms=3_600_000)
    t.create_tag("forever", 3)
    clock.advance(2)  # 'short' is expired once now is after its creation + 1 ms
    assert t.maintenance.expire_tags() == ["short"]
    assert t.list_tags() == ["forever", "long"]
    # older_than also expires tags without retention, by their file time
    assert sorted(t.maintenance.expire_tags(older_than_millis=int(time.time() * 1000) + 60_000)) == ["forever", "long"]
    assert t.list_tags() == []


def test_expire_tags_store_level_clock(catalog: Catalog) -> None:
    t = make(catalog)
    fill(t, 1)
    tm = TagManager.of(t.store)
    created = datetime.datetime(2024, 1, 1, 12, 0)
    tm.create("day", t.snapshot(1), 86_400_000, now=created)
    assert tm.expire(now=datetime.datetime(2024, 1, 2, 11, 59)).deleted_tags == []
    assert tm.expire(now=datetime.datetime(2024, 1, 2, 12, 1)).deleted_tags == ["day"]


def test_rename_and_replace(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 3)
    t.create_tag("a", 1, time_retained_ms=5000)
    t.create_tag("b", 2)
    with pytest.raises(TagAlreadyExistError):
        t.rename_tag("a", "b")
    with pytest.raises(TagNotExistError):
        t.rename_tag("zz", "c")
    t.rename_tag("a", "c")
    assert t.list_tags() == ["b", "c"]
    renamed = next(tag for tag in t.tags() if tag.name == "c")
    assert renamed.snapshot_id == 1 and renamed.time_retained_ms == 5000
    t.replace_tag("b", 3)
    assert rows(t.read(tag="b")) == contents[3]
    with pytest.raises(TagNotExistError):
        t.replace_tag("zz", 1)


def test_delete_tag_of_live_snapshot_only_removes_the_tag(catalog: Catalog) -> None:
    t = make(catalog)
    fill(t, 3)
    t.create_tag("x", 2)
    before = disk_files(t)
    result = t.delete_tag("x")
    assert result.deleted_tags == ["x"] and result.deleted_files == 0
    assert disk_files(t) == before


def test_delete_tag_of_expired_snapshot_removes_files_only_it_used(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 3)
    t.create_tag("t1", 1)
    fill(t, 2, contents, start=3)
    t.create_tag("t5", 5)
    t.maintenance.compact(full=True)
    capture(t, contents)
    fill(t, 3, contents, start=5)
    t.create_tag("t7", 7)
    fill(t, 2, contents, start=8)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert_exact_files(t)
    before = disk_files(t)
    result = t.delete_tag("t5")
    assert result.deleted_files > 0
    assert len(disk_files(t)) == len(before) - result.deleted_files
    for name, sid in (("t1", 1), ("t7", 7)):
        assert rows(t.read(tag=name)) == contents[sid]
    assert_exact_files(t)
    t.delete_tag(["t1", "t7"])
    assert t.list_tags() == []
    assert_exact_files(t)
    latest = t.latest_snapshot_id()
    assert latest is not None
    assert rows(t.read()) == contents[latest]


def test_two_tags_on_one_snapshot(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 4)
    t.create_tag("a", 2)
    t.create_tag("b", 2)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert t.delete_tag("a").deleted_files == 0
    assert rows(t.read(tag="b")) == contents[2]
    assert t.delete_tag("b").deleted_files > 0
    assert_exact_files(t)


def test_delete_missing_and_comma_list(catalog: Catalog) -> None:
    t = make(catalog)
    fill(t, 2)
    with pytest.raises(TagNotExistError):
        t.delete_tag("nope")
    assert t.delete_tag("nope", ignore_if_not_exists=True).deleted_tags == []
    t.create_tag("a", 1)
    t.create_tag("b", 2)
    assert sorted(t.delete_tag("a, b").deleted_tags) == ["a", "b"]


def test_create_tag_from_timestamp(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog)
    for i in range(4):
        write(t, i)
        clock.advance(10)
    times = {s.id: s.time_millis for s in t.snapshots()}
    assert t.maintenance.create_tag_from_timestamp("ts", times[3] - 1).id == 3
    assert t.maintenance.create_tag_from_timestamp("ts2", times[1]).id == 1
    with pytest.raises(SnapshotNotExistError):
        t.maintenance.create_tag_from_timestamp("late", times[4] + 10_000)
    # a tag of an expired snapshot is found too
    t.create_tag("keep", 2)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert t.maintenance.create_tag_from_timestamp("old", times[2] - 1).id == 2


def test_tag_an_expired_snapshot_held_by_a_tag(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 3)
    t.create_tag("hold", 1)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert t.create_tag("again", 1).id == 1
    t.delete_tag("hold")
    assert rows(t.read(tag="again")) == contents[1]
    assert_exact_files(t)


def test_auto_tag_names_are_reserved_per_snapshot(catalog: Catalog) -> None:
    t = make(catalog, **{"tag.automatic-creation": "process-time"})
    fill(t, 2)
    t.create_tag("2024-01-01", 1)
    with pytest.raises(TagError, match="already auto-tagged"):
        t.create_tag("2024-01-02", 1)
    t.create_tag("manual", 1)  # not an automatic name: fine


def test_tag_cache_sees_replaced_tags(catalog: Catalog) -> None:
    t = make(catalog)
    fill(t, 3)
    t.create_tag("x", 1)
    assert t.tags()[0].snapshot_id == 1
    t.replace_tag("x", 3)
    os.utime(TagManager.of(t.store).path("x"), (time.time() + 5, time.time() + 5))
    assert t.tags()[0].snapshot_id == 3


def test_tag_retention_cut_off_to_the_millisecond(catalog: Catalog, clock: ManualClock) -> None:
    """Paimon's ``TagTimeExpire``: a tag expires once now is strictly after its creation + time retained."""
    t = make(catalog)
    fill(t, 1)
    t.create_tag("day", 1, time_retained_ms=86_400_000)
    clock.advance(86_400_000)
    assert t.maintenance.expire_tags() == [] and t.list_tags() == ["day"]
    clock.advance(1)
    assert t.maintenance.expire_tags() == ["day"] and t.list_tags() == []


def test_rollback_version_is_a_snapshot_id_or_a_tag() -> None:
    from table_engine.errors import TagError
    from table_engine.store.lifecycle.tags import rollback_version

    assert rollback_version("12") == (12, None) and rollback_version(" 3 ") == (3, None)
    assert rollback_version("daily-2026-11-27") == (None, "daily-2026-11-27")
    assert rollback_version("tag:20261127") == (None, "20261127")  # an all-digits tag, named as one
    assert rollback_version("tag: x ") == (None, "x")
    for bad in ("", "  ", "tag:", "tag: "):
        with pytest.raises(TagError, match="roll back to"):
            rollback_version(bad)


def test_deleting_a_tag_keeps_the_files_of_a_tag_created_meanwhile(catalog: Catalog, monkeypatch) -> None:
    """Simulation pk-partition-expire seed 898: a tag deletion read the tags, then (after a pause) the earliest
    snapshot. Meanwhile a tag was created on a newer snapshot, which an expiry then removed: the deletion saw neither
    the new tag nor its snapshot and deleted files the new tag reads. The deletion must read the tags after the
    earliest snapshot (a tag created later is on that snapshot or a newer one)."""
    from table_engine.store.lifecycle import tags as tag_store

    t = catalog.create_table("db.t", SCHEMA, options={"bucket": "-1", "snapshot.num-retained.min": "1"})
    for i in range(2):  # snapshots 1 and 2: one file each
        t.write(pa.table({"id": [i], "v": [f"v{i}"]}, schema=SCHEMA))
    t.maintenance.compact(full=True)  # snapshot 3 rewrites both files into one
    t.write(pa.table({"id": [9], "v": ["v9"]}, schema=SCHEMA))  # snapshot 4
    t.create_tag("old", 1)
    t.expire_snapshots(retain_min=3, time_retained=0)  # snapshot 1 expires; its tag keeps its file
    assert t.earliest_snapshot_id() == 2
    real = tag_store.earliest_snapshot_id
    meanwhile: list[str] = []

    def concurrent_tag_then_expiry(file_io, table_path):  # type: ignore[no-untyped-def]
        if not meanwhile:  # another process tags snapshot 2, then an expiry removes snapshots 2 and 3
            meanwhile.append("new")
            t.create_tag("new", 2)
            t.expire_snapshots(retain_min=1, time_retained=0)
        return real(file_io, table_path)

    monkeypatch.setattr(tag_store, "earliest_snapshot_id", concurrent_tag_then_expiry)
    t.delete_tag("old")
    assert meanwhile == ["new"] and t.earliest_snapshot_id() == 4
    assert rows(t.read(tag="new")) == [(0, "v0"), (1, "v1")]
    assert_nothing_missing(t)


def test_a_tag_created_while_a_rollback_runs_waits_and_is_made_again(catalog: Catalog, monkeypatch) -> None:
    """Simulation rollback seed 7372: a tag was written on snapshot 9 while a rollback to snapshot 1 held the
    history fence and had read the tags already; its check passed (another tag held snapshot 9), and the rollback
    then removed that other tag and the files of snapshot 9, leaving the new tag unreadable. A tag that finds the
    fence when it holds its snapshot writes nothing, waits for the rewrite, and is made on the snapshot then
    latest."""
    from table_engine.format.consumer_file import HISTORY_FENCE_ID, consumer_path
    from table_engine.store import pins

    t = make(catalog)
    fill(t, 3)
    fence = consumer_path(t.path, HISTORY_FENCE_ID)
    t.file_io.write_bytes(fence, b'{"nextSnapshot":1}')  # a rollback is rewriting the history
    waited: list[float] = []

    def rollback_finishes(seconds: float) -> None:  # the rewrite ends while the tag's creator waits
        waited.append(seconds)
        t.file_io.delete(fence)

    monkeypatch.setattr(pins.time, "sleep", rollback_finishes)
    snap = t.create_tag("during")
    assert waited and snap.id == 3 and t.tag_snapshot("during").id == 3
    assert not t.file_io.exists(fence)


def test_deleting_a_tag_keeps_a_tag_made_meanwhile_on_the_same_snapshot(catalog: Catalog, monkeypatch) -> None:
    """A tag created on an expired snapshot while another tag held it, after that tag's deletion read the tags: the
    deletion must delete none of the snapshot's files."""

    t = catalog.create_table("db.t", SCHEMA, options={"bucket": "-1"})
    for i in range(3):
        t.write(pa.table({"id": [i], "v": [f"v{i}"]}, schema=SCHEMA))
    t.create_tag("old", 1)
    t.expire_snapshots(retain_min=1, time_retained=0)  # snapshot 1 is held by its tag only
    real = TagManager.tagged_snapshots
    made: list[str] = []

    def another_tag_after_the_first_read(self: TagManager) -> list:  # type: ignore[type-arg]
        out = real(self)
        if not made:
            made.append("copy")
            t.create_tag("copy", 1)  # held by "old" while it is checked: created
        return out

    monkeypatch.setattr(TagManager, "tagged_snapshots", another_tag_after_the_first_read)
    t.delete_tag("old")
    monkeypatch.setattr(TagManager, "tagged_snapshots", real)
    assert t.list_tags() == ["copy"]
    assert rows(t.read(tag="copy")) == [(0, "v0")]
    assert_nothing_missing(t)


def test_a_tag_is_never_visible_while_an_expiry_under_way_deletes_its_snapshot(catalog: Catalog,
                                                                              monkeypatch) -> None:
    """Simulation append-race seed 22798: an expiry that had read the consumers and tags deleted snapshot 1 and its
    manifest lists right after a tag on snapshot 1 was written; the tag stood, unreadable, until its creator
    withdrew it, and an orphan cleaning that read it in between gave up. The creator now holds the snapshot first
    and waits for the expiry runs already under way: here the run ends (having expired snapshot 1) while the
    creator waits, so the tag is never written and the tag is made on the newest snapshot instead."""
    from table_engine.format.consumer_file import EXPIRY_MARKER_PREFIX, consumer_path
    from table_engine.store import pins

    t = make(catalog)
    fill(t, 3)
    marker = consumer_path(t.path, f"{EXPIRY_MARKER_PREFIX}under-way")
    t.file_io.write_bytes(marker, b'{"nextSnapshot":9223372036854775807}')  # an expiry run is under way
    tag_writes: list[str] = []
    real_write = type(t.file_io).write_if_absent

    def recording(self: object, path: str, data: bytes) -> bool:
        if "/tag/" in path:
            tag_writes.append(path)
        return real_write(self, path, data)  # type: ignore[arg-type]

    def expiry_finishes(seconds: float) -> None:  # the run ends while the creator waits: snapshot 1 expired
        if t.file_io.exists(marker):
            # it read the consumers before the creator's pin was written: it does not see the pin
            pins_dir = consumer_path(t.path, "x").rsplit("/", 1)[0]
            held = {st.path: t.file_io.read_bytes(st.path) for st in t.file_io.list_status(pins_dir)
                    if "__commit-pin-" in st.path}
            for path in held:
                t.file_io.delete(path)
            t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
            for path, data in held.items():
                t.file_io.write_bytes(path, data)
            t.file_io.delete(marker)

    monkeypatch.setattr(type(t.file_io), "write_if_absent", recording)
    monkeypatch.setattr(pins.time, "sleep", expiry_finishes)
    with pytest.raises(SnapshotNotExistError, match="expired before tag 'first' could hold it"):
        TagManager.of(t.store).create("first", t.snapshot(1))
    assert tag_writes == [] and t.list_tags() == []  # nothing was ever written
    assert not t.file_io.exists(marker)
    snap = t.create_tag("latest")  # the table's own retry path tags what is there
    assert snap.id == 3 and rows(t.read(tag="latest")) == rows(t.read())
    assert_nothing_missing(t)


def test_a_marker_left_by_an_expiry_that_died_delays_a_tag_by_the_budget_only(catalog: Catalog, monkeypatch) -> None:
    """Simulation append-faults (with the hold's first version): an expiry marker whose deletion failed held every
    tag creation for the markers' 10 minutes. The hold waits at most its budget, then the tag is written and checked
    after (its snapshot is there: the tag stands)."""
    from table_engine.format.consumer_file import EXPIRY_MARKER_PREFIX, consumer_path
    from table_engine.store import pins

    t = make(catalog)
    fill(t, 2)
    t.file_io.write_bytes(consumer_path(t.path, f"{EXPIRY_MARKER_PREFIX}dead"), b'{"nextSnapshot":1}')
    now = [0.0]

    class Clock:  # virtual seconds: a sleep moves them on
        @staticmethod
        def monotonic() -> float:
            return now[0]

        @staticmethod
        def sleep(seconds: float) -> None:
            now[0] += seconds

    monkeypatch.setattr(pins, "time", Clock)
    snap = t.create_tag("late")
    assert snap.id == 2 and t.tag_snapshot("late").id == 2
    assert pins.EXPIRY_WAIT_BUDGET_S <= now[0] <= pins.EXPIRY_WAIT_BUDGET_S + 1  # waited its budget, no more
