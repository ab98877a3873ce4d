"""Paimon's ``remove_unexisting_files`` procedure: drop from the metadata the data files that are gone from storage.

A data file the latest snapshot references but storage no longer has (deleted by hand, lost by a bucket policy)
makes every read of the table fail (:class:`~table_engine.errors.MissingFileError`). This finds those files -- one
listing per bucket directory, an existence check per file only for files at an external path -- and, unless
``dry_run``, commits DELETE entries for them in one OVERWRITE snapshot (commit identifier ``Long.MAX_VALUE``), as
Paimon's ``SparkRemoveUnexistingFiles`` does: a ``DataIncrement`` of deleted files, which its commit makes an
OVERWRITE since it deletes files. Their rows are gone from the table; nothing is deleted on storage. Only data files
are checked (as in Paimon), not changelog, index or extra files. No missing file: nothing is committed, so a second
run is a no-op. A concurrent commit that takes the snapshot id makes it start over (a few times).
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from table_engine import clock
from table_engine.errors import CommitConflictError
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.format.manifest_list import ManifestFileMeta, read_manifest_list, write_manifest_list
from table_engine.format.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    CommitKind,
    Snapshot,
)
from table_engine.io.paths import manifest_dir, new_manifest_list_name
from table_engine.store.committing.commit import WRITER_VERSION
from table_engine.store.committing.manifests import merge_manifests, write_manifest_files
from table_engine.store.committing.scoped_properties import scoped_properties
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.file_refs import FileRefs
from table_engine.store.pins import BasePin
from table_engine.store.reading.scan import live_entries

__all__ = ["UnexistingResult", "missing_data_files", "remove_unexisting_files"]

log = logging.getLogger(__name__)

_TRIES = 5


@dataclass
class UnexistingResult:
    """What a ``remove_unexisting_files`` run found (and, not dry, removed from the metadata)."""

    based_on: int | None = None
    """The snapshot whose files were checked."""
    paths: list[str] = field(default_factory=list)
    """The missing data files, sorted."""
    rows: int = 0
    """Their row count (the rows the table loses)."""
    snapshot_id: int | None = None
    """The OVERWRITE snapshot committed (None: nothing missing, or a dry run)."""


def missing_data_files(ctx: StoreContext, entries: list[ManifestEntry]) -> list[tuple[str, ManifestEntry]]:
    """The entries whose data file is not on storage, with its path: one listing per bucket directory."""
    refs = FileRefs(ctx)
    by_dir: dict[str, list[tuple[str, ManifestEntry]]] = defaultdict(list)
    out: list[tuple[str, ManifestEntry]] = []
    for e in entries:
        path = refs.entry_path(e)
        if e.file.external_path:
            if not ctx.file_io.exists(path):
                out.append((path, e))
        else:
            by_dir[path.rsplit("/", 1)[0]].append((path, e))
    for directory, items in by_dir.items():
        names = {st.path.rstrip("/").rsplit("/", 1)[-1] for st in ctx.file_io.list_status(directory) if not st.is_dir}
        out.extend((p, e) for p, e in items if e.file.file_name not in names)
    out.sort(key=lambda pe: pe[0])
    return out


def remove_unexisting_files(ctx: StoreContext, commit_user: str, dry_run: bool = True) -> UnexistingResult:
    """Find the latest snapshot's data files missing on storage; unless ``dry_run``, commit their removal from the
    metadata (see the module)."""
    fio, tp = ctx.file_io, ctx.table_path
    for attempt in range(_TRIES):
        with BasePin(fio, tp, ctx.commit_lock, ctx.snapshot_commit) as pin:  # before the base is read (see pins.py)
            latest = pin.latest()
            if latest is None:
                return UnexistingResult()
            missing = missing_data_files(ctx, live_entries(fio, tp, latest))
            result = UnexistingResult(based_on=latest.id, paths=[p for p, _ in missing],
                                      rows=sum(e.file.row_count for _, e in missing))
            if not missing or dry_run:
                return result
            sid = _try(ctx, pin, latest, [e for _, e in missing], commit_user, result.rows)
        if sid is not None:
            result.snapshot_id = sid
            ctx.published(sid)  # under a pin of its own (see StoreContext.published)
            log.info("removed %d missing data files (%d rows) of %s from its metadata in snapshot %d", len(missing),
                     result.rows, tp, sid)
            return result
        log.info("remove-unexisting-files of %s lost snapshot id %d to another commit; retrying (%d)", tp,
                 latest.id + 1, attempt + 1)
    raise CommitConflictError(f"remove-unexisting-files of {tp}: other commits took the next snapshot id {_TRIES} "
                              "times; nothing was committed, run it again")


def _try(ctx: StoreContext, pin: BasePin, latest: Snapshot, missing: list[ManifestEntry], commit_user: str,
         rows: int) -> int | None:
    fio, tp = ctx.file_io, ctx.table_path
    mdir = manifest_dir(tp)
    opts = ctx.options
    part_types = [f.type for f in ctx.schema.partition_fields()]
    deletes = [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file) for e in missing]
    written: list[str] = []
    try:
        delta = write_manifest_files(fio, tp, deletes, ctx.schema.id, part_types, opts.manifest_target_file_size())
        written.extend(m.file_name for m in delta)
        base: list[ManifestFileMeta] = []
        for name in (latest.base_manifest_list, latest.delta_manifest_list):
            base.extend(read_manifest_list(fio, f"{mdir}/{name}"))
        base, merged = merge_manifests(fio, tp, base, ctx.schema.id, part_types, opts.manifest_target_file_size(),
                                       opts.manifest_merge_min_count(), opts.manifest_full_compaction_threshold_size())
        written.extend(merged)
        list_uuid = str(uuid.uuid4())
        base_name, delta_name = new_manifest_list_name(list_uuid, "0"), new_manifest_list_name(list_uuid, "1")
        base_size = write_manifest_list(fio, f"{mdir}/{base_name}", base)
        written.append(base_name)
        delta_size = write_manifest_list(fio, f"{mdir}/{delta_name}", delta)
        written.append(delta_name)
    except BaseException:
        _delete(ctx, written)
        raise
    snapshot = Snapshot(
        id=latest.id + 1, schema_id=ctx.schema.id, base_manifest_list=base_name, delta_manifest_list=delta_name,
        index_manifest=latest.index_manifest, commit_user=commit_user, commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_kind=CommitKind.OVERWRITE, time_millis=clock.now_millis(),
        total_record_count=(latest.total_record_count or 0) - rows, delta_record_count=-rows,
        base_manifest_list_size=base_size, delta_manifest_list_size=delta_size, watermark=latest.watermark,
        next_row_id=latest.next_row_id, properties=scoped_properties(), writer_version=WRITER_VERSION)
    # a failed publish request may still have published: its files are then left for orphan cleaning, never deleted
    if pin.publish(snapshot):
        return snapshot.id
    _delete(ctx, written)
    return None


def _delete(ctx: StoreContext, names: list[str]) -> None:
    for name in names:
        ctx.file_io.try_delete(f"{manifest_dir(ctx.table_path)}/{name}")
