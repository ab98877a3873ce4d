"""Automatic tags (``tag.automatic-creation``), Paimon's ``TagAutoCreation`` and ``TagBatchCreation``.

* ``process-time`` / ``watermark``: after each commit, walk the snapshots not yet considered (those after the
  newest automatic tag's snapshot) and tag the first snapshot whose time, minus ``tag.creation-delay``, reaches
  the end of the period after the last tag: the tag is named after the period that just closed. The time is the
  commit time in ``sink.process-time-zone`` (default: local), or the watermark in ``sink.watermark-time-zone``
  (default UTC). With ``tag.automatic-completion`` every skipped period gets its tag, one per snapshot. Then only
  ``tag.num-retained-max`` automatic tags are kept (oldest deleted first).
* ``batch``: after a batch commit the latest snapshot is tagged ``batch-write-<yyyy-MM-dd>`` (or
  ``tag.batch.customized-name``), replacing a tag of that name; then at most ``tag.num-retained-max`` tags (all
  tags, as in Paimon) are kept.

Tags get ``tag.default-time-retained``. Progress is not kept in memory between commits (unlike Paimon's
long-running writers): it is re-derived from the newest automatic tag, and a commit whose latest snapshot cannot
close a period returns after reading one snapshot and listing the tag directory.
"""

from __future__ import annotations

import datetime
import logging
import zoneinfo

from table_engine.core_enums import TagCreationMode
from table_engine.core_options import CoreOptions
from table_engine.errors import OptionError, SnapshotNotExistError
from table_engine.format.snapshot import Snapshot, earliest_snapshot_id, latest_snapshot_id, read_snapshot
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.tag_period import TagPeriodHandler
from table_engine.store.lifecycle.tags import TagManager

__all__ = ["TagAutoCreation", "create_batch_tag"]

log = logging.getLogger(__name__)

_LONG_MIN = -(2**63)
BATCH_WRITE_TAG_PREFIX = "batch-write-"


def _zone(name: str | None, what: str) -> zoneinfo.ZoneInfo | None:
    if not name:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        raise OptionError(f"{what} {name!r} is not a known time zone") from e


def local_time(millis: int, zone: zoneinfo.ZoneInfo | None) -> datetime.datetime:
    """Epoch millis as a naive wall-clock time in ``zone`` (None: the local zone)."""
    if zone is None:
        return datetime.datetime.fromtimestamp(millis / 1000)
    return datetime.datetime.fromtimestamp(millis / 1000, zone).replace(tzinfo=None)


