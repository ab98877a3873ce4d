"""Consumers: ``consumer/consumer-<id>`` files recording a reader's progress, which protect snapshots from expiry.

The file is Paimon's ``Consumer`` JSON, ``{"nextSnapshot" : N}`` (Jackson's pretty printer): the id of the next
snapshot the consumer will read. Snapshot (and changelog) expiry never removes ids ``>= min(nextSnapshot)``.
Consumers expire when their file was not modified for ``consumer.expiration-time`` (checked by writers at commit
time and by :func:`expire_consumers`). Writes overwrite atomically (temp file + rename), so readers never see a
torn file; a garbled file is retried briefly (another writer may be replacing it) and then reported.

Commit pins and the history fence (:mod:`table_engine.store.pins`) are consumer files with reserved ids
(:mod:`table_engine.format.consumer_file`). They are not consumers of the table's data: :meth:`ConsumerManager.all`
and everything built on it (``$consumers``, clear, reset, consumer expiry) leave them out, and
:meth:`ConsumerManager.min_next_snapshot` counts one only while it is younger than its lifetime (a crashed
committer's pin is deleted after that).
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import TYPE_CHECKING

from table_engine import clock
from table_engine.errors import ConsumerError, CorruptMetadataError
from table_engine.format.consumer_file import (
    COMMIT_PIN_LIFETIME_MS,
    CONSUMER_PREFIX,
    RESERVED_PREFIX,
    Consumer,
    consumer_dir,
    consumer_path,
    is_reserved,
)
from table_engine.io.file_io import FileIO

if TYPE_CHECKING:
    from table_engine.store.context import StoreContext

__all__ = ["CONSUMER_PREFIX", "Consumer", "ConsumerManager"]

log = logging.getLogger(__name__)

_READ_RETRIES = 5
_INVALID_ID = re.compile(r"[/\\]|^\s*$")


class ConsumerManager:
    """The consumers of one table (``<table>/consumer``)."""

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")

    @classmethod
    def of(cls, ctx: StoreContext) -> ConsumerManager:
        """The consumers of the table of ``ctx``."""
        return cls(ctx.file_io, ctx.table_path)

    @property
    def directory(self) -> str:
        return consumer_dir(self.table_path)

    def path(self, consumer_id: str) -> str:
        return consumer_path(self.table_path, consumer_id)

    # ---- reading -----------------------------------------------------------------------------------------------
    def get(self, consumer_id: str) -> Consumer | None:
        _check_id(consumer_id)
        return self._read(consumer_id, 0)

    def all(self) -> list[Consumer]:
        """Every consumer, by id."""
        out = []
        for cid, mtime in self._ids():
            c = self._read(cid, mtime)
            if c is not None:
                out.append(c)
        return out

    def consumers(self) -> dict[str, int]:
        """Consumer id -> next snapshot id."""
        return {c.consumer_id: c.next_snapshot for c in self.all()}

    def min_next_snapshot(self, now_millis: int | None = None) -> int | None:
        """The smallest ``nextSnapshot`` over all consumers and live commit pins (None without either): what
        expiry must keep. Commit pins older than :data:`COMMIT_PIN_LIFETIME_MS` at ``now_millis`` (default: the
        engine's clock) are deleted instead of counted."""
        stale_before = (clock.now_millis() if now_millis is None else now_millis) - COMMIT_PIN_LIFETIME_MS
        values = []
        for cid, mtime in self._ids(pins=True):
            if is_reserved(cid) and mtime < stale_before:
                log.warning("deleting commit pin %s of %s: older than its lifetime (a committer that stopped "
                            "mid-commit)", cid, self.table_path)
                self.file_io.try_delete(self.path(cid))
                continue
            c = self._read(cid, mtime)
            if c is not None:
                values.append(c.next_snapshot)
        return min(values) if values else None

    # ---- writing -----------------------------------------------------------------------------------------------
    def create(self, consumer_id: str, next_snapshot: int) -> Consumer:
        """A new consumer; :class:`ConsumerError` if it exists."""
        _check_id(consumer_id)
        _check_next(next_snapshot)
        c = Consumer(consumer_id, next_snapshot)
        if not self.file_io.write_if_absent(self.path(consumer_id), c.to_json().encode("utf-8")):
            raise ConsumerError(f"consumer {consumer_id!r} of {self.table_path} exists already")
        return c

    def update(self, consumer_id: str, next_snapshot: int) -> Consumer:
        """Record progress (creating the consumer if needed)."""
        _check_id(consumer_id)
        _check_next(next_snapshot)
        c = Consumer(consumer_id, next_snapshot)
        self.file_io.write_bytes(self.path(consumer_id), c.to_json().encode("utf-8"), overwrite=True)
        return c

    def reset(self, consumer_id: str, next_snapshot: int | None = None) -> None:
        """Paimon's ``reset_consumer``: set the next snapshot, or delete the consumer when it is None."""
        if next_snapshot is None:
            self.delete(consumer_id)
        else:
            self.update(consumer_id, next_snapshot)

    def delete(self, consumer_id: str) -> bool:
        _check_id(consumer_id)
        return self.file_io.delete(self.path(consumer_id))

    def clear(self, including: str = ".*", excluding: str | None = None, dry_run: bool = False) -> list[str]:
        """Delete consumers whose id fully matches ``including`` and not ``excluding`` (Java regexes, mostly); with
        ``dry_run`` only list them."""
        try:
            inc = re.compile(including)
            exc = re.compile(excluding) if excluding else None
        except re.error as e:
            raise ConsumerError(f"bad consumer pattern: {e}") from e
        removed = []
        for cid, _ in self._ids():
            if inc.fullmatch(cid) and not (exc is not None and exc.fullmatch(cid)):
                if not dry_run:
                    self.file_io.try_delete(self.path(cid))
                removed.append(cid)
        if removed and not dry_run:
            log.info("cleared consumers %s of %s", removed, self.table_path)
        return removed

    def expire(self, older_than_millis: int) -> list[str]:
        """Delete consumers whose file was last modified before ``older_than_millis`` (epoch ms)."""
        removed = []
        for cid, mtime in self._ids():
            if mtime < older_than_millis:
                self.file_io.try_delete(self.path(cid))
                removed.append(cid)
        if removed:
            log.info("expired consumers %s of %s (not updated since %d)", removed, self.table_path,
                     older_than_millis)
        return removed

    # ---- internals ---------------------------------------------------------------------------------------------
    def _ids(self, pins: bool = False) -> list[tuple[str, int]]:
        """(consumer id, modification time) of every consumer file; commit pins only with ``pins``."""
        out = []
        for st in self.file_io.list_status(self.directory):
            base = st.path.rstrip("/").rsplit("/", 1)[-1]
            if not st.is_dir and base.startswith(CONSUMER_PREFIX) and len(base) > len(CONSUMER_PREFIX):
                cid = base[len(CONSUMER_PREFIX):]
                if pins or not is_reserved(cid):
                    out.append((cid, st.mtime_millis))
        out.sort()
        return out

    def _read(self, consumer_id: str, mtime: int) -> Consumer | None:
        p = self.path(consumer_id)
        for attempt in range(_READ_RETRIES):
            try:
                data = self.file_io.read_bytes(p)
            except FileNotFoundError:
                return None
            try:
                value = json.loads(data)["nextSnapshot"]
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ValueError(f"nextSnapshot {value!r} is not an integer")
                return Consumer(consumer_id, value, mtime)
            except (ValueError, KeyError, TypeError) as e:
                if attempt == _READ_RETRIES - 1:
                    raise CorruptMetadataError(f"cannot parse consumer file {p}: {e}") from e
                time.sleep(0.02 * 2**attempt)
        return None  # pragma: no cover


def _check_id(consumer_id: str) -> None:
    if not isinstance(consumer_id, str) or _INVALID_ID.search(consumer_id):
        raise ConsumerError(f"invalid consumer id {consumer_id!r}")
    if is_reserved(consumer_id):
        raise ConsumerError(f"invalid consumer id {consumer_id!r}: the prefix {RESERVED_PREFIX!r} is reserved for "
                            "commit pins")


def _check_next(next_snapshot: int) -> None:
    if isinstance(next_snapshot, bool) or not isinstance(next_snapshot, int) or next_snapshot < 1:
        raise ConsumerError(f"next snapshot must be a positive snapshot id, got {next_snapshot!r}")
