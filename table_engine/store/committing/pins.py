"""Commit pins: a committer holds back expiry at the snapshot it builds on, so that a snapshot id is never reused.

The committer publishes ``snapshot-(base+1)`` with an atomic create-if-absent, which proves only that the file is
absent *now*. Without a pin, a slow attempt is open to ABA: while it builds on ``base``, other committers publish
``base+1`` and ``base+2`` and an expiry deletes ``base`` and ``base+1``; the create then succeeds, and the acknowledged
commit lives in a stray snapshot outside the table's lineage (docs/adr/0039-commit-pins.md).

A pin closes it. Each attempt, *before* it reads the latest snapshot:

1. reads the ``LATEST`` hint ``h`` (an id that was published, so ``h <=`` every later latest) and writes a pin
   ``consumer/consumer-__commit-pin-<uuid>`` with ``nextSnapshot = h`` (:mod:`~table_engine.store.changes.consumers`);
2. reads the latest snapshot ``b`` (lowering the pin to ``b`` first if the hint was ahead, e.g. after a rollback);
3. publishes ``b+1``, then deletes the pin.

Expiry reads the latest snapshot ``L`` *before* it reads the consumers (as Paimon Java's does). A run that read the
consumers after step 1 keeps everything ``>= h``; a run that read them before step 1 read ``L`` before step 2, so
``L <= b`` and it deletes only ids ``< L``. Either way no snapshot ``>= b`` is deleted while the pin stands, so a
successful create of ``b+1`` means ``b+1`` never existed: the new snapshot is a successor of its base. The same
argument makes the latest-snapshot probe exact for the attempt: ids at or above the latest it starts from are
never deleted under it.

A committer that dies leaves its pin behind; it stops counting after
:data:`~table_engine.store.changes.consumers.COMMIT_PIN_LIFETIME_MS` (by the file's modification time) and the
next expiry deletes it. So that a live committer is never that old, an attempt that took half the lifetime does
not publish: it starts over with a new pin (:meth:`BasePin.may_publish`).
"""

from __future__ import annotations

import logging
import time
import uuid
from types import TracebackType

from table_engine.format.snapshot import Snapshot, find_latest_snapshot, latest_hint, try_publish_snapshot
from table_engine.io.file_io import FileIO
from table_engine.store.changes.consumers import COMMIT_PIN_LIFETIME_MS, COMMIT_PIN_PREFIX, Consumer, ConsumerManager

__all__ = ["PUBLISH_BUDGET_S", "BasePin"]

log = logging.getLogger(__name__)

PUBLISH_BUDGET_S = COMMIT_PIN_LIFETIME_MS / 1000 / 2
"""An attempt older than this (since its pin was written) does not publish: it starts over with a fresh pin."""


class BasePin:
    """One commit attempt's hold on its base snapshot; a context manager that releases it (see the module)."""

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self._consumers = ConsumerManager(file_io, self.table_path)
        self.pin_id = f"{COMMIT_PIN_PREFIX}{uuid.uuid4().hex}"
        self._hint = latest_hint(file_io, self.table_path)
        self._written_at = time.monotonic()
        self._write(max(self._hint or 1, 1))

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
                return snap
            log.info("LATEST hint of %s was ahead of snapshot %d: pinning that", self.table_path, snap.id)
            self._write(snap.id)

    def may_publish(self) -> bool:
        """False once the attempt is older than :data:`PUBLISH_BUDGET_S`: expiry may soon stop honouring the pin."""
        elapsed = time.monotonic() - self._written_at
        if elapsed <= PUBLISH_BUDGET_S:
            return True
        log.warning("commit attempt on %s took %.0f s, longer than its pin's budget (%.0f s): starting over",
                    self.table_path, elapsed, PUBLISH_BUDGET_S)
        return False

    def publish(self, snapshot: Snapshot) -> bool:
        """:func:`try_publish_snapshot` unless the attempt is past its budget (then False: retry, as a lost race)."""
        return self.may_publish() and try_publish_snapshot(self.file_io, self.table_path, snapshot)

    def release(self) -> None:
        """Delete the pin (best effort: a pin left behind stops counting after its lifetime)."""
        self.file_io.try_delete(self._consumers.path(self.pin_id))

    def _write(self, next_snapshot: int) -> None:
        self.floor = next_snapshot
        data = Consumer(self.pin_id, next_snapshot).to_json().encode("utf-8")
        try:
            self.file_io.write_bytes(self._consumers.path(self.pin_id), data, overwrite=True)
        except BaseException:
            self.release()  # the write may have happened although it failed (a lost response)
            raise