class TagAutoCreation:
    """Creates the automatic tags of ``process-time`` / ``watermark`` mode."""

    def __init__(self, ctx: StoreContext, opts: CoreOptions | None = None) -> None:
        self.ctx = ctx
        self.opts = opts or ctx.options
        mode = self.opts.tag_automatic_creation()
        if mode not in (TagCreationMode.PROCESS_TIME, TagCreationMode.WATERMARK):
            raise OptionError(f"tag.automatic-creation is {mode.value}: no periodic tags to create")
        self.watermark = mode is TagCreationMode.WATERMARK
        self.period = TagPeriodHandler.from_options(self.opts)
        self.delay = datetime.timedelta(milliseconds=self.opts.tag_creation_delay())
        self.period.validate_delay(self.opts.tag_creation_delay())
        raw = self.opts.raw
        self.zone = _zone(raw.get("sink.watermark-time-zone", "UTC"), "sink.watermark-time-zone") \
            if self.watermark else _zone(raw.get("sink.process-time-zone"), "sink.process-time-zone")
        self.tags = TagManager(ctx, self.period)

    def time_of(self, snapshot: Snapshot) -> datetime.datetime | None:
        if self.watermark:
            wm = snapshot.watermark
            return None if wm is None or wm == _LONG_MIN else local_time(wm, self.zone)
        return local_time(snapshot.time_millis, self.zone)

    def run(self) -> list[str]:
        """Create the tags that are due; returns their names."""
        fio, tp = self.ctx.file_io, self.ctx.table_path
        latest = latest_snapshot_id(fio, tp)
        if latest is None:
            return []
        resume = self._resume_point()
        if resume is None:
            return []
        next_snapshot, next_tag = resume
        if next_snapshot > latest:
            return []
        if next_tag is not None:  # snapshot times only grow: if the latest cannot close a period, none can
            t = self.time_of(read_snapshot(fio, tp, latest))
            if t is None or t - self.delay < self.period.next_tag_time(next_tag):
                return []
        created = self._create_due(next_snapshot, latest, next_tag)
        if created:
            log.info("auto-created tags %s of %s", created, tp)
        return created

    def _resume_point(self) -> tuple[int, datetime.datetime | None] | None:
        """(first snapshot to look at, the period after the newest auto tag's, None without auto tags); None when
        the newest auto tag cannot be read."""
        auto = [n for n in self.tags.names() if self.period.is_auto_tag(n)]
        if auto:
            newest = max(auto, key=self.period.tag_to_time)
            tag = self.tags.get(newest)
            if tag is None:
                return None
            return tag.snapshot_id + 1, self.period.next_tag_time(self.period.tag_to_time(newest))
        return earliest_snapshot_id(self.ctx.file_io, self.ctx.table_path) or 1, None

    def _create_due(self, sid: int, latest: int, next_tag: datetime.datetime | None) -> list[str]:
        """Walk snapshots ``sid`` to ``latest``, tagging each one that closes a period; returns the tag names."""
        fio, tp = self.ctx.file_io, self.ctx.table_path
        created: list[str] = []
        while sid <= latest:
            try:
                snap = read_snapshot(fio, tp, sid)
            except SnapshotNotExistError:  # expired meanwhile: continue from the earliest snapshot
                earliest = earliest_snapshot_id(fio, tp)
                if earliest is not None and earliest > sid:
                    sid = earliest
                    continue
                sid += 1
                continue
            sid += 1
            t = self.time_of(snap)
            if t is None:
                continue
            if next_tag is None or t - self.delay >= self.period.next_tag_time(next_tag):
                name, next_tag = self._create_tag(snap, t, next_tag)
                created.append(name)
        return created

    def _create_tag(self, snap: Snapshot, t: datetime.datetime, next_tag: datetime.datetime | None
                    ) -> tuple[str, datetime.datetime]:
        """Tag ``snap`` (of time ``t``) for its period and expire surplus auto tags; returns (tag name, the next
        period's time)."""
        this_tag = self.period.normalize_to_previous_tag(t)
        if self.opts.tag_automatic_completion() and next_tag is not None:
            this_tag = next_tag
        name = self.period.time_to_tag(this_tag)
        self.tags.create(name, snap, self.opts.tag_default_time_retained(), ignore_if_exists=True)
        next_tag = self.period.next_tag_time(this_tag)
        max_num = self.opts.tag_num_retained_max()
        if max_num is not None:
            self.tags.expire_auto_tags(max_num)
        return name, next_tag


def create_batch_tag(ctx: StoreContext, opts: CoreOptions | None = None) -> str | None:
    """``tag.automatic-creation = batch``: tag the latest snapshot after a batch write; returns the tag name."""
    opts = opts or ctx.options
    fio, tp = ctx.file_io, ctx.table_path
    latest = latest_snapshot_id(fio, tp)
    if latest is None:
        return None
    snap = read_snapshot(fio, tp, latest)
    zone = _zone(opts.raw.get("sink.process-time-zone"), "sink.process-time-zone")
    name = opts.tag_batch_customized_name() or \
        BATCH_WRITE_TAG_PREFIX + local_time(snap.time_millis, zone).strftime("%Y-%m-%d")
    tags = TagManager(ctx)
    tags.delete(name, ignore_if_not_exists=True)
    tags.create(name, snap, opts.tag_default_time_retained())
    max_num = opts.tag_num_retained_max()
    if max_num is not None:
        tagged = tags.tagged_snapshots()
        surplus = sum(len(n) for _, n in tagged) - max_num
        for _, names in tagged:
            for n in sorted(names, key=lambda x: (x == name, x)):
                if surplus <= 0:
                    break
                tags.delete(n, ignore_if_not_exists=True)
                surplus -= 1
    log.info("batch tag %s on snapshot %d of %s", name, snap.id, tp)
    return name
