"""Rollback to a snapshot or a tag (Paimon's ``rollback`` procedure and ``RollbackHelper``).

The target becomes the latest snapshot: snapshots, tags and long-lived changelogs newer than it are removed, and
(unlike Paimon, which leaves that to orphan cleaning) the files only they used are deleted. Rolling back to a tag
whose snapshot already expired writes the tag's snapshot back as ``snapshot-<id>``; it is then the only snapshot,
and a long-lived changelog of that id (left by its expiry) is removed: the snapshot is live again.
(Tags keep their snapshot's data, not its changelog: a changelog manifest list that is gone is left out.)

Order: the target snapshot file exists first, then the LATEST hint points at it, newer snapshot files are deleted
from the newest down, then tags and changelogs, and only then the files nothing references any more -- so no
remaining snapshot or tag ever points at a deleted file. Rollback holds the history fence
(:class:`~table_engine.store.pins.HistoryFence`): it starts once the commits in flight have published or
given up, and no commit publishes until it is done (a commit acknowledged before the rollback is rolled back with
the rest; one that waited publishes on the target). Concurrent readers of a removed snapshot may fail.

What stays (by the invariants of :mod:`~table_engine.store.lifecycle.file_refs`): everything the target uses -- and so
everything older snapshots and tags need, which the target or an older tag holds -- plus what long-lived
changelogs and branches use.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from table_engine.errors import MissingFileError, SnapshotNotExistError, TableEngineError
from table_engine.format.changelog_file import (
    delete_changelog,
    list_changelog_ids,
    read_changelog,
    write_changelog_hint,
)
from table_engine.format.snapshot import (
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    read_snapshot,
    snapshot_dir,
    snapshot_path,
)
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.file_refs import FileRefs, ReferencedFiles
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.pins import HistoryFence

__all__ = ["RollbackResult", "rollback_to"]

log = logging.getLogger(__name__)


@dataclass
class RollbackResult:
    """What a rollback removed: snapshots, tags, changelogs, and how many files it deleted."""

    snapshot_id: int
    removed_snapshot_ids: list[int] = field(default_factory=list)
    removed_tags: list[str] = field(default_factory=list)
    removed_changelog_ids: list[int] = field(default_factory=list)
    deleted_files: int = 0


def rollback_to(ctx: StoreContext, snapshot_id: int | None = None, tag: str | None = None) -> RollbackResult:
    """Make snapshot ``snapshot_id`` (or the snapshot of ``tag``) the latest; see the module docstring."""
    if (snapshot_id is None) == (tag is None):
        raise TableEngineError("rollback needs exactly one of snapshot_id and tag")
    with HistoryFence(ctx.file_io, ctx.table_path, "rollback"):  # no commit publishes while history is rewritten
        result = _rollback_to(ctx, snapshot_id, tag)
        # the post-commit callback writes the target's metadata afresh, before the fence lets commits publish: a
        # commit after the rollback must find it (simulation rollback-iceberg seed 2842: written after the fence,
        # it raced the next commit's and left the table with no Iceberg metadata)
        ctx.published_in_fence(result.snapshot_id)
    return result


def _rollback_to(ctx: StoreContext, snapshot_id: int | None, tag: str | None) -> RollbackResult:
    fio, tp = ctx.file_io, ctx.table_path
    tags = TagManager(ctx)
    target = tags.get_or_raise(tag).snapshot if tag is not None else _find(ctx, tags, snapshot_id)
    t = target.id
    latest = latest_snapshot_id(fio, tp)
    earliest = earliest_snapshot_id(fio, tp)
    target_exists = fio.exists(snapshot_path(tp, t))
    refs = FileRefs(ctx)
    removed = _snapshots_after(ctx, t, latest, earliest)
    tagged = tags.tagged_snapshots()
    removed_tags = [(s, names) for s, names in tagged if s.id > t]
    kept_tags = [s for s, _ in tagged if s.id <= t]
    changelog_ids = list_changelog_ids(fio, tp)
    removed_changelogs = [c for c in (read_changelog(fio, tp, i) for i in changelog_ids if i > t) if c is not None]
    kept_changelogs = [c for c in (read_changelog(fio, tp, i) for i in changelog_ids if i <= t) if c is not None]
    result = RollbackResult(t)
    if ctx.history_rewriting is not None:  # before anything is deleted: Iceberg readers never meet deleted files
        ctx.history_rewriting(t)

    # what the removed metadata references (read before it is deleted)
    data, meta = _removed_references(refs, removed, removed_tags, removed_changelogs, target_exists)
    keep = _kept_references_of_standing_tags(refs, tags, target, kept_tags, kept_changelogs)
    # a restored snapshot is live again: the long-lived changelog its expiry left under the same id goes (only the
    # file: the snapshot uses all it references; an expiry writes it anew), or a later expiry of the snapshot would
    # delete the manifests that changelog still names
    superseded = [c for c in kept_changelogs if c.id == t and not target_exists]
    kept_changelogs = [c for c in kept_changelogs if c not in superseded]

    # switch the metadata
    if not target_exists:
        if target.changelog_manifest_list and not fio.exists(refs.manifest_path(target.changelog_manifest_list)):
            # tags keep data, not changelogs: the restored snapshot must not claim a changelog that is gone
            target = replace(target, changelog_manifest_list=None, changelog_manifest_list_size=None,
                             changelog_record_count=None)
        fio.write_if_absent(snapshot_path(tp, t), target.to_json().encode("utf-8"))
    fio.overwrite_hint(f"{snapshot_dir(tp)}/LATEST", str(t).encode("ascii"))
    _remove_metadata(ctx, tags, t, removed, removed_tags, [*superseded, *removed_changelogs], kept_changelogs,
                     result)
    if not target_exists:
        fio.overwrite_hint(f"{snapshot_dir(tp)}/EARLIEST", str(t).encode("ascii"))

    # delete what nothing references any more
    result.deleted_files = refs.delete(p for p in data if p not in keep.data)
    result.deleted_files += refs.delete(p for n, p in meta.items() if n not in keep.meta)
    log.info("rolled %s back to snapshot %d: removed snapshots %s, tags %s, changelogs %s; %d files deleted",
             tp, t, result.removed_snapshot_ids, result.removed_tags, result.removed_changelog_ids,
             result.deleted_files)
    return result


def _snapshots_after(ctx: StoreContext, t: int, latest: int | None, earliest: int | None) -> list[Snapshot]:
    """The existing snapshots after ``t`` up to ``latest``, ascending."""
    removed: list[Snapshot] = []
    if latest is not None and earliest is not None:
        for sid in range(max(earliest, t + 1), latest + 1):
            try:
                removed.append(read_snapshot(ctx.file_io, ctx.table_path, sid))
            except SnapshotNotExistError:
                continue
    return removed


def _removed_references(refs: FileRefs, removed: list[Snapshot], removed_tags: list[tuple[Snapshot, list[str]]],
                        removed_changelogs: list[Snapshot], target_exists: bool) -> tuple[set[str], dict[str, str]]:
    """Data file paths and metadata files (name -> path) the removed snapshots, tags and changelogs reference."""
    data: set[str] = set()
    meta: dict[str, str] = {}
    for i, snap in enumerate(removed):
        if i == 0 and not target_exists:
            data |= refs.live_paths(snap, missing_ok=True)
        data |= refs.delta_added(snap)
        data.update(refs.changelog_paths(snap))
        meta.update(refs.meta_files(snap))
    for snap, _ in removed_tags:
        data |= refs.live_paths(snap, missing_ok=True)
        meta.update(refs.meta_files(snap, changelog_list=False))
    for c in removed_changelogs:
        data |= refs.delta_added(c)
        data.update(refs.changelog_paths(c))
        meta.update(refs.meta_files(c, index=False))
    return data, meta


_KEPT_TAG_ATTEMPTS = 3
"""Reads of the kept tags' references before a missing file is an error (a tag deleted meanwhile is not)."""


