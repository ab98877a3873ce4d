"""Paimon's ``compact_manifest`` procedure: rewrite the data manifests of the latest snapshot into full ones.

Every manifest of the latest snapshot (its base and delta lists) is read, ADD/DELETE pairs of the same file cancel,
the DELETE entries left (files no longer in the table) are dropped, and the ADD entries are written into manifests of
``manifest.target-file-size``. They are published as a new COMPACT snapshot (commit identifier ``Long.MAX_VALUE``,
as Paimon's ``FileStoreCommitImpl.compactManifest``) whose base list holds the new manifests, whose delta list is
empty and which has no changelog; the record count, index manifest, watermark, statistics, properties and next row
id are the latest snapshot's. The table's data is unchanged: a reader of the new snapshot sees the same files.

Nothing to do -- no DELETE entry and at most one manifest below the target size (what a run leaves) -- publishes
nothing, so a second run is a no-op. A concurrent commit that takes the snapshot id makes it start over from the new
latest snapshot (a few times); the manifests of a lost try are deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from table_engine import clock
from table_engine.errors import CommitConflictError
from table_engine.format.manifest import FileKind, merge_entries, read_manifest
from table_engine.format.manifest_list import ManifestFileMeta, read_manifest_list, write_manifest_list
from table_engine.format.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    CommitKind,
    Snapshot,
)
from table_engine.io.paths import manifest_dir, new_manifest_list_name
from table_engine.store.committing.commit import WRITER_VERSION
from table_engine.store.committing.manifests import write_manifest_files
from table_engine.store.committing.scoped_properties import scoped_properties
from table_engine.store.context import StoreContext
from table_engine.store.pins import BasePin

__all__ = ["ManifestCompactResult", "compact_manifest"]

log = logging.getLogger(__name__)

_TRIES = 5


@dataclass
class ManifestCompactResult:
    """What a ``compact_manifest`` run did (or, dry, would do)."""

    snapshot_id: int | None = None
    """The COMPACT snapshot published (None: nothing to do, a dry run, or no snapshot)."""
    based_on: int | None = None
    """The snapshot whose manifests were (or would be) rewritten."""
    manifests_before: int = 0
    delete_entries: int = 0
    small_manifests: int = 0
    manifests_after: int | None = None
    needed: bool = False
    written: list[str] = field(default_factory=list)


def compact_manifest(ctx: StoreContext, commit_user: str, dry_run: bool = False) -> ManifestCompactResult:
    """Rewrite the latest snapshot's data manifests into full ones in a COMPACT snapshot (see the module)."""
    fio, tp = ctx.file_io, ctx.table_path
    target = ctx.options.manifest_target_file_size()
    for attempt in range(_TRIES):
        with BasePin(fio, tp, ctx.commit_lock, ctx.snapshot_commit) as pin:  # before the base is read (see pins.py)
            published, result = _attempt(ctx, pin, commit_user, dry_run, target)
        if result is None:
            return ManifestCompactResult()
        if published:
            assert result.snapshot_id is not None
            ctx.published(result.snapshot_id)  # under a pin of its own (see StoreContext.published)
        if published or not result.needed or dry_run:
            return result
        assert result.based_on is not None
        log.info("manifest compaction of %s lost snapshot id %d to another commit; retrying (%d)", tp,
                 result.based_on + 1, attempt + 1)
    raise CommitConflictError(f"compact-manifest of {tp}: other commits took the next snapshot id {_TRIES} times; "
                              "nothing was committed, run it again")


def _attempt(ctx: StoreContext, pin: BasePin, commit_user: str, dry_run: bool,
             target: int) -> tuple[bool, ManifestCompactResult | None]:
    """One attempt on the pinned latest snapshot: (published, result), result None for a table without snapshots."""
    tp = ctx.table_path
    latest = pin.latest()
    if latest is None:
        return False, None
    metas = _data_manifests(ctx, latest)
    small = sum(1 for m in metas if m.file_size < target)
    deletes = sum(m.num_deleted_files for m in metas)
    result = ManifestCompactResult(based_on=latest.id, manifests_before=len(metas), delete_entries=deletes,
                                   small_manifests=small, needed=deletes > 0 or small > 1)
    if not result.needed or dry_run:
        return False, result
    published = _try(ctx, pin, latest, metas, commit_user, result)
    if published:
        log.info("compacted the %d manifests of snapshot %d of %s into %d (snapshot %d)", len(metas), latest.id,
                 tp, result.manifests_after, result.snapshot_id)
    return published, result


def _data_manifests(ctx: StoreContext, snap: Snapshot) -> list[ManifestFileMeta]:
    out: list[ManifestFileMeta] = []
    for name in (snap.base_manifest_list, snap.delta_manifest_list):
        out.extend(read_manifest_list(ctx.file_io, f"{manifest_dir(ctx.table_path)}/{name}"))
    return out


def _try(ctx: StoreContext, pin: BasePin, latest: Snapshot, metas: list[ManifestFileMeta], commit_user: str,
         result: ManifestCompactResult) -> bool:
    fio, tp = ctx.file_io, ctx.table_path
    mdir = manifest_dir(tp)
    entries = [e for m in metas for e in read_manifest(fio, f"{mdir}/{m.file_name}")]
    live = [e for e in merge_entries(entries) if e.kind == FileKind.ADD]
    written: list[str] = []
    try:
        part_types = [f.type for f in ctx.schema.partition_fields()]
        new = write_manifest_files(fio, tp, live, latest.schema_id, part_types,
                                   ctx.options.manifest_target_file_size())
        written.extend(m.file_name for m in new)
        base_name, delta_name = _list_names()
        base_size = write_manifest_list(fio, f"{mdir}/{base_name}", new)
        written.append(base_name)
        delta_size = write_manifest_list(fio, f"{mdir}/{delta_name}", [])
        written.append(delta_name)
    except BaseException:
        _delete(ctx, written)
        raise
    snapshot = Snapshot(
        id=latest.id + 1, schema_id=latest.schema_id, base_manifest_list=base_name,
        delta_manifest_list=delta_name, index_manifest=latest.index_manifest, commit_user=commit_user,
        commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind=CommitKind.COMPACT, time_millis=clock.now_millis(),
        total_record_count=latest.total_record_count, delta_record_count=0, watermark=latest.watermark,
        statistics=latest.statistics, base_manifest_list_size=base_size, delta_manifest_list_size=delta_size,
        properties=scoped_properties(), next_row_id=latest.next_row_id, writer_version=WRITER_VERSION)
    # a failed publish request may still have published: its files are then left for orphan cleaning, never deleted
    if pin.publish(snapshot):
        result.snapshot_id, result.manifests_after, result.written = snapshot.id, len(new), written
        return True
    _delete(ctx, written)
    return False


def _list_names() -> tuple[str, str]:
    import uuid

    u = str(uuid.uuid4())
    return new_manifest_list_name(u, "0"), new_manifest_list_name(u, "1")


def _delete(ctx: StoreContext, names: list[str]) -> None:
    for name in names:
        ctx.file_io.try_delete(f"{manifest_dir(ctx.table_path)}/{name}")
