"""The exactly-once check of a committer: which snapshot holds (``commitUser``, ``commitIdentifier``), reading only
snapshots that can hold it, so that a commit costs the same however long the table's history (issue 14)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from table_engine.core_options import CommitUser
from table_engine.errors import CommitError, SnapshotNotExistError
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind, Snapshot, read_snapshot
from table_engine.store.context import StoreContext

log = logging.getLogger(__name__)

EXPIRED = 0
"""What :meth:`UserCommits.find` returns for a commit that happened in a snapshot that has expired since (no
snapshot has id 0)."""


class UserCommits:
    """The snapshots of one commit user known to one committer.

    A :attr:`generated <table_engine.core_options.CommitUser.generated>` user was made up for this committer (a
    fresh UUID), so no snapshot of it can exist but the ones this committer published (:meth:`published`):
    :meth:`find` reads nothing."""

    def __init__(self, ctx: StoreContext, user: CommitUser) -> None:
        self.ctx = ctx
        self.commit_user = user.name
        self.generated = user.generated
        self._mine: dict[int, tuple[int, CommitKind]] = {}
        """snapshot id -> (identifier, kind) of this user's snapshots known here: the ones this committer
        published, and those found in :attr:`_checked`."""
        self._checked: tuple[int, int] | None = None
        """(lowest, highest) id of the contiguous range of snapshots examined for the user: a later check reads
        only snapshots above it (a user that is not :attr:`generated`)."""
        self._top: str | None = None
        """Base manifest list of snapshot ``_checked[1]`` when it was examined (to notice a rollback)."""

    def published(self, snapshot_id: int, identifier: int, kind: CommitKind) -> None:
        """This committer published ``snapshot_id``."""
        self._mine[snapshot_id] = (identifier, kind)

    def find(self, identifier: int, kind: CommitKind | None = None) -> int | None:
        """Snapshot id holding (commit_user, identifier[, kind]), or None if that commit has not happened
        (:data:`EXPIRED`: it happened in a snapshot that expired since).

        Reads only snapshots that can hold it, so a commit costs the same however long the table's history (as
        Paimon, which scans back only for a user that may have committed before): a :attr:`generated` reads none
        (only this committer's publications can be its user's); another user is looked up once from the latest
        snapshot back to the newest snapshot of the user (or the earliest snapshot), and every later check of the
        same committer (the retry after a lost race, its next commit) reads only the snapshots published since.
        An identifier older than the user's newest one (a restarted job re-sending what it committed) is looked up
        further back, down to it; one that was never committed although a newer one was is a :class:`CommitError`
        (identifiers of a user only grow), one whose snapshot may have expired counts as committed (:data:`EXPIRED`,
        logged, as Paimon's ``filterCommitted``)."""
        if self.generated:
            for sid in sorted(self._mine, reverse=True):
                ident, k = self._mine[sid]
                if ident == identifier:
                    return sid if kind is None or k == kind else None
            return None
        self._check_new_snapshots()
        if not self._mine:
            return None
        newest = max(self._mine)
        newest_ident, newest_kind = self._mine[newest]
        if newest_ident == identifier:
            return newest if kind is None or newest_kind == kind else None
        if identifier == BATCH_COMMIT_IDENTIFIER or newest_ident < identifier:
            return None
        return self._older_commit(identifier, kind, newest)

    def _check_new_snapshots(self) -> None:
        """Examine the snapshots above :attr:`_checked` (first call: from the latest back to the user's newest)."""
        latest = self.ctx.latest_snapshot()
        if latest is None:
            return
        if self._checked is not None and (not self._top_unchanged(latest) or max(self._mine, default=0) > latest.id):
            self._checked = None  # rolled back under us: what was checked may be gone or replaced
            self._mine.clear()
        self._top = latest.base_manifest_list
        if self._checked is None:
            low = self._walk_back(latest.id, latest, lambda snap: True)
            self._checked = (low, latest.id)
            return
        low, high = self._checked
        if latest.id > high:
            stop = self._walk_back(latest.id, latest, lambda snap: False, floor=high + 1)
            # a snapshot expired above ``high`` (a long idle committer): only what is newer was examined
            self._checked = (low, latest.id) if stop == high + 1 else (stop, latest.id)

    def _top_unchanged(self, latest: Snapshot) -> bool:
        """Whether the newest snapshot examined so far is still the one that was examined (a rollback deletes or
        replaces it; its manifest list names are unique). A missing one may also have expired: examining again is
        safe either way. (Snapshots published here are checked by the caller: above the latest id they were rolled
        back; below it the walk reads them again.)"""
        assert self._checked is not None
        high = self._checked[1]
        if latest.id <= high:
            return latest.id == high and latest.base_manifest_list == self._top
        try:
            return read_snapshot(self.ctx.file_io, self.ctx.table_path, high).base_manifest_list == self._top
        except SnapshotNotExistError:
            return False

    def _walk_back(self, start: int, first: Snapshot | None, stop_at_mine: Callable[[Snapshot], bool],
                   floor: int = 1) -> int:
        """Read snapshots ``start``, ``start - 1``... down to ``floor``, recording this user's; stops after a
        snapshot of the user for which ``stop_at_mine`` is true, or below a missing (expired) one. Returns the
        lowest id examined (``start + 1`` when none was)."""
        low = start + 1
        for sid in range(start, floor - 1, -1):
            try:
                snap = first if first is not None and first.id == sid else read_snapshot(
                    self.ctx.file_io, self.ctx.table_path, sid)
            except SnapshotNotExistError:
                break  # expired: nothing older to find
            low = sid
            if snap.commit_user == self.commit_user:
                self._mine[sid] = (snap.commit_identifier, snap.commit_kind)
                if stop_at_mine(snap):
                    break
            else:
                self._mine.pop(sid, None)  # published here, then rolled back and taken by another committer
        return low

    def _older_commit(self, identifier: int, kind: CommitKind | None, newest: int) -> int | None:
        """The snapshot of an identifier older than the user's newest (see :meth:`find`)."""
        def found() -> int | None:
            hits = [sid for sid, (ident, k) in self._mine.items()
                    if ident == identifier and (kind is None or k == kind)]
            return max(hits) if hits else None

        def below() -> int | None:
            older = [sid for sid, (ident, _) in self._mine.items() if ident < identifier]
            return max(older) if older else None

        if found() is None and below() is None and self._checked is not None:
            low, high = self._checked
            if low > 1:
                low = self._walk_back(low - 1, None, lambda snap: snap.commit_identifier <= identifier)
                self._checked = (min(low, self._checked[0]), high)
        hit = found()
        if hit is not None:
            return hit
        older = below()
        if older is not None or (self._checked is not None and self._checked[0] == 1):
            # proven never committed: a snapshot of an older identifier, or the whole history (from snapshot 1)
            raise CommitError(f"commit identifier {identifier} of {self.commit_user} is older than "
                              f"{self._mine[newest][0]} already committed in snapshot {newest}")
        log.info("commit %s/%s is older than %s committed in snapshot %d and its snapshot expired: skipped",
                 self.commit_user, identifier, self._mine[newest][0], newest)
        return EXPIRED

