"""Branches: lines of snapshots, schemas and tags of their own under ``<table>/branch/branch-<name>/``, sharing the
table's data files, manifests and index files (Paimon's ``BranchManager``, byte for byte).

* Where a branch lives is decided by :func:`table_engine.io.paths.branch_path`; a branch's :class:`StoreContext`
  has that root as its ``table_path``, so every snapshot, schema, tag, consumer and changelog reader and writer
  works on the branch unchanged, while data files, ``manifest/``, ``index/`` and ``statistics/`` resolve to the
  table directory (:func:`table_engine.io.paths.table_root`).
* ``create``: an empty branch holds copies of the schemas up to the latest; a branch from a tag holds copies of the
  tag, its snapshot and the schemas up to the snapshot's. The files are written create-if-absent, the schema files
  last: a branch exists once it has a schema, so an interrupted create is not a branch and a retry completes it.
* ``delete``: the branch directory is removed; data files only it referenced are left for orphan cleaning, as in
  Paimon (every clean-up on one line keeps what any other line references:
  :meth:`~table_engine.store.lifecycle.file_refs.FileRefs.branch_pins`).
* ``fast_forward``: the target line's snapshots, schemas and tags from the branch's earliest snapshot (and its
  schema) on are deleted, then the branch's snapshot, schema and tag files are copied over; the ``LATEST`` hint is
  rewritten. Like Paimon's, it is not atomic: a writer committing to the target meanwhile may lose its commit.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from table_engine import clock
from table_engine.errors import BranchAlreadyExistError, BranchError, BranchNotExistError, TagNotExistError
from table_engine.format.schema_file import list_schema_ids, schema_dir, schema_path
from table_engine.format.snapshot import (
    earliest_snapshot_id,
    latest_snapshot_id,
    list_snapshot_ids,
    read_snapshot,
    snapshot_dir,
    snapshot_path,
)
from table_engine.format.tag_file import list_tag_names, read_tag, tag_dir, tag_path
from table_engine.io.file_io import FileIO
from table_engine.io.paths import BRANCH_PREFIX, MAIN_BRANCH, branch_of, branch_path, table_root
from table_engine.store.pins import HistoryFence

if TYPE_CHECKING:
    from table_engine.store.context import StoreContext

__all__ = ["BranchInfo", "BranchManager", "branch_roots", "check_branch_name"]

log = logging.getLogger(__name__)


def check_branch_name(name: str) -> None:
    """Paimon's ``BranchManager.validateBranch`` rules (but existence): not ``main``, not blank, not only digits;
    and one directory name (no path separator, no ``$``)."""
    if not isinstance(name, str) or not name.strip():
        raise BranchError(f"Branch name '{name}' is blank.")
    if name == MAIN_BRANCH:
        raise BranchError(f"Branch name '{MAIN_BRANCH}' is the default branch and cannot be used.")
    if name.isdigit():
        raise BranchError(f"Branch name cannot be pure numeric string but is '{name}'.")
    if any(c in name for c in "/\\$") or any(ord(c) < 32 for c in name):
        raise BranchError(f"Branch name {name!r} must be one directory name (no '/', '\\\\', '$' or control "
                          "characters)")


def branch_roots(file_io: FileIO, table_path: str) -> dict[str, str]:
    """Every line of the table, ``main`` first: name -> metadata root (``table_path`` may be any branch's root).
    A listed directory without a schema (an interrupted create) counts too: what it references is kept."""
    root = table_root(table_path)
    out = {MAIN_BRANCH: root}
    for st in file_io.list_status(f"{root}/branch"):
        base = st.path.rstrip("/").rsplit("/", 1)[-1]
        if st.is_dir and base.startswith(BRANCH_PREFIX) and len(base) > len(BRANCH_PREFIX):
            out[base[len(BRANCH_PREFIX):]] = f"{root}/branch/{base}"
    return out


@dataclass(frozen=True)
class BranchInfo:
    """A row of ``$branches``: the branch's name and creation time (local wall clock, naive, milliseconds: when its
    first schema file was written)."""

    branch_name: str
    create_time: datetime.datetime


class BranchManager:
    """The branches of one table, seen from the line whose metadata root is ``path`` (the table directory for the
    main branch): tags are resolved and schemas copied from that line, and :meth:`fast_forward` moves that line."""

    def __init__(self, file_io: FileIO, path: str) -> None:
        self.file_io = file_io
        self.path = path.rstrip("/")
        self.table_path = table_root(self.path)
        self.current = branch_of(self.path)
        self.ctx: StoreContext | None = None
        """The line's context when made by :meth:`of`: its callbacks hear of a fast-forward."""

    @classmethod
    def of(cls, ctx: StoreContext) -> BranchManager:
        """The branches of the table of ``ctx``, seen from its line."""
        manager = cls(ctx.file_io, ctx.table_path)
        manager.ctx = ctx
        return manager

    def branch_path(self, name: str) -> str:
        return branch_path(self.table_path, name)

    # ---- reading -----------------------------------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        """Whether ``name`` is a branch (``main`` always is): its directory holds a schema."""
        if name == MAIN_BRANCH:
            return True
        return bool(list_schema_ids(self.file_io, self.branch_path(name)))

    def names(self) -> list[str]:
        """The branches (not ``main``), by name."""
        return sorted(n for n in branch_roots(self.file_io, self.table_path) if n != MAIN_BRANCH and self.exists(n))

    def infos(self) -> list[BranchInfo]:
        """Name and creation time of every branch (not ``main``), by name."""
        out = []
        for name in self.names():
            times = [st.mtime_millis for st in self.file_io.list_status(schema_dir(self.branch_path(name)))
                     if not st.is_dir]
            out.append(BranchInfo(name, clock.local_datetime(min(times, default=0))))
        return out

    def _require(self, name: str) -> str:
        if not self.exists(name):
            raise BranchNotExistError(f"Branch name '{name}' doesn't exist (table {self.table_path}).")
        return self.branch_path(name)

    # ---- creating and deleting ---------------------------------------------------------------------------------
    def create(self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False) -> None:
        """Create branch ``name``: empty (the current line's schemas up to the latest) or from ``tag`` of the current
        line (the tag, its snapshot, the schemas up to the snapshot's). :class:`BranchAlreadyExistError` if it
        exists (unless ``ignore_if_exists``)."""
        check_branch_name(name)
        if self.exists(name):
            if ignore_if_exists:
                return
            raise BranchAlreadyExistError(f"Branch name '{name}' already exists.")
        target = self.branch_path(name)
        if tag is None:
            ids = list_schema_ids(self.file_io, self.path)
            if not ids:
                raise BranchError(f"cannot create branch {name!r}: {self.path} has no schema")
            last = ids[-1]
        else:
            found = read_tag(self.file_io, self.path, tag)
            if found is None:
                raise TagNotExistError(f"cannot create branch {name!r}: tag {tag!r} does not exist in {self.path}")
            self._copy(tag_path(self.path, tag), tag_path(target, tag))
            snap = found.snapshot
            try:
                self._copy(snapshot_path(self.path, snap.id), snapshot_path(target, snap.id))
            except FileNotFoundError:  # expired (even just now) while the tag kept it: the tag's snapshot is it
                self.file_io.write_if_absent(snapshot_path(target, snap.id), snap.to_json().encode("utf-8"))
            last = snap.schema_id
        for sid in list_schema_ids(self.file_io, self.path):  # last: a branch exists once it has a schema
            if sid <= last:
                self._copy(schema_path(self.path, sid), schema_path(target, sid))
        log.info("created branch %s of %s%s", name, self.path, f" from tag {tag}" if tag else "")

    def delete(self, name: str, *, ignore_if_missing: bool = False) -> bool:
        """Delete branch ``name``'s directory (its data files stay for orphan cleaning, as in Paimon); False when it
        did not exist and ``ignore_if_missing``."""
        check_branch_name(name)
        if not self.exists(name):
            if ignore_if_missing:
                return False
            self._require(name)
        self.file_io.delete(self.branch_path(name), recursive=True)
        log.info("deleted branch %s of %s", name, self.table_path)
        return True

    def rename(self, name: str, new_name: str) -> None:
        """Rename branch ``name`` to ``new_name`` (Paimon 1.1+'s ``renameBranch``): its files copied (schemas
        last, as in :meth:`create`), then the old directory deleted."""
        check_branch_name(new_name)
        src = self._require(name)
        if self.exists(new_name):
            raise BranchAlreadyExistError(f"Branch name '{new_name}' already exists.")
        dst = self.branch_path(new_name)
        files = sorted((st.path for st in self.file_io.walk(src) if not st.is_dir),
                       key=lambda p: p[len(src):].startswith("/schema/"))
        for p in files:
            self._copy(p, dst + p[len(src):])
        self.file_io.delete(src, recursive=True)

    # ---- fast-forward ------------------------------------------------------------------------------------------
    def fast_forward(self, name: str) -> int:
        """Make the current line (main, usually) the branch ``name``: the current line's snapshots and tags from the
        branch's earliest snapshot on, and its schemas from that snapshot's schema on, are deleted, then the
        branch's snapshot, schema and tag files copied over (Paimon's ``fastForward``). Returns the branch's latest
        snapshot id, the current line's latest afterwards."""
        check_branch_name(name)
        if name == self.current:
            raise BranchError(f"Branch name '{name}' do not use in fast-forward.")
        src = self._require(name)
        earliest = earliest_snapshot_id(self.file_io, src)
        latest = latest_snapshot_id(self.file_io, src)
        if earliest is None or latest is None:
            raise BranchError(f"Cannot fast forward branch {name}, because it does not have snapshot.")
        first_schema = read_snapshot(self.file_io, src, earliest).schema_id
        with HistoryFence(self.file_io, self.path, "fast-forward"):  # no commit publishes while history is rewritten
            if self.ctx is not None and self.ctx.history_rewriting is not None:
                self.ctx.history_rewriting(latest)
            self._replace_history(src, earliest, first_schema, latest)
            if self.ctx is not None:  # inside the fence, as a rollback's (see store/lifecycle/rollback.py)
                self.ctx.published_in_fence(latest)
        log.info("fast-forwarded %s of %s to branch %s (snapshot %d)", self.current, self.table_path, name, latest)
        return latest

    def _replace_history(self, src: str, earliest: int, first_schema: int, latest: int) -> None:
        fio, me = self.file_io, self.path
        doomed = [snapshot_path(me, i) for i in list_snapshot_ids(fio, me) if i >= earliest]
        doomed += [schema_path(me, i) for i in list_schema_ids(fio, me) if i >= first_schema]
        for tname, _ in list_tag_names(fio, me):
            t = read_tag(fio, me, tname)
            if t is not None and t.snapshot_id >= earliest:
                doomed.append(tag_path(me, tname))
        fio.try_delete(f"{snapshot_dir(me)}/LATEST")
        for p in doomed:
            fio.try_delete(p)
        for d_src, d_dst in ((snapshot_dir(src), snapshot_dir(me)), (schema_dir(src), schema_dir(me)),
                             (tag_dir(src), tag_dir(me))):
            for st in fio.list_status(d_src):
                base = st.path.rstrip("/").rsplit("/", 1)[-1]
                if not st.is_dir and base not in ("LATEST", "EARLIEST"):
                    fio.write_bytes(f"{d_dst}/{base}", fio.read_bytes(st.path), overwrite=True)
        fio.overwrite_hint(f"{snapshot_dir(me)}/LATEST", str(latest).encode("ascii"))
        first = min(list_snapshot_ids(fio, me), default=earliest)
        fio.overwrite_hint(f"{snapshot_dir(me)}/EARLIEST", str(first).encode("ascii"))

    def is_fast_forwarded(self, name: str) -> bool:
        """Whether a fast-forward to ``name`` is done: the current line's latest snapshot is the branch's latest one,
        and the branch's tag and schema files are the current line's too."""
        src = self._require(name)
        fio = self.file_io
        latest = latest_snapshot_id(fio, src)
        if latest is None or latest_snapshot_id(fio, self.path) != latest:
            return False
        pairs = [(snapshot_path(src, latest), snapshot_path(self.path, latest))]
        pairs += [(tag_path(src, t), tag_path(self.path, t)) for t, _ in list_tag_names(fio, src)]
        pairs += [(schema_path(src, i), schema_path(self.path, i)) for i in list_schema_ids(fio, src)]
        try:
            return all(fio.read_bytes(a) == fio.read_bytes(b) for a, b in pairs)
        except FileNotFoundError:
            return False

    def discarded_by_fast_forward(self, name: str) -> list[int]:
        """Snapshot ids of the current line a fast-forward to ``name`` would discard: those from the branch's
        earliest snapshot on that are not the branch's own (the current line moved on since the branch was made)."""
        src = self._require(name)
        earliest = earliest_snapshot_id(self.file_io, src)
        if earliest is None:
            return []
        out = []
        for sid in list_snapshot_ids(self.file_io, self.path):
            if sid < earliest:
                continue
            try:
                same = self.file_io.read_bytes(snapshot_path(src, sid)) == \
                    self.file_io.read_bytes(snapshot_path(self.path, sid))
            except FileNotFoundError:
                same = False
            if not same:
                out.append(sid)
        return out

    def made_from(self, name: str, tag: str | None) -> bool:
        """Whether branch ``name`` is what :meth:`create` makes from ``tag`` of the current line (a retry's check):
        from a tag, its copy of the tag is at the tag's snapshot; empty, it holds no tag of the current line at the
        snapshot it starts with."""
        root = self._require(name)
        earliest = earliest_snapshot_id(self.file_io, root)
        if tag is None:
            return earliest is None or not any(
                t.snapshot_id == earliest for n, _ in list_tag_names(self.file_io, root)
                if (t := read_tag(self.file_io, root, n)) is not None)
        mine, theirs = read_tag(self.file_io, root, tag), read_tag(self.file_io, self.path, tag)
        return mine is not None and theirs is not None and mine.snapshot_id == theirs.snapshot_id

    def _copy(self, src: str, dst: str) -> None:
        """Copy one metadata file, create-if-absent (a retry finds its own copy)."""
        self.file_io.write_if_absent(dst, self.file_io.read_bytes(src))
