"""Which files a table's metadata keeps alive: the shared ground of every lifecycle operation that deletes files.

Identities: data and changelog files (with their extra files, e.g. file indexes) by full path; metadata files
(manifest lists, manifests, index manifests, index files, statistics) by file name, which is UUID-based and
unique within a table.

Two invariants of Paimon tables (whoever wrote them) make cheap, exact deletion possible:

1. A data file is added once in a table's history (the one exception, an "upgrade", DELETEs and re-ADDs the
   same file at another level *in one commit*). So a data file is live in one contiguous range of snapshot ids
   and never returns once deleted: the files that stop being used when snapshot ``s`` expires are exactly the
   files deleted by the deltas of the snapshots after it.
2. A manifest or index file used by snapshots ``a < c`` is used by every snapshot between them (commits reuse
   the previous snapshot's manifests or replace them, never resurrect one). So among the snapshots/tags kept,
   the ones *next to* a deleted range (its "neighbours") already hold everything the rest of them need.

All readers here cache per instance; create one :class:`FileRefs` per operation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from table_engine.features import Op, require
from table_engine.format.changelog_file import changelog_dir
from table_engine.format.data_file_meta import FileSource
from table_engine.format.feature_detection import data_file_features
from table_engine.format.index_manifest import IndexManifestEntry, read_index_manifest
from table_engine.format.manifest import FileKind, ManifestEntry, merge_entries, read_manifest
from table_engine.format.manifest_list import ManifestFileMeta, read_manifest_list
from table_engine.format.snapshot import Snapshot, names_snapshot, snapshot_dir
from table_engine.format.tag_file import tag_dir
from table_engine.io.executor import parallel_map
from table_engine.io.file_io import FileIO
from table_engine.store.branches import branch_roots
from table_engine.store.context import StoreContext

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

_THREADS = 8


@dataclass
class ReferencedFiles:
    """Files that must not be deleted: data/changelog file paths and metadata file names."""

    data: set[str] = field(default_factory=set)
    meta: set[str] = field(default_factory=set)

    def update(self, other: ReferencedFiles) -> None:
        self.data |= other.data
        self.meta |= other.meta


def is_append_source(entry: ManifestEntry) -> bool:
    """Written by a writer (not by compaction); unknown sources count as APPEND, as in Paimon."""
    src = entry.file.file_source
    return src is None or src == FileSource.APPEND


class FileRefs:
    """Reads the references of snapshots, tags and changelogs of one table (cached), and deletes files."""

    def __init__(self, ctx: StoreContext, threads: int = _THREADS, cache: bool = True) -> None:
        """``cache``: keep what was read for later calls (an operation that reads each file once, such as orphan
        cleaning, passes False: its memory stays bounded by the file being read)."""
        self.ctx = ctx
        self.cache = cache
        self.file_io = ctx.file_io
        self.table_path = ctx.table_path
        self.threads = threads
        self.paths = ctx.path_factory
        self._lists: dict[str, list[ManifestFileMeta]] = {}
        self._manifests: dict[str, list[ManifestEntry]] = {}
        self._indexes: dict[str, list[IndexManifestEntry]] = {}

    # ---- paths (the table's path factory) -------------------------------------------------------------------
    def manifest_path(self, name: str) -> str:
        return self.paths.manifest(name)

    def entry_path(self, e: ManifestEntry) -> str:
        return self.paths.data_file(e.partition, e.bucket, e.file)

    def entry_paths(self, e: ManifestEntry) -> list[str]:
        """The data (or changelog) file and its extra files, which live next to it."""
        return self.paths.data_file_with_extras(e.partition, e.bucket, e.file)

    # ---- cached reads ------------------------------------------------------------------------------------------
    def read_list(self, name: str | None, missing_ok: bool = False) -> list[ManifestFileMeta]:
        if not name:
            return []
        hit = self._lists.get(name)
        if hit is None:
            try:
                hit = read_manifest_list(self.file_io, self.manifest_path(name))
            except FileNotFoundError:
                if not missing_ok:
                    raise
                log.debug("manifest list %s is gone", name)
                return []
            if self.cache:
                self._lists[name] = hit
        return hit

    def read_manifest(self, name: str, missing_ok: bool = False) -> list[ManifestEntry]:
        hit = self._manifests.get(name)
        if hit is None:
            try:
                hit = read_manifest(self.file_io, self.manifest_path(name))
            except FileNotFoundError:
                if not missing_ok:
                    raise
                log.debug("manifest %s is gone", name)
                return []
            # the capability gate on the files a maintenance walk finds (before it deletes anything: the walks
            # collect references first); row ids, column files and unknown kinds are not ours to delete or keep
            require(self.table_path, data_file_features(e.file for e in hit), Op.MAINTAIN)
            if self.cache:
                self._manifests[name] = hit
        return hit

    def read_manifests(self, metas: Sequence[ManifestFileMeta], missing_ok: bool = False) -> list[ManifestEntry]:
        """Entries of ``metas`` in order (manifests read in parallel)."""
        chunks = self.parallel([m.file_name for m in metas], lambda n: self.read_manifest(n, missing_ok))
        return [e for chunk in chunks for e in chunk]

    def read_index(self, name: str | None, missing_ok: bool = False) -> list[IndexManifestEntry]:
        if not name:
            return []
        hit = self._indexes.get(name)
        if hit is None:
            try:
                hit = read_index_manifest(self.file_io, self.manifest_path(name))
            except FileNotFoundError:
                if not missing_ok:
                    raise
                return []
            if self.cache:
                self._indexes[name] = hit
        return hit

    # ---- what one snapshot references --------------------------------------------------------------------------
    @names_snapshot
    def data_manifests(self, snap: Snapshot, missing_ok: bool = False) -> list[ManifestFileMeta]:
        return [*self.read_list(snap.base_manifest_list, missing_ok),
                *self.read_list(snap.delta_manifest_list, missing_ok)]

    @names_snapshot
    def live_entries(self, snap: Snapshot, missing_ok: bool = False) -> list[ManifestEntry]:
        """The data files of ``snap`` (ADD/DELETE log merged)."""
        entries = self.read_manifests(self.data_manifests(snap, missing_ok), missing_ok)
        return [e for e in merge_entries(entries) if e.kind == FileKind.ADD]

    @names_snapshot
    def live_paths(self, snap: Snapshot, missing_ok: bool = False) -> set[str]:
        return {p for e in self.live_entries(snap, missing_ok) for p in self.entry_paths(e)}

    @names_snapshot
    def delta_deleted(self, snap: Snapshot, keep: Callable[[ManifestEntry], bool] | None = None) -> list[str]:
        """Paths the delta of ``snap`` stops using: its DELETEs, minus files it re-ADDs (upgrades), minus ``keep``.

        Tolerant of missing manifests (a killed earlier expiry may have deleted them already).
        """
        entries = self.read_manifests(self.read_list(snap.delta_manifest_list, True), True)
        added = {self.entry_path(e) for e in entries if e.kind == FileKind.ADD}
        added_all = {p for e in entries if e.kind == FileKind.ADD for p in self.entry_paths(e)}
        out: dict[str, None] = {}
        for e in entries:
            if e.kind != FileKind.DELETE:
                continue
            if keep is not None and keep(e):
                continue
            if self.entry_path(e) in added:
                # an upgrade or a file-index rewrite: the data file stays; extra files it no longer lists go
                for p in self.entry_paths(e)[1:]:
                    if p not in added_all:
                        out[p] = None
                continue
            for p in self.entry_paths(e):
                out[p] = None
        return list(out)

    @names_snapshot
    def delta_added(self, snap: Snapshot, missing_ok: bool = True,
                    only: Callable[[ManifestEntry], bool] | None = None) -> set[str]:
        """Paths the delta of ``snap`` ADDs (and does not delete again in the same delta)."""
        entries = self.read_manifests(self.read_list(snap.delta_manifest_list, missing_ok), missing_ok)
        return {p for e in merge_entries(entries) if e.kind == FileKind.ADD and (only is None or only(e))
                for p in self.entry_paths(e)}

    @names_snapshot
    def changelog_paths(self, snap: Snapshot, missing_ok: bool = True) -> list[str]:
        """Changelog files of ``snap`` (ADDs of its changelog manifest list)."""
        if not snap.changelog_manifest_list:
            return []
        entries = self.read_manifests(self.read_list(snap.changelog_manifest_list, missing_ok), missing_ok)
        return [p for e in entries if e.kind == FileKind.ADD for p in self.entry_paths(e)]

    @names_snapshot
    def meta_files(self, snap: Snapshot, *, data_lists: bool = True, changelog_list: bool = True,
                   index: bool = True, missing_ok: bool = True) -> dict[str, str]:
        """Metadata files ``snap`` references, name -> path (manifest lists, manifests, index, statistics)."""
        out: dict[str, str] = {}
        lists = []
        if data_lists:
            lists += [snap.base_manifest_list, snap.delta_manifest_list]
        if changelog_list and snap.changelog_manifest_list:
            lists.append(snap.changelog_manifest_list)
        for name in lists:
            if not name:
                continue
            for m in self.read_list(name, missing_ok):
                out[m.file_name] = self.manifest_path(m.file_name)
            out[name] = self.manifest_path(name)
        if index and snap.index_manifest:
            for ie in self.read_index(snap.index_manifest, missing_ok):
                out[ie.index_file.file_name] = self.paths.index_file(ie.index_file)
            out[snap.index_manifest] = self.manifest_path(snap.index_manifest)
        if snap.statistics:
            out[snap.statistics] = self.paths.statistics(snap.statistics)
        return out

    def skip_names(self, snaps: Iterable[Snapshot], missing_ok: bool = False) -> set[str]:
        """Metadata names used by ``snaps`` (data manifest lists, manifests, index files; not changelog lists)."""
        out: set[str] = set()
        for s in snaps:
            out.update(self.meta_files(s, changelog_list=False, missing_ok=missing_ok))
        return out

    def live_union(self, snaps: Iterable[Snapshot], missing_ok: bool = False) -> set[str]:
        out: set[str] = set()
        for s in snaps:
            out |= self.live_paths(s, missing_ok)
        return out

    # ---- references held outside the main lineage -------------------------------------------------------------
    def branch_pins(self) -> ReferencedFiles:
        """Everything the snapshots, tags and changelogs of every *other* branch may reference (an
        over-approximation): on the main branch every ``branch/branch-<name>/``, on a branch the main branch and the
        other branches.

        Branches share data files and manifests (a branch made from a tag starts with a copy of it; a fast-forward
        copies a branch's snapshots to the main branch), so whatever another line references must survive this
        line's clean-ups (snapshot and tag expiry, rollback).
        """
        pins = ReferencedFiles()
        own = self.table_path.rstrip("/")
        for root in branch_roots(self.file_io, self.table_path).values():
            if root.rstrip("/") == own:
                continue
            for snap in _snapshot_jsons(self.file_io, [snapshot_dir(root), tag_dir(root), changelog_dir(root)]):
                metas = self.meta_files(snap, missing_ok=True)
                pins.meta.update(metas)
                for name in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
                    for e in self.read_manifests(self.read_list(name, True), True):
                        pins.data.update(self.entry_paths(e))
        return pins

    # ---- deleting ----------------------------------------------------------------------------------------------
    def delete(self, paths: Iterable[str]) -> int:
        """Delete files (in parallel, missing ones ignored); returns how many were deleted. In path order, so that
        the requests are the same in every process (a set's order depends on the process's hash seed)."""
        unique = sorted(set(paths))

        def one(p: str) -> bool:
            try:
                return self.file_io.delete(p)
            except OSError as e:
                log.warning("could not delete %s: %s", p, e)
                return False

        return sum(self.parallel(unique, one))

    def delete_empty_dirs(self, data_paths: Iterable[str]) -> int:
        """Try to remove the (now possibly empty) bucket and partition directories of deleted data files (a no-op on
        an object store, where a directory is gone with its last file)."""
        if not self.file_io.has_directories:
            return 0
        dirs = {p.rsplit("/", 1)[0] for p in data_paths}
        removed = 0
        for _ in range(len(self.paths.partition_keys) + 1):
            parents = set()
            for d in sorted(dirs):
                if d.rstrip("/") == self.table_path.rstrip("/") or not self.file_io.exists(d):
                    continue
                if self.file_io.list_status(d):
                    continue
                try:
                    self.file_io.delete(d)
                    removed += 1
                    parents.add(d.rsplit("/", 1)[0])
                except OSError:
                    pass
            dirs = parents
        return removed

    def parallel(self, items: Sequence[T], fn: Callable[[T], R]) -> list[R]:
        if len(items) <= 2 or self.threads <= 1:
            return [fn(x) for x in items]
        return parallel_map(fn, items, self.threads)


def _snapshot_jsons(file_io: FileIO, dirs: Sequence[str]) -> list[Snapshot]:
    out = []
    for d in dirs:
        for st in file_io.list_status(d):
            base = st.path.rstrip("/").rsplit("/", 1)[-1]
            if st.is_dir or not base.startswith(("snapshot-", "tag-", "changelog-")):
                continue
            try:
                out.append(Snapshot.from_json(file_io.read_bytes(st.path), st.path))
            except FileNotFoundError:
                continue
    return out