def _kept_references_of_standing_tags(refs: FileRefs, tags: TagManager, target: Snapshot, kept_tags: list[Snapshot],
                                      kept_changelogs: list[Snapshot]) -> ReferencedFiles:
    """:func:`_kept_references`, where a kept tag deleted after the tags were read (its deletion removed the files
    only it held, so they are missing) is left out: the tags standing now are read again and the references with
    them (simulation ``rollback-concurrent`` seeds 16575 and 24414, where the rollback failed with
    ``MissingFileError``). A missing file of a tag that still stands is an error."""
    for attempt in range(_KEPT_TAG_ATTEMPTS):
        try:
            return _kept_references(refs, target, kept_tags, kept_changelogs)
        except MissingFileError:
            standing = [s for s, _ in tags.tagged_snapshots() if s.id <= target.id]
            if attempt == _KEPT_TAG_ATTEMPTS - 1 or {s.id for s in standing} == {s.id for s in kept_tags}:
                raise
            log.info("rollback of %s: a tag was deleted while it ran; reading the tags standing now",
                     tags.table_path)
            kept_tags = standing
    raise AssertionError("unreachable")  # pragma: no cover


def _kept_references(refs: FileRefs, target: Snapshot, kept_tags: list[Snapshot],
                     kept_changelogs: list[Snapshot]) -> ReferencedFiles:
    """What the target snapshot, the kept tags and changelogs and the branches still use."""
    keep = ReferencedFiles(refs.live_paths(target), refs.skip_names([target, *kept_tags]))
    keep.meta.update(refs.meta_files(target))
    keep.meta |= refs.skip_names(kept_changelogs, missing_ok=True)
    for c in kept_changelogs:
        keep.data |= refs.delta_added(c)
        keep.meta.update(refs.meta_files(c, data_lists=False, index=False))
    keep.update(refs.branch_pins())
    return keep


