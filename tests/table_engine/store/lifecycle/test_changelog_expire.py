"""Snapshot expiry and orphan cleanup with real changelog producers: ``changelog.num-retained.min/max`` and
``changelog.time-retained`` keep changelog files (decoupled as ``changelog/changelog-<id>``) after their
snapshots expired; without decoupling they go with their snapshots; orphan cleanup never removes retained ones."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.format.changelog_file import list_changelog_ids, read_changelog
from table_engine.format.snapshot import Snapshot
from table_engine.store.lifecycle.file_refs import FileRefs
from table_engine.table import Table
from tests.table_engine.store.changelog_support import apply_changes, changelog_of, table_rows

S = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def make(catalog: Catalog, producer: str, **options: str) -> Table:
    return catalog.create_table("db.t", S, primary_keys=["id"], options={
        "bucket": "2", "changelog-producer": producer, **options})


def history(t: Table, n: int = 6) -> None:
    for i in range(n):
        ids = [i, i + 1, i + 2]
        t.write(pa.table({"id": ids, "v": [f"v{i}"] * 3}, schema=S))
    t.write(pa.table({"id": [1], "v": ["x"]}, schema=S), row_kinds=["-D"])


def changelog_paths(t: Table, snap: Snapshot) -> list[str]:
    return FileRefs(t.store).changelog_paths(snap, missing_ok=False)


def all_changes_including_decoupled(t: Table) -> list[tuple[object, ...]]:
    """Changelogs of expired snapshots (``changelog/``) then of live snapshots, in id order."""
    out = []
    live = {s.id: s for s in t.snapshots()}
    for cid in list_changelog_ids(t.file_io, t.path):
        if cid not in live:
            c = read_changelog(t.file_io, t.path, cid)
            assert c is not None
            out += changelog_of(t, c)
    for sid in sorted(live):
        out += changelog_of(t, live[sid])
    return out


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
def test_decoupled_changelog_keeps_changelog_files_after_snapshot_expiry(catalog: Catalog, producer: str) -> None:
    full = {"full-compaction.delta-commits": "1"} if producer == "full-compaction" else {}
    t = make(catalog, producer, **{"changelog.num-retained.min": "100", "changelog.num-retained.max": "100",
                                   "changelog.time-retained": "10 h", **full})
    history(t)
    snaps = t.snapshots()
    with_changelog = [s for s in snaps if s.changelog_manifest_list]
    assert with_changelog
    kept_files = {p for s in with_changelog for p in changelog_paths(t, s)}
    r = t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    assert r.expired_snapshot_ids == [s.id for s in snaps[:-1]]
    assert r.changelogs_kept == r.expired_snapshot_ids and r.deleted_changelog_files == 0
    for p in kept_files:
        assert t.file_io.exists(p)
    # the whole stream is still there: it rebuilds the table (input: upserts, no retractions of old rows)
    strict = producer != "input"
    assert apply_changes(all_changes_including_decoupled(t), strict=strict) == table_rows(t)
    # orphan cleanup (with the cutoff now) keeps every retained changelog file
    orphans = t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    assert not set(orphans.paths) & kept_files
    for p in kept_files:
        assert t.file_io.exists(p)
    assert apply_changes(all_changes_including_decoupled(t), strict=strict) == table_rows(t)


def test_changelog_retention_expires_the_oldest_changelogs(catalog: Catalog) -> None:
    t = make(catalog, "lookup", **{"changelog.num-retained.min": "4", "changelog.num-retained.max": "4"})
    history(t)  # 7 commits, each APPEND + COMPACT with the changelog: 14 snapshots
    snaps = {s.id: s for s in t.snapshots()}
    files = {sid: changelog_paths(t, s) for sid, s in snaps.items()}
    r = t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0, changelog_time_retained=0)
    latest = max(snaps)
    # changelogs of the 4 newest ids (the latest is still a snapshot) stay, older ones are gone with their files
    assert list_changelog_ids(t.file_io, t.path) == list(range(latest - 3, latest))
    for sid, paths in files.items():
        for p in paths:
            assert t.file_io.exists(p) == (sid > latest - 4), (sid, p)
    assert set(r.expired_changelog_ids) == set(range(1, latest - 3))


def test_changelog_files_go_with_their_snapshots_when_not_decoupled(catalog: Catalog) -> None:
    t = make(catalog, "lookup")
    history(t)
    snaps = t.snapshots()
    files = {s.id: changelog_paths(t, s) for s in snaps}
    r = t.expire_snapshots(retain_min=2, retain_max=2, time_retained=0)
    assert r.changelogs_kept == [] and r.deleted_changelog_files == sum(
        len(files[s]) for s in r.expired_snapshot_ids)
    for sid, paths in files.items():
        for p in paths:
            assert t.file_io.exists(p) == (sid not in r.expired_snapshot_ids)
    assert list_changelog_ids(t.file_io, t.path) == []


def test_changelog_time_retained_decouples(catalog: Catalog) -> None:
    t = make(catalog, "input", **{"changelog.time-retained": "10 h"})
    history(t, 3)
    r = t.expire_snapshots(retain_min=1, time_retained=0)
    assert r.changelogs_kept == r.expired_snapshot_ids != []
    assert r.expired_changelog_ids == []  # younger than 10 h
    assert apply_changes(all_changes_including_decoupled(t), strict=False) == table_rows(t)
