"""Commit pins: a committer holds back expiry at the snapshot it builds on, so that a snapshot id is never reused.

The committer publishes ``snapshot-(base+1)`` with an atomic create-if-absent, which proves only that the file is
absent *now*. Without a pin, a slow attempt is open to ABA: while it builds on ``base``, other committers publish
``base+1`` and ``base+2`` and an expiry deletes ``base`` and ``base+1``; the create then succeeds, and the acknowledged
commit lives in a stray snapshot outside the table's lineage (docs/adr/0039-commit-pins.md).

A pin closes it. Each attempt, *before* it reads the latest snapshot:

1. reads the ``LATEST`` hint ``h`` (an id that was published, so ``h <=`` every later latest) and writes a pin
   ``consumer/consumer-__commit-pin-<uuid>`` with ``nextSnapshot = h`` (:mod:`~table_engine.format.consumer_file`);
2. reads the latest snapshot ``b`` (lowering the pin to ``b`` first if the hint was ahead, e.g. after a rollback);
3. publishes ``b+1``, then deletes the pin.

Expiry reads the latest snapshot ``L`` *before* it reads the consumers (as Paimon Java's does). A run that read the
consumers after step 1 keeps everything ``>= h``; a run that read them before step 1 read ``L`` before step 2, so
``L <= b`` and it deletes only ids ``< L``. Either way no snapshot ``>= b`` is deleted while the pin stands, so a
successful create of ``b+1`` means ``b+1`` never existed: the new snapshot is a successor of its base. The same
argument makes the latest-snapshot probe exact for the attempt: ids at or above the latest it starts from are
never deleted under it.

A committer that dies leaves its pin behind; it stops counting after
:data:`~table_engine.format.consumer_file.COMMIT_PIN_LIFETIME_MS` (by the file's modification time) and the
next expiry deletes it. So that a live committer is never that old, an attempt that took half the lifetime does
not publish: it starts over with a new pin (:meth:`BasePin.may_publish`).

Rollback and fast-forward rewrite history from the top: they delete the newest snapshots, which a pin does not
protect (expiry never deletes the latest; they do). They hold the :class:`HistoryFence` instead,
``consumer/consumer-__commit-fence``, created if absent (one rewrite at a time), and then wait until every live pin
is released. A committer checks the fence right after its pin is written, before it reads its base, and while it
stands releases the pin and waits for the fence to go. A rewrite that listed the pins before the pin was written
held the fence already, and holds it until it is done: the committer sees it, or the rewrite had finished and the
base is read from the rewritten history. A rewrite that lists the pins later waits for the pin. Either way no
snapshot is published on a base that a rewrite removed. Expiry runs take part the same way
(:class:`ExpiryMarker`): a run writes its marker, then skips its work if the fence stands, and a rewrite waits
for the markers too; so an expiry never deletes the snapshot a rollback is about to make the latest.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import TracebackType

from table_engine import clock
from table_engine.errors import CommitConflictError, HistoryRewrittenError
from table_engine.format.consumer_file import (
    COMMIT_PIN_LIFETIME_MS,
    COMMIT_PIN_PREFIX,
    CONSUMER_PREFIX,
    EXPIRY_MARKER_PREFIX,
    HISTORY_FENCE_ID,
    NO_SNAPSHOT_HELD,
    Consumer,
    consumer_dir,
    consumer_path,
)
from table_engine.format.snapshot import Snapshot, find_latest_snapshot, latest_hint, try_publish_snapshot
from table_engine.io.file_io import FileIO

__all__ = ["PUBLISH_BUDGET_S", "BasePin", "CommitLock", "ExpiryMarker", "HistoryFence", "PartitionDelta",
           "SnapshotCommit"]

log = logging.getLogger(__name__)


PUBLISH_BUDGET_S = COMMIT_PIN_LIFETIME_MS / 1000 / 2
"""An attempt older than this (since its pin was written) does not publish: it starts over with a fresh pin."""
EXPIRY_WAIT_BUDGET_S = 30.0
"""How long a :class:`SnapshotHold` waits for the expiry runs already under way (a marker left by a run that died
would otherwise hold every tag creation for the markers' lifetime); past it the tag is verified after it is written
instead (:attr:`SnapshotHold.expiries_done`). Counted in the waits asked for (as the history fence counts its
waits), so that a simulated run, whose sleeps take no time, gives up after as many tries as a real one."""

CommitLock = Callable[[], AbstractContextManager[None]]
"""A catalog's lock on one table (``lock.enabled``, ADR 0044): :meth:`BasePin.publish` holds it around the conditional
create of ``snapshot-<id>``, as Paimon Java's ``RenamingSnapshotCommit`` holds its ``CatalogLock``."""


@dataclass(frozen=True)
class PartitionDelta:
    """What one commit changes in one partition (Paimon's ``PartitionEntry`` of the commit's delta entries: an ADD
    counts its file's rows, size and 1 file, a DELETE the negatives; the newest file creation time among them), as
    a catalog that commits snapshots itself is told (the REST API's ``PartitionStatistics``). ``spec`` is the
    partition's ``{key: value}`` strings (``{}`` for an unpartitioned table)."""

    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    total_buckets: int


SnapshotCommit = Callable[[Snapshot, "Snapshot | None", Sequence[PartitionDelta]], bool]
"""A catalog that commits snapshots itself (Paimon's ``CatalogSnapshotCommit``; a REST catalog's commit endpoint):
called with the new snapshot, the base it was built on (None for the first) and what it changes per partition
(:class:`PartitionDelta`, empty for a commit that carries no file list, e.g. a manifest compaction); True if it is
now the table's latest, False if another commit took its place (a lost race: the committer retries as after a
taken id). Without one a snapshot is published by the conditional create of ``snapshot-<id>`` (Paimon's
``RenamingSnapshotCommit``)."""


class BasePin:
    """One commit attempt's hold on its base snapshot; a context manager that releases it (see the module)."""

    def __init__(self, file_io: FileIO, table_path: str, commit_lock: CommitLock | None = None,
                 snapshot_commit: SnapshotCommit | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self._commit_lock = commit_lock
        self._snapshot_commit = snapshot_commit
        self.base: Snapshot | None = None
        """The snapshot :meth:`latest` last found: the base of the snapshot this attempt publishes."""
        self.pin_id = f"{COMMIT_PIN_PREFIX}{uuid.uuid4().hex}"
        self._file = _ReservedFile(file_io, self.table_path, self.pin_id)
        fence = consumer_path(self.table_path, HISTORY_FENCE_ID)
        while True:
            self._hint = latest_hint(file_io, self.table_path)
            self._written_at = time.monotonic()
            self._write(max(self._hint or 1, 1))
            # after the pin, before the base is read: a rewrite that listed the pins before this one was written
            # holds the fence until it is done, so this sees it and waits; one that lists them later waits for it
            if not self.file_io.is_file(fence):
                break
            self.release()
            log.info("a rollback or fast-forward is rewriting the history of %s: the commit waits for it",
                     self.table_path)
            wait_for_fence(self.file_io, self.table_path)

    def __enter__(self) -> BasePin:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.release()

    def latest(self) -> Snapshot | None:
        """The newest snapshot, at or above the pin (the pin is lowered to it first if the hint was ahead)."""
        hint, self._hint = self._hint, None  # the hint read before the pin: read again only on a second probe
        while True:
            snap = find_latest_snapshot(self.file_io, self.table_path, hint)
            hint = None
            if snap is None or snap.id >= self.floor:
                self.base = snap
                return snap
            log.info("LATEST hint of %s was ahead of snapshot %d: pinning that", self.table_path, snap.id)
            self._write(snap.id)

    def may_publish(self) -> bool:
        """False once the attempt is older than :data:`PUBLISH_BUDGET_S` (expiry may soon stop honouring the pin):
        then it starts over."""
        elapsed = time.monotonic() - self._written_at
        if elapsed <= PUBLISH_BUDGET_S:
            return True
        log.warning("commit attempt on %s took %.0f s, longer than its pin's budget (%.0f s): starting over",
                    self.table_path, elapsed, PUBLISH_BUDGET_S)
        return False

    def publish(self, snapshot: Snapshot, statistics: Sequence[PartitionDelta] = ()) -> bool:
        """:func:`try_publish_snapshot` (or the catalog's :data:`SnapshotCommit` when it has one, told
        ``statistics``) unless the attempt is past its budget (then False: retry, as a lost race); inside the
        catalog's lock when there is one (:data:`CommitLock`; the budget is checked again once it is held, as taking
        it may have taken long)."""
        if not self.may_publish():
            return False
        if self._commit_lock is None:
            return self._create(snapshot, statistics)
        with self._commit_lock():
            return self.may_publish() and self._create(snapshot, statistics)

    @property
    def commits_through_catalog(self) -> bool:
        """Whether a catalog commits the snapshot (then the committer computes its :class:`PartitionDelta` list)."""
        return self._snapshot_commit is not None

    def _create(self, snapshot: Snapshot, statistics: Sequence[PartitionDelta]) -> bool:
        if self._snapshot_commit is not None:
            return self._snapshot_commit(snapshot, self.base, statistics)
        return try_publish_snapshot(self.file_io, self.table_path, snapshot)

    def release(self) -> None:
        """Delete the pin (best effort: a pin left behind stops counting after its lifetime)."""
        self._file.delete()

    def _write(self, next_snapshot: int) -> None:
        self.floor = next_snapshot
        data = Consumer(self.pin_id, next_snapshot).to_json().encode("utf-8")
        try:
            self._file.write(data)
        except BaseException:
            self.release()  # the write may have happened although it failed (a lost response)
            raise


class SnapshotHold:
    """A tag in the making's hold on the snapshot it tags (a context manager that releases it): a pin
    ``consumer-__commit-pin-<uuid>`` at that snapshot, then a wait for the expiry runs already under way.

    A tag must never be visible while its snapshot's files are being deleted (a reader of the tag, or an orphan
    cleaning that reads it, would meet missing files: simulation ``append-race`` seed 22798). Expiry writes its
    :class:`ExpiryMarker` before it reads the consumers: a run whose marker was not there when this hold listed the
    markers (after its pin was written) reads the pin and keeps the snapshot; a run whose marker was there may have
    read the consumers before the pin, so the hold waits until that run is done (at most :data:`EXPIRY_WAIT_BUDGET_S`:
    :attr:`expiries_done` says whether it did). After that the snapshot, if its file is still there, stays until the
    hold is released, and the tag can be written. A rollback or fast-forward
    (the history fence) is handled as a commit handles it: one that listed the pins before this one holds the
    fence, and then the hold is given up (:class:`~table_engine.errors.HistoryRewrittenError`: tag again once it
    is done); one that lists them later waits for this pin."""

    def __init__(self, file_io: FileIO, table_path: str, snapshot_id: int) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        pin_id = f"{COMMIT_PIN_PREFIX}{uuid.uuid4().hex}"
        self._file = _ReservedFile(file_io, self.table_path, pin_id)
        try:
            self._file.write(Consumer(pin_id, max(snapshot_id, 1)).to_json().encode("utf-8"))
            if fence_stands(file_io, self.table_path):
                self._file.delete()
                wait_for_fence(file_io, self.table_path)
                raise HistoryRewrittenError(f"a rollback or fast-forward of {self.table_path} ran while snapshot "
                                            f"{snapshot_id} was being tagged; the tag was not created")
            self.expiries_done = self._wait_for_expiries()
        except BaseException:
            self._file.delete()  # the write may have happened although it failed (a lost response)
            raise

    def __enter__(self) -> SnapshotHold:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._file.delete()

    def _wait_for_expiries(self) -> bool:
        """Until the expiry runs whose markers are there now have ended (a marker older than the pins' lifetime no
        longer counts); False when some still run after :data:`EXPIRY_WAIT_BUDGET_S`."""
        def running(among: set[str] | None) -> set[str]:
            now = clock.now_millis()
            return {p for p, mtime in _pins(self.file_io, self.table_path)
                    if p.startswith(EXPIRY_MARKER_PREFIX) and mtime >= now - COMMIT_PIN_LIFETIME_MS
                    and (among is None or p in among)}

        earlier, wait, waited = running(None), 0.005, 0.0
        while earlier:
            if waited >= EXPIRY_WAIT_BUDGET_S:
                log.warning("tagging a snapshot of %s: %d expiry run(s) still under way after %.0f s (one that died "
                            "leaves its marker for %d min); the tag is checked after it is written", self.table_path,
                            len(earlier), EXPIRY_WAIT_BUDGET_S, COMMIT_PIN_LIFETIME_MS // 60_000)
                return False
            time.sleep(wait)
            waited += wait
            wait = min(wait * 2, 0.5)
            earlier = running(earlier)
        return True


class ExpiryMarker:
    """Held by an expiry run (a context manager): ``consumer-__commit-expire-<uuid>``, which a rollback or
    fast-forward waits for; :attr:`fenced` when one is rewriting the history (the run must then do nothing)."""

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self._file = _ReservedFile(file_io, self.table_path, f"{EXPIRY_MARKER_PREFIX}{uuid.uuid4().hex}")
        data = Consumer(EXPIRY_MARKER_PREFIX, NO_SNAPSHOT_HELD).to_json().encode("utf-8")
        try:
            self._file.write(data)
        except BaseException:
            self._file.delete()  # it may have been written although the request failed
            raise
        self.fenced = self.file_io.is_file(consumer_path(self.table_path, HISTORY_FENCE_ID))
        if self.fenced:
            log.info("expiry of %s skipped: a rollback or fast-forward is rewriting its history", self.table_path)

    def __enter__(self) -> ExpiryMarker:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        # a marker left behind holds tag creations (up to their budget) and rollbacks: tried more than once
        for _ in range(3):
            self._file.delete()
            try:
                if not self.file_io.is_file(self._file.path):
                    return
            except OSError:
                pass


class HistoryFence:
    """Held by a rollback or fast-forward while it rewrites the table's history (see the module): a context
    manager that creates the fence (CommitConflictError if another rewrite holds it), waits until the commits in
    flight have released their pins, and removes the fence on exit."""

    def __init__(self, file_io: FileIO, table_path: str, what: str) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self.what = what
        self._file = _ReservedFile(file_io, self.table_path, HISTORY_FENCE_ID)

    def __enter__(self) -> HistoryFence:
        data = Consumer(HISTORY_FENCE_ID, 1).to_json().encode("utf-8")  # holds every snapshot back from expiry too
        if not self._file.write_if_absent(data):
            if not _stale(self.file_io, self.table_path, HISTORY_FENCE_ID, clock.now_millis()):
                raise CommitConflictError(f"{self.what} of {self.table_path}: another rollback or fast-forward is "
                                          "rewriting its history; run it again when it is done")
            log.warning("removing the history fence of %s left by a rollback that stopped", self.table_path)
            self.file_io.try_delete(self._file.path)
            if not self._file.write_if_absent(data):
                raise CommitConflictError(f"{self.what} of {self.table_path}: another rollback or fast-forward "
                                          "started at the same time; run it again when it is done")
        try:
            self._wait_for_pins()
        except BaseException:
            self._file.delete()
            raise
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._file.delete()

    def _wait_for_pins(self) -> None:
        """Until no live pin or expiry marker is left: those written after the fence are released at once (their
        owners see it), older ones when their attempt or run ends; one older than the lifetime no longer counts."""
        wait, waited, last_log = 0.005, 0.0, 0.0
        while True:
            now = clock.now_millis()
            live = [p for p, mtime in _pins(self.file_io, self.table_path) if mtime >= now - COMMIT_PIN_LIFETIME_MS]
            if not live:
                return
            if waited - last_log >= 10:
                log.info("%s of %s waits for %d commit(s) in flight", self.what, self.table_path, len(live))
                last_log = waited
            time.sleep(wait)
            waited += wait
            wait = min(wait * 2, 0.5)


class _ReservedFile:
    """A pin, marker or fence file, and the consumer directory its write may have created: on a filesystem with
    directories, the file that created the directory removes it again (if empty) when it is deleted, so that an
    operation that changed nothing leaves the table's files exactly as they were. A writer that made the directory
    again just before (another pin, a consumer's progress) may see it vanish before it creates its file:
    :class:`~table_engine.io.file_io.LocalFileIO` then makes it again and retries."""

    def __init__(self, file_io: FileIO, table_path: str, consumer_id: str) -> None:
        self.file_io = file_io
        self.path = consumer_path(table_path, consumer_id)
        self.directory = consumer_dir(table_path)
        self.made_dir = file_io.has_directories and not file_io.exists(self.directory)

    def write(self, data: bytes) -> None:
        self.file_io.write_bytes(self.path, data, overwrite=True)

    def write_if_absent(self, data: bytes) -> bool:
        return self.file_io.write_if_absent(self.path, data)

    def delete(self) -> None:
        self.file_io.try_delete(self.path)
        if self.made_dir:
            try:
                if not self.file_io.list_status(self.directory):
                    self.file_io.delete(self.directory)  # not recursive: fails if another file appeared
            except OSError:
                pass


def _pins(file_io: FileIO, table_path: str) -> list[tuple[str, int]]:
    """(id, modification time) of every commit pin and expiry marker of the table."""
    out = []
    for st in file_io.list_status(consumer_dir(table_path)):
        name = st.path.rstrip("/").rsplit("/", 1)[-1]
        if not st.is_dir and name.startswith((CONSUMER_PREFIX + COMMIT_PIN_PREFIX,
                                              CONSUMER_PREFIX + EXPIRY_MARKER_PREFIX)):
            out.append((name[len(CONSUMER_PREFIX):], st.mtime_millis))
    return out


def _stale(file_io: FileIO, table_path: str, consumer_id: str, now: int) -> bool:
    """Whether the file of ``consumer_id`` (a pin or the fence) is older than the pins' lifetime (or gone)."""
    for st in file_io.list_status(consumer_dir(table_path)):
        if st.path.rstrip("/").rsplit("/", 1)[-1] == CONSUMER_PREFIX + consumer_id:
            return st.mtime_millis < now - COMMIT_PIN_LIFETIME_MS
    return True


def fence_stands(file_io: FileIO, table_path: str) -> bool:
    """Whether a rollback or fast-forward is rewriting the table's history (its fence file is there)."""
    return file_io.is_file(consumer_path(table_path, HISTORY_FENCE_ID))


def wait_for_fence(file_io: FileIO, table_path: str) -> None:
    """Wait (bounded by the pins' lifetime) until the history fence is gone; a stale fence is removed."""
    path = consumer_path(table_path, HISTORY_FENCE_ID)
    wait, deadline = 0.005, time.monotonic() + COMMIT_PIN_LIFETIME_MS / 1000
    while file_io.is_file(path):
        if _stale(file_io, table_path, HISTORY_FENCE_ID, clock.now_millis()):
            log.warning("removing the history fence of %s left by a rollback that stopped", table_path)
            file_io.try_delete(path)
            return
        if time.monotonic() > deadline:
            raise CommitConflictError(f"commit to {table_path}: a rollback or fast-forward has held the table's "
                                      "history for longer than the commit pins' lifetime; nothing was committed")
        time.sleep(wait)
        wait = min(wait * 2, 0.5)
