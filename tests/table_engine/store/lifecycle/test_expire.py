"""Snapshot expiry: every retention option, consumers, tags, hints, changelog files, decoupled changelogs."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock
from table_engine.errors import OptionError
from table_engine.format.changelog_file import list_changelog_ids
from table_engine.format.data_file_meta import FileSource, SimpleStats
from table_engine.format.manifest import FileKind, ManifestEntry, write_manifest
from table_engine.format.manifest_list import ManifestFileMeta, write_manifest_list
from table_engine.format.snapshot import Snapshot, read_snapshot, snapshot_path
from table_engine.store.lifecycle.expire import ExpireConfig, expire_snapshots
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import (
    assert_exact_files,
    assert_nothing_missing,
    capture,
    disk_files,
    rows,
)

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])


def make(catalog: Catalog, pk: bool = True, **options: str) -> Table:
    # append tables: writers would compact small files (extra COMPACT snapshots); these tests count one snapshot
    # per write
    opts = {"bucket": "2", "manifest.merge-min-count": "3"} if pk else {"compaction.min.file-num": "1000"}
    opts.update(options)
    return catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"] if pk else [], partition_keys=["dt"],
                                options=opts)


def write(t: Table, i: int, n: int = 4) -> int | None:
    dt = ["2024-01-01", "2024-01-02"][i % 2]
    return t.write(pa.table({"dt": [dt] * n, "id": list(range(i % 5, i % 5 + n)), "v": [i] * n}, schema=SCHEMA))


def fill(t: Table, n: int) -> dict[int, list[tuple[object, ...]]]:
    contents: dict[int, list[tuple[object, ...]]] = {}
    for i in range(n):
        write(t, i)
        capture(t, contents)
    return contents


def ids(t: Table) -> list[int]:
    return [s.id for s in t.snapshots()]


def check_reads(t: Table, contents: dict[int, list[tuple[object, ...]]]) -> None:
    for sid in ids(t):
        assert rows(t.read(snapshot_id=sid)) == contents[sid], sid
    for tag in t.tags():
        assert rows(t.read(tag=tag.name)) == contents[tag.snapshot_id], tag.name


def test_nothing_to_expire_by_default(catalog: Catalog) -> None:
    t = make(catalog)
    fill(t, 12)
    before = disk_files(t)
    result = t.expire_snapshots()  # defaults: min 10, 1 h: every snapshot is younger than an hour
    assert result.expired_snapshot_ids == [] and result.deleted_files == 0
    assert disk_files(t) == before


def test_retain_min(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 12)
    latest = t.latest_snapshot_id()
    assert latest is not None and latest >= 12
    result = t.expire_snapshots(retain_min=3, time_retained=0, max_deletes=1000)
    assert ids(t) == [latest - 2, latest - 1, latest]
    assert result.expired_snapshot_ids == list(range(1, latest - 2))
    assert result.deleted_files > 0 and result.deleted_data_files > 0
    assert t.earliest_snapshot_id() == latest - 2
    assert t.file_io.read_text(f"{t.path}/snapshot/EARLIEST") == str(latest - 2)
    check_reads(t, contents)
    assert_exact_files(t)


def test_retain_max_expires_young_snapshots(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 8)
    latest = t.latest_snapshot_id()
    assert latest is not None
    t.expire_snapshots(retain_min=1, retain_max=4, time_retained="10 h")
    assert ids(t) == list(range(latest - 3, latest + 1))
    check_reads(t, contents)
    assert_exact_files(t)


def test_time_retained_keeps_snapshot_whose_successor_is_young(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog, pk=False)
    for i in range(6):
        write(t, i)
        clock.advance(20)
    times = {s.id: s.time_millis for s in t.snapshots()}
    assert len(times) == 6
    # cut-off between snapshot 3 and 4: snapshot 3 has a young successor (4) once 4 is within retention
    cutoff = times[4]
    cfg = ExpireConfig.from_options(t.options, {"retain_min": 1, "time_retained": 1000})
    expire_snapshots(t.store, cfg, now_millis=cutoff + 1000)
    assert ids(t) == [3, 4, 5, 6]  # 3 stays: its successor 4 is not older than the cut-off
    assert_exact_files(t)


def test_older_than_override(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog, pk=False)
    for i in range(5):
        write(t, i)
        clock.advance(20)
    snaps = {s.id: s.time_millis for s in t.snapshots()}
    t.expire_snapshots(retain_min=1, older_than_millis=snaps[3] + 1)
    assert ids(t) == [3, 4, 5]  # 2 goes (its successor 3 is older than the cut-off), 3 stays (4 is not)


def test_expire_limit(catalog: Catalog) -> None:
    t = make(catalog, pk=False)
    contents = fill(t, 10)
    r = t.expire_snapshots(retain_min=1, time_retained=0, max_deletes=3)
    assert r.expired_snapshot_ids == [1, 2, 3]
    r = t.expire_snapshots(retain_min=1, time_retained=0, max_deletes=3)
    assert r.expired_snapshot_ids == [4, 5, 6]
    opts_limited = t.expire_snapshots(retain_min=1, time_retained=0)  # snapshot.expire.limit 50
    assert opts_limited.expired_snapshot_ids == [7, 8, 9]
    assert ids(t) == [10]
    check_reads(t, contents)
    assert_exact_files(t)


def test_table_options_drive_expiry(catalog: Catalog) -> None:
    t = make(catalog, pk=False, **{"snapshot.num-retained.min": "2", "snapshot.time-retained": "0 s",
                                  "snapshot.expire.limit": "4"})
    fill(t, 9)
    assert t.expire_snapshots().expired_snapshot_ids == [1, 2, 3, 4]
    assert t.expire_snapshots().expired_snapshot_ids == [5, 6, 7]
    assert ids(t) == [8, 9]


def test_consumer_protects_snapshots(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 10)
    t.maintenance.reset_consumer("reader-1", 4)
    t.maintenance.reset_consumer("reader-2", 7)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert ids(t)[0] == 4
    check_reads(t, contents)
    t.maintenance.reset_consumer("reader-1", None)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert ids(t)[0] == 7
    assert_exact_files(t)


def test_consumer_changelog_only_does_not_protect_snapshots(catalog: Catalog) -> None:
    t = make(catalog, pk=False, **{"consumer.changelog-only": "true"})
    fill(t, 6)
    t.maintenance.reset_consumer("reader", 2)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert ids(t) == [6]


def test_tags_pin_files_after_their_snapshot_expired(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 6)
    t.write(pa.table({"dt": ["2024-01-01"], "id": [0], "v": [99]}, schema=SCHEMA), overwrite=True)
    capture(t, contents)
    t.create_tag("early", 2)
    t.create_tag("mid", 5)
    contents.update(fill_more(t, 6, contents))
    t.expire_snapshots(retain_min=1, time_retained=0, max_deletes=100)
    assert len(ids(t)) == 1
    assert rows(t.read(tag="early")) == contents[2]
    assert rows(t.read(tag="mid")) == contents[5]
    assert_exact_files(t)


def fill_more(t: Table, n: int, contents: dict[int, list[tuple[object, ...]]]) -> dict[int, list[tuple[object, ...]]]:
    for i in range(n):
        write(t, 100 + i)
        capture(t, contents)
    return contents


def test_compaction_deletes_are_collected(catalog: Catalog) -> None:
    t = make(catalog)
    contents = fill(t, 6)
    assert t.maintenance.compact(full=True) is not None
    capture(t, contents)
    fill_more(t, 3, contents)
    before = len(disk_files(t))
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert len(disk_files(t)) < before
    check_reads(t, contents)
    assert_exact_files(t)


def test_invalid_settings(catalog: Catalog) -> None:
    t = make(catalog)
    with pytest.raises(OptionError, match="at least 1"):
        t.expire_snapshots(retain_min=0)
    with pytest.raises(OptionError, match="must not be less than"):
        t.expire_snapshots(retain_min=5, retain_max=3)
    with pytest.raises(OptionError, match="unknown expire settings"):
        t.expire_snapshots(retain_minimum=5)
    with pytest.raises(OptionError):
        t.expire_snapshots(time_retained="soon")


def test_expire_on_empty_table(catalog: Catalog) -> None:
    t = make(catalog)
    assert t.expire_snapshots(retain_min=1, time_retained=0).expired_snapshot_ids == []


def test_second_run_after_killed_expiry_completes_it(catalog: Catalog) -> None:
    """A run killed after deleting files but before deleting snapshot files is finished by the next run."""
    t = make(catalog)
    contents = fill(t, 8)
    latest = t.latest_snapshot_id()
    assert latest is not None
    # simulate the killed run: the files of snapshots 1..3 that snapshot 4 no longer needs are deleted, the
    # snapshot files stay
    keep = set()
    from tests.table_engine.store.lifecycle.lifecycle_support import snapshot_references

    for sid in range(4, latest + 1):
        keep |= snapshot_references(t, t.snapshot(sid))
    doomed = set()
    for sid in range(1, 4):
        doomed |= snapshot_references(t, t.snapshot(sid)) - keep
    assert doomed
    for p in doomed:
        t.file_io.delete(p)
    r = t.expire_snapshots(retain_min=1, time_retained=0)
    assert r.expired_snapshot_ids == list(range(1, latest))
    check_reads(t, contents)
    assert_exact_files(t)


def test_concurrent_expiry_stops_when_end_snapshot_vanished(catalog: Catalog) -> None:
    t = make(catalog, pk=False)
    fill(t, 6)
    t.file_io.delete(snapshot_path(t.path, 5))  # as if another process expired it
    cfg = ExpireConfig.from_options(t.options, {"retain_min": 2, "time_retained": 0})
    before = disk_files(t)
    r = expire_snapshots(t.store, cfg)
    assert r.expired_snapshot_ids == [] and disk_files(t) == before


# ------------------------------------------------------------------------------------------------ changelog


def _add_changelog(t: Table) -> str:
    """Give the latest snapshot a changelog manifest list with one changelog file (as changelog-producer=input
    writers do): the file is a copy of one of its data files."""
    snap = t.latest_snapshot()
    assert snap is not None
    entry = next(e for e in live_entries(t.file_io, t.path, snap) if e.file.min_sequence_number >= 0)

    src = t.store.path_factory.data_file(entry.partition, entry.bucket, entry.file)
    name = f"changelog-{uuid.uuid4()}-0.parquet"
    dst = src.rsplit("/", 1)[0] + "/" + name
    t.file_io.write_bytes(dst, t.file_io.read_bytes(src))
    from dataclasses import replace

    cl_entry = ManifestEntry(FileKind.ADD, entry.partition, entry.bucket, entry.total_buckets,
                             replace(entry.file, file_name=name))
    manifest = f"manifest-{uuid.uuid4()}-changelog-0"
    size = write_manifest(t.file_io, f"{t.path}/manifest/{manifest}", [cl_entry])
    meta = ManifestFileMeta(manifest, size, 1, 0, snap_stats(t), 0)
    list_name = f"manifest-list-{uuid.uuid4()}-changelog"
    write_manifest_list(t.file_io, f"{t.path}/manifest/{list_name}", [meta])
    updated = replace(snap, changelog_manifest_list=list_name, changelog_record_count=entry.file.row_count)
    t.file_io.write_bytes(snapshot_path(t.path, snap.id), updated.to_json().encode(), overwrite=True)
    return dst


def snap_stats(t: Table) -> SimpleStats:
    from table_engine.store.committing.manifests import partition_stats

    return partition_stats([], [f.type for f in t.schema.partition_fields()])


def test_changelog_files_expire_with_their_snapshot(catalog: Catalog) -> None:
    t = make(catalog, pk=False)
    write(t, 0)
    first = _add_changelog(t)
    write(t, 1)
    second = _add_changelog(t)
    fill_more(t, 2, {})
    assert_exact_files(t)
    r = t.expire_snapshots(retain_min=3, time_retained=0)
    assert r.expired_snapshot_ids == [1] and r.deleted_changelog_files == 1
    assert not t.file_io.exists(first) and t.file_io.exists(second)
    assert_exact_files(t)


def test_decoupled_changelog_outlives_snapshots(catalog: Catalog) -> None:
    t = make(catalog, pk=False, **{"changelog.num-retained.min": "4", "changelog.num-retained.max": "4"})
    write(t, 0)
    changelog_file = _add_changelog(t)
    fill_more(t, 5, {})
    r = t.expire_snapshots(retain_min=2, time_retained=0)
    assert r.expired_snapshot_ids == [1, 2, 3, 4] and r.changelogs_kept == [1, 2, 3, 4]
    # changelog retention (4 from the latest snapshot 6) expires changelogs 1 and 2 right away
    assert r.expired_changelog_ids == [1, 2]
    assert list_changelog_ids(t.file_io, t.path) == [3, 4]
    assert not t.file_io.exists(changelog_file)
    assert read_snapshot(t.file_io, t.path, 5).id == 5
    assert_nothing_missing(t)


def test_decoupled_changelog_keeps_append_files_until_changelog_expiry(catalog: Catalog) -> None:
    t = make(catalog, True, **{"changelog.num-retained.min": "30", "changelog.num-retained.max": "30",
                               "changelog.time-retained": "10 h"})
    contents = fill(t, 6)
    t.maintenance.compact(full=True)
    capture(t, contents)
    fill_more(t, 2, contents)
    r = t.expire_snapshots(retain_min=1, time_retained=0)
    assert r.expired_changelog_ids == [] and len(r.changelogs_kept) == len(r.expired_snapshot_ids)
    entries_before = len(disk_files(t))
    # the APPEND files the compaction replaced are kept: the changelogs of their commits read them
    for cid in r.changelogs_kept:
        c = read_changelog_or_fail(t, cid)
        from table_engine.store.lifecycle.file_refs import FileRefs

        for p in FileRefs(t.store).delta_added(c, only=lambda e: e.file.file_source in (None, FileSource.APPEND)):
            assert t.file_io.exists(p)
    check_reads(t, contents)
    # now let the changelogs expire too: everything unreferenced goes
    r2 = t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=1, changelog_retain_max=1,
                            changelog_time_retained=0)
    assert r2.expired_changelog_ids
    assert list_changelog_ids(t.file_io, t.path) == []
    assert len(disk_files(t)) < entries_before
    check_reads(t, contents)
    assert_exact_files(t)


def read_changelog_or_fail(t: Table, cid: int) -> Snapshot:
    from table_engine.format.changelog_file import read_changelog

    c = read_changelog(t.file_io, t.path, cid)
    assert c is not None
    return c


def test_clean_empty_directories(catalog: Catalog) -> None:
    t = make(catalog, pk=False, **{"snapshot.clean-empty-directories": "true"})
    write(t, 0)
    write(t, 1)
    t.maintenance.drop_partitions([{"dt": "2024-01-01"}])
    write(t, 3)
    t.expire_snapshots(retain_min=1, time_retained=0)
    import os

    assert not os.path.exists(f"{t.path}/dt=2024-01-01")
    assert os.path.exists(f"{t.path}/dt=2024-01-02")
    assert_exact_files(t)


def test_switching_decoupling_off_collects_files_owed_to_changelogs(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog, pk=False, **{"changelog.num-retained.min": "5", "changelog.num-retained.max": "5"})
    write(t, 0)
    t.maintenance.drop_partitions([{"dt": "2024-01-01"}])  # deletes the APPEND file of commit 1
    clock.advance(1)  # snapshot 1 expires once snapshot 2 is older than the cut-off (now - 0 ms)
    r = t.expire_snapshots(retain_min=1, time_retained=0)
    assert r.changelogs_kept == [1]
    assert_nothing_missing(t)
    # the delete of snapshot 2 was left to changelog 2, which will never exist once decoupling is off
    r = t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=1, changelog_retain_max=1,
                           changelog_time_retained=0)
    assert r.expired_changelog_ids == [1] and r.deleted_changelog_files == 1
    assert_exact_files(t)


def test_deletes_owed_to_a_changelog_that_will_never_exist(catalog: Catalog) -> None:
    """Decoupled expiry leaves the writer files deleted by the new earliest snapshot to its future changelog; if
    that snapshot expires after decoupling was switched off, its expiry settles them."""
    t = make(catalog, pk=False, **{"changelog.num-retained.min": "5", "changelog.num-retained.max": "5"})
    t.write(pa.table({"dt": ["2024-01-01", "2024-01-02"], "id": [0, 0], "v": [0, 0]}, schema=SCHEMA))
    t.maintenance.drop_partitions([{"dt": "2024-01-01"}])
    t.maintenance.drop_partitions([{"dt": "2024-01-02"}])
    assert t.expire_snapshots(retain_min=1, time_retained=0, max_deletes=1).changelogs_kept == [1]
    t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=1, changelog_retain_max=1,
                       changelog_time_retained=0)
    assert list_changelog_ids(t.file_io, t.path) == [] and ids(t) == [3]
    assert_exact_files(t)


def test_leftover_changelogs_go_before_the_snapshots_they_share_manifests_with(catalog: Catalog) -> None:
    t = make(catalog, pk=False, **{"changelog.num-retained.min": "9", "changelog.num-retained.max": "9",
                                  "manifest.merge-min-count": "3"})
    t.write(pa.table({"dt": ["2024-01-01", "2024-01-02"], "id": [0, 0], "v": [0, 0]}, schema=SCHEMA))
    # snapshot 2 deletes a writer file: changelog 2 will delete it
    t.maintenance.drop_partitions([{"dt": "2024-01-01"}])
    for i in range(3):
        write(t, 2 * i + 1)  # later snapshots merge the manifests changelog 2 still reads
    assert t.expire_snapshots(retain_min=3, time_retained=0).changelogs_kept == [1, 2]
    t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=1, changelog_retain_max=1,
                       changelog_time_retained=0)
    assert list_changelog_ids(t.file_io, t.path) == [] and ids(t) == [5]
    assert_exact_files(t)


# ---------------------------------------------------------------------------------------- time cut-offs, exactly


def test_time_retained_cut_off_to_the_millisecond(catalog: Catalog, clock: ManualClock) -> None:
    """Paimon's rule: snapshot n expires only if snapshot n + 1 is strictly older than ``now - time-retained``. A
    successor committed in the very millisecond of the cut-off keeps it; one millisecond later it goes."""
    t = make(catalog, pk=False)
    write(t, 0)
    clock.advance(1000)
    write(t, 1)  # snapshot 2 at T + 1000
    clock.advance(1000)  # now T + 2000: the cut-off (now - 1000 ms) is snapshot 2's own millisecond
    assert t.expire_snapshots(retain_min=1, time_retained=1000).expired_snapshot_ids == []
    clock.advance(1)
    assert t.expire_snapshots(retain_min=1, time_retained=1000).expired_snapshot_ids == [1]
    assert_exact_files(t)


def test_committed_in_the_same_millisecond_as_the_expiry(catalog: Catalog, clock: ManualClock) -> None:
    """What made the expiry tests flaky: with ``time_retained=0`` a snapshot committed in the millisecond the
    expiry reads the clock is not older than the cut-off, so its predecessor stays (deterministic here)."""
    t = make(catalog, pk=False)
    write(t, 0)
    write(t, 1)
    assert t.expire_snapshots(retain_min=1, time_retained=0).expired_snapshot_ids == []
    clock.advance(1)
    assert t.expire_snapshots(retain_min=1, time_retained=0).expired_snapshot_ids == [1]


def test_changelog_time_retained_cut_off_to_the_millisecond(catalog: Catalog, clock: ManualClock) -> None:
    """Paimon's ``ExpireChangelogImpl``: changelog n expires only if its own time is strictly older than
    ``now - changelog.time-retained``."""
    t = make(catalog, pk=False)
    start = clock.millis
    for i in range(3):
        write(t, i)  # snapshots at T, T + 1000, T + 2000
        clock.advance(1000)
    # now T + 3000; changelog 1 (time T) is exactly at the cut-off T + 3000 - 3000
    r = t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=1, changelog_time_retained=3000)
    assert r.changelogs_kept == [1, 2] and r.expired_changelog_ids == []
    assert read_changelog_or_fail(t, 1).time_millis == start
    clock.advance(1)
    r = t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=1, changelog_time_retained=3000)
    assert r.expired_changelog_ids == [1]
    assert_exact_files(t)


def test_one_expiry_run_reads_the_clock_once(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog, pk=False)
    for i in range(4):
        write(t, i)
        clock.advance(1)
    before = clock.reads
    r = t.expire_snapshots(retain_min=1, time_retained=0, changelog_retain_min=2, changelog_time_retained=1)
    assert r.changelogs_kept == [1, 2, 3] and r.expired_changelog_ids == [1, 2]
    assert clock.reads == before + 1