def _remove_metadata(ctx: StoreContext, tags: TagManager, target: int, removed: list[Snapshot],
                     removed_tags: list[tuple[Snapshot, list[str]]], removed_changelogs: list[Snapshot],
                     kept_changelogs: list[Snapshot], result: RollbackResult) -> None:
    """Delete the snapshot, tag and changelog files after the target (newest snapshot first)."""
    fio, tp = ctx.file_io, ctx.table_path
    for snap in reversed(removed):
        fio.try_delete(snapshot_path(tp, snap.id))
        result.removed_snapshot_ids.append(snap.id)
    result.removed_snapshot_ids.reverse()
    # a tag created on a removed snapshot while this ran (after the tags were read) goes too: its creator saw the
    # snapshot still there after writing the tag (TagManager.create), so it is listed now
    listed = {name for _, names in removed_tags for name in names}
    late = [(s, [n for n in names if n not in listed]) for s, names in tags.tagged_snapshots() if s.id > target]
    for _, names in [*removed_tags, *late]:
        for name in names:
            fio.try_delete(tags.path(name))
            result.removed_tags.append(name)
    for c in removed_changelogs:
        delete_changelog(fio, tp, c.id)
        result.removed_changelog_ids.append(c.id)
    if removed_changelogs:
        write_changelog_hint(fio, tp, "LATEST", kept_changelogs[-1].id if kept_changelogs else -1)


def _find(ctx: StoreContext, tags: TagManager, snapshot_id: int | None) -> Snapshot:
    assert snapshot_id is not None
    try:
        return read_snapshot(ctx.file_io, ctx.table_path, snapshot_id)
    except SnapshotNotExistError:
        for snap, _ in tags.tagged_snapshots():  # an expired snapshot still held by a tag
            if snap.id == snapshot_id:
                return snap
        raise
