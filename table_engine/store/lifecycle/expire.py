"""Snapshot expiry (Paimon's ``ExpireSnapshotsImpl``) and decoupled changelog expiry (``ExpireChangelogImpl``).

Which snapshots expire, with ``latest``/``earliest`` the newest/oldest snapshot ids:

* ``snapshot.num-retained.max`` -- ids below ``latest - max + 1`` always expire;
* ``snapshot.num-retained.min`` -- ids from ``latest - min + 1`` never expire (``min >= 1``: the latest snapshot
  is never expired, so the snapshot a committer builds on survives);
* consumers -- ids ``>= min(nextSnapshot)`` of ``consumer/consumer-*`` never expire (unless
  ``consumer.changelog-only``);
* ``snapshot.expire.limit`` -- at most that many snapshots per run;
* ``snapshot.time-retained`` -- between max and min, snapshot ``id`` expires only if snapshot ``id + 1`` is older
  than the retention (so every retained snapshot was the latest for less than the retention at most).

What is deleted when ``[begin, end)`` expires (``end`` becomes the earliest snapshot):

1. data files deleted by the deltas of snapshots ``(begin, end]`` -- by invariant 1 of
   :mod:`~table_engine.store.lifecycle.file_refs` no snapshot ``>= end`` uses them -- except files used by the nearest
   tag older than the deleting snapshot (the only tag that can hold them), and files of branches;
2. changelog files of the expired snapshots (unless the changelog lifecycle is decoupled, see below);
3. manifest lists, manifests, index manifests, index files and statistics of the expired snapshots that are not
   used by snapshot ``end``, by the tags from the one at or before ``begin`` up to ``end`` (invariant 2), or by
   branches;
4. the snapshot files, oldest first, then the ``EARLIEST`` hint moves to ``end`` -- done *first*, before 1-3, so
   that a run that stops halfway never leaves a snapshot whose metadata is gone: a failed deletion stops the run
   at that snapshot (what the snapshots already deleted referenced is still deleted, then the error is raised), and
   a killed run leaves at most unreferenced files behind, which orphan cleanup removes.

Safety with concurrent writers: only files referenced by snapshots ``< end`` are candidates. A commit in flight
builds on a snapshot that no run can expire while it builds: the latest one at the time its pin was written, or a
newer one (commit pins, :mod:`table_engine.store.pins`: the latest snapshot is read before the consumers, and pins
are consumer files). It only references files that snapshot references
(all ``>= end``: protected by 1 and 3) or files it wrote itself (in no expired snapshot: never candidates). Data
files deleted in ``(begin, end]`` are live in no snapshot ``>= end``, so no newer commit can reference them; a
compaction that still wanted to delete one fails its conflict check instead. Metadata of a snapshot published
after this run started reuses only manifests of its predecessor (``>= end``). A second expiry running at the
same time deletes a superset or a subset of the same files; a run whose ``end`` snapshot vanished meanwhile stops
before deleting anything. A killed run leaves unreferenced files at most (step 4 comes first), which orphan
cleanup removes; reads of already deleted metadata are tolerated. Readers of a *retained* snapshot never fail;
a reader still scanning an expired snapshot may.

Decoupled changelog lifecycle (``changelog.num-retained.*``/``changelog.time-retained`` longer than the snapshot
settings): each expired snapshot becomes ``changelog/changelog-<id>`` (same JSON) and keeps its changelog: the
changelog manifest list and files, or -- with ``changelog-producer = none`` -- the delta manifest lists and the
files written by writers (``_FILE_SOURCE = APPEND``), which are then deleted by changelog expiry instead.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from table_engine import clock
from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import (
    CHANGELOG_NUM_RETAINED_MAX,
    CHANGELOG_NUM_RETAINED_MIN,
    CHANGELOG_TIME_RETAINED,
    CoreOptions,
)
from table_engine.errors import OptionError, StorageError, TableEngineError
from table_engine.format.changelog_file import (
    delete_changelog,
    list_changelog_ids,
    read_changelog,
    write_changelog,
    write_changelog_hint,
)
from table_engine.format.manifest import ManifestEntry
from table_engine.format.snapshot import (
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    read_snapshot,
    snapshot_dir,
    snapshot_path,
)
from table_engine.options import INT_MAX, parse_duration
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.file_refs import FileRefs, is_append_source
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.pins import ExpiryMarker

__all__ = ["ExpireConfig", "ExpireResult", "expire_changelogs", "expire_snapshots"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExpireConfig:
    """Retention settings of one expiry run (from table options, with per-call overrides)."""

    retain_min: int = 10
    retain_max: int = INT_MAX
    time_retained_ms: int = 3_600_000
    max_deletes: int = 50
    changelog_retain_min: int = 10
    changelog_retain_max: int = INT_MAX
    changelog_time_retained_ms: int = 3_600_000
    changelog_decoupled: bool = False
    produce_changelog: bool = False
    clean_empty_directories: bool = False
    consumer_changelog_only: bool = False
    older_than_millis: int | None = None
    """Absolute cut-off (epoch ms) instead of ``now - time_retained_ms`` (the procedures' ``older_than``)."""

    @staticmethod
    def from_options(opts: CoreOptions, overrides: Mapping[str, Any] | None = None) -> ExpireConfig:
        """Config from table options; ``overrides``: retain_min, retain_max, time_retained (ms or '2 h'),
        older_than_millis, max_deletes, changelog_retain_min/max, changelog_time_retained."""
        o = dict(overrides or {})
        known = {"retain_min", "retain_max", "time_retained", "older_than_millis", "max_deletes",
                 "changelog_retain_min", "changelog_retain_max", "changelog_time_retained"}
        unknown = sorted(set(o) - known)
        if unknown:
            raise OptionError(f"unknown expire settings {unknown}; expected some of {sorted(known)}")
        retain_min = _int(o.get("retain_min"), opts.snapshot_num_retained_min())
        retain_max = _int(o.get("retain_max"), opts.snapshot_num_retained_max())
        time_retained = _duration(o.get("time_retained"), opts.snapshot_time_retained())
        # unset changelog settings follow the (effective) snapshot settings, as in Paimon's ExpireConfig
        ch_min = _int(o.get("changelog_retain_min"), opts.get(CHANGELOG_NUM_RETAINED_MIN) or retain_min)
        ch_max = _int(o.get("changelog_retain_max"), opts.get(CHANGELOG_NUM_RETAINED_MAX) or retain_max)
        raw_time = opts.get(CHANGELOG_TIME_RETAINED)
        ch_time = _duration(o.get("changelog_time_retained"), time_retained if raw_time is None else raw_time)
        cfg = ExpireConfig(
            retain_min=retain_min,
            retain_max=retain_max,
            time_retained_ms=time_retained,
            max_deletes=_int(o.get("max_deletes"), opts.snapshot_expire_limit()),
            changelog_retain_min=ch_min,
            changelog_retain_max=ch_max,
            changelog_time_retained_ms=ch_time,
            produce_changelog=opts.changelog_producer() is not ChangelogProducer.NONE,
            clean_empty_directories=opts.snapshot_clean_empty_directories(),
            consumer_changelog_only=opts.consumer_changelog_only(),
            older_than_millis=None if o.get("older_than_millis") is None else int(o["older_than_millis"]),
        )
        decoupled = ch_max > cfg.retain_max or ch_time > cfg.time_retained_ms or ch_min > cfg.retain_min
        cfg = ExpireConfig(**{**cfg.__dict__, "changelog_decoupled": decoupled})
        cfg.validate()
        return cfg

    def validate(self) -> None:
        if self.retain_min < 1:
            raise OptionError(f"snapshot.num-retained.min must be at least 1, got {self.retain_min}")
        if self.retain_max < self.retain_min:
            raise OptionError(f"snapshot.num-retained.max ({self.retain_max}) must not be less than "
                              f"snapshot.num-retained.min ({self.retain_min})")
        if self.changelog_retain_min < 1 or self.changelog_retain_max < self.changelog_retain_min:
            raise OptionError(f"changelog retention min {self.changelog_retain_min} / max "
                              f"{self.changelog_retain_max} must satisfy 1 <= min <= max")
        if self.max_deletes < 1:
            raise OptionError(f"snapshot.expire.limit must be positive, got {self.max_deletes}")


@dataclass
class ExpireResult:
    """What an expiry run did."""

    expired_snapshot_ids: list[int] = field(default_factory=list)
    deleted_data_files: int = 0
    deleted_changelog_files: int = 0
    deleted_metadata_files: int = 0
    changelogs_kept: list[int] = field(default_factory=list)
    """Expired snapshots turned into long-lived changelog metadata (decoupled changelog)."""
    expired_changelog_ids: list[int] = field(default_factory=list)

    @property
    def deleted_files(self) -> int:
        return self.deleted_data_files + self.deleted_changelog_files + self.deleted_metadata_files


def expire_snapshots(ctx: StoreContext, config: ExpireConfig | None = None,
                     now_millis: int | None = None) -> ExpireResult:
    """Expire snapshots per ``config`` (default: the table options), then decoupled changelogs."""
    cfg = config or ExpireConfig.from_options(ctx.options)
    now = clock.now_millis() if now_millis is None else now_millis
    with ExpiryMarker(ctx.file_io, ctx.table_path) as marker:  # a rollback waits for it, or it waits for nothing
        return ExpireResult() if marker.fenced else _expire(ctx, cfg, now)


def _expire(ctx: StoreContext, cfg: ExpireConfig, now: int) -> ExpireResult:
    result = ExpireResult()
    if not cfg.changelog_decoupled and list_changelog_ids(ctx.file_io, ctx.table_path):
        # decoupling was switched off: drop the changelogs left over first, while the manifests they share with
        # the snapshots about to expire still exist
        expire_changelogs(ctx, cfg, now, result, delete_all=True)
    _expire_snapshots(ctx, cfg, now, result)
    if cfg.changelog_decoupled:
        expire_changelogs(ctx, cfg, now, result)
    return result


def _expire_snapshots(ctx: StoreContext, cfg: ExpireConfig, now: int, result: ExpireResult) -> None:
    fio, tp = ctx.file_io, ctx.table_path
    latest = latest_snapshot_id(fio, tp)
    earliest = earliest_snapshot_id(fio, tp)
    if latest is None or earliest is None:
        return
    low = max(latest - cfg.retain_max + 1, earliest)
    max_exclusive = latest - cfg.retain_min + 1
    if not cfg.consumer_changelog_only:
        consumer_min = ConsumerManager(fio, tp).min_next_snapshot(now)
        if consumer_min is not None:
            max_exclusive = min(max_exclusive, consumer_min)
    max_exclusive = min(max_exclusive, earliest + cfg.max_deletes)
    older_than = cfg.older_than_millis if cfg.older_than_millis is not None else now - cfg.time_retained_ms
    end = max_exclusive
    for sid in range(low, max_exclusive):
        nxt = _try_read(ctx, sid + 1)
        if nxt is not None and older_than <= nxt.time_millis:
            end = sid
            break
    _expire_until(ctx, cfg, earliest, end, result)


def _expire_until(ctx: StoreContext, cfg: ExpireConfig, earliest: int, end: int, result: ExpireResult) -> None:
    fio, tp = ctx.file_io, ctx.table_path
    if end <= earliest:
        hint = f"{snapshot_dir(tp)}/EARLIEST"
        if not fio.exists(hint):
            fio.overwrite_hint(hint, str(earliest).encode("ascii"))
        return
    refs = FileRefs(ctx)
    snaps = [s for s in refs.parallel(list(range(earliest, end + 1)), lambda i: _try_read(ctx, i)) if s is not None]
    if not snaps or snaps[-1].id != end:
        log.info("snapshot expiry of %s stopped: snapshot %d is gone (another expiry or a rollback ran)", tp, end)
        return
    if len(snaps) < 2:
        return
    log.info("expiring snapshots [%d, %d) of %s", snaps[0].id, end, tp)
    # what the snapshots reference is read first, while it is all there; then their files go, oldest first (4), so
    # that a run that stops halfway never leaves a snapshot whose metadata is gone; then what they referenced
    plan = _Plan.of(refs, cfg, snaps)
    snaps, stopped_by = _delete_snapshot_files(ctx, cfg, snaps, result)
    if len(snaps) < 2:
        if stopped_by is not None:
            raise stopped_by
        return
    begin, end = snaps[0].id, snaps[-1].id
    # tags are read once the snapshot files are gone: a tag created on one of them before is seen, and a tag
    # created after finds its snapshot gone and is withdrawn (TagManager.create)
    tagged = [s for s, _ in TagManager(ctx).tagged_snapshots()]
    pins = refs.branch_pins()
    data = _expired_data_files(refs, plan, snaps, tagged, pins.data)
    result.deleted_data_files += refs.delete(data)
    # 2. changelog files of the expired snapshots
    changelog = [p for snap in snaps[:-1] for p in plan.changelog.get(snap.id, []) if p not in pins.data]
    result.deleted_changelog_files += refs.delete(changelog)
    if cfg.clean_empty_directories:
        refs.delete_empty_dirs(data + changelog)
    log.info("expiring snapshots [%d, %d) of %s: deleted %d data and %d changelog files", begin, end, tp,
             result.deleted_data_files, result.deleted_changelog_files)
    _delete_expired_metadata(refs, plan, snaps, tagged, pins.meta, result)
    log.info("expired snapshots [%d, %d) of %s: %d files deleted", begin, end, tp, result.deleted_files)
    if stopped_by is not None:
        raise stopped_by


@dataclass
class _Plan:
    """What the snapshots of one expiry run reference, read before any of them is deleted (1-3 of the module
    docstring, before the tags and branches that protect some of it are applied)."""

    deltas: dict[int, list[str]]
    """Snapshot id -> data files its delta stopped using (all of the run's snapshots: a concurrent run that deleted
    the snapshots before the first one deleted their metadata too, and maybe before it read this delta)."""
    changelog: dict[int, list[str]]
    meta: dict[int, dict[str, str]]
    end_skip: dict[int, set[str] | None]
    """Metadata names the run's last snapshot uses (None: unreadable): it keeps them. (A run stopped early reads
    its new last snapshot's, which it did not delete.)"""

    @staticmethod
    def of(refs: FileRefs, cfg: ExpireConfig, snaps: list[Snapshot]) -> _Plan:
        skip_append = cfg.changelog_decoupled and not cfg.produce_changelog

        def keep(e: ManifestEntry) -> bool:
            return skip_append and is_append_source(e)

        deltas = dict(zip([s.id for s in snaps], refs.parallel(snaps, lambda s: refs.delta_deleted(s, keep)),
                          strict=True))
        changelog = {} if cfg.changelog_decoupled else {s.id: refs.changelog_paths(s) for s in snaps[:-1]}
        meta = {s.id: refs.meta_files(s, data_lists=not cfg.changelog_decoupled or cfg.produce_changelog,
                                      changelog_list=not cfg.changelog_decoupled) for s in snaps[:-1]}
        return _Plan(deltas, changelog, meta, {snaps[-1].id: _skip_or_none(refs, snaps[-1])})


def _skip_or_none(refs: FileRefs, snap: Snapshot) -> set[str] | None:
    try:
        return refs.skip_names([snap])
    except (OSError, TableEngineError) as e:
        log.info("cannot read the metadata of snapshot %d of %s: %s", snap.id, refs.ctx.table_path, e)
        return None


def _delete_snapshot_files(ctx: StoreContext, cfg: ExpireConfig, snaps: list[Snapshot],
                           result: ExpireResult) -> tuple[list[Snapshot], StorageError | None]:
    """Step 4 of expiry, done first: delete the files of ``snaps[:-1]``, oldest first (a decoupled changelog
    lifecycle writes each one's ``changelog-<id>`` before), and move the ``EARLIEST`` hint. At the first deletion
    that fails, stop: the ids left must be contiguous (committers probe forward from the ``LATEST`` hint). Returns
    the snapshots whose files are gone followed by the new earliest one, and the error that stopped it (raised
    once what the deleted snapshots referenced is deleted too)."""
    fio, tp = ctx.file_io, ctx.table_path
    for i, snap in enumerate(snaps[:-1]):
        if cfg.changelog_decoupled:
            write_changelog(fio, tp, snap)
            result.changelogs_kept.append(snap.id)
        try:
            fio.delete(snapshot_path(tp, snap.id))  # False when a concurrent expiry was first: fine
        except OSError as e:
            stopped = StorageError(
                f"expiring snapshots of {tp}: could not delete snapshot-{snap.id} "
                f"({str(e).splitlines()[0] if str(e) else type(e).__name__}); expiry stopped there")
            fio.overwrite_hint(f"{snapshot_dir(tp)}/EARLIEST", str(snap.id).encode("ascii"))
            return snaps[:i + 1], stopped
        result.expired_snapshot_ids.append(snap.id)
    fio.overwrite_hint(f"{snapshot_dir(tp)}/EARLIEST", str(snaps[-1].id).encode("ascii"))
    return snaps, None


def _expired_data_files(refs: FileRefs, plan: _Plan, snaps: list[Snapshot], tagged: list[Snapshot],
                        pinned: set[str]) -> list[str]:
    """Step 1 of expiry: data files the deltas of ``snaps`` stopped using, minus files a tag or branch still uses
    (a file a delta deleted can only be held by the nearest tag older than that delta)."""
    tag_live: dict[int, set[str] | None] = {}
    data: list[str] = []
    for snap in snaps:
        prev_tag = max((t for t in tagged if t.id < snap.id), key=lambda t: t.id, default=None)
        protected: set[str] = set()
        if prev_tag is not None:
            if prev_tag.id not in tag_live:
                tag_live[prev_tag.id] = _live_or_none(refs, prev_tag)
            held = tag_live[prev_tag.id]
            if held is None:
                log.info("not deleting data files of snapshot %d of %s: tag snapshot %d is unreadable",
                         snap.id, refs.ctx.table_path, prev_tag.id)
                continue
            protected = held
        data += [p for p in plan.deltas.get(snap.id, []) if p not in protected and p not in pinned]
    return data


def _delete_expired_metadata(refs: FileRefs, plan: _Plan, snaps: list[Snapshot], tagged: list[Snapshot],
                             pinned: set[str], result: ExpireResult) -> None:
    """Step 3 of expiry: metadata of ``snaps[:-1]`` no retained snapshot, tag or branch uses."""
    tp = refs.ctx.table_path
    begin, end = snaps[0].id, snaps[-1].id
    end_skip = plan.end_skip[end] if end in plan.end_skip else _skip_or_none(refs, snaps[-1])
    try:
        if end_skip is None:
            raise TableEngineError(f"the metadata of snapshot {end} is unreadable")
        skip = end_skip | refs.skip_names(_skipping_tags(tagged, begin, end)) | pinned
    except (OSError, TableEngineError) as e:
        log.info("not deleting manifests of snapshots [%d, %d) of %s: %s", begin, end, tp, e)
        return
    meta: dict[str, str] = {}
    for snap in snaps[:-1]:
        meta.update((n, p) for n, p in plan.meta.get(snap.id, {}).items() if n not in skip)
    result.deleted_metadata_files += refs.delete(meta.values())


def expire_changelogs(ctx: StoreContext, cfg: ExpireConfig, now: int, result: ExpireResult,
                      delete_all: bool = False) -> None:
    """Expire long-lived changelogs by the ``changelog.*`` retention (ids relative to the latest snapshot).

    ``delete_all`` (used once the lifecycle is no longer decoupled): every changelog older than the earliest
    snapshot goes, Paimon's ``expire_changelogs(delete_all => true)``.
    """
    fio, tp = ctx.file_io, ctx.table_path
    latest = latest_snapshot_id(fio, tp)
    earliest_snap = earliest_snapshot_id(fio, tp)
    ids = list_changelog_ids(fio, tp)
    if latest is None or earliest_snap is None or not ids:
        return
    first, last = ids[0], ids[-1]
    if delete_all:
        _expire_changelogs_until(ctx, first, min(last + 1, earliest_snap), None, result)
        return
    low = max(latest - cfg.changelog_retain_max + 1, first)
    max_exclusive = latest - cfg.changelog_retain_min + 1
    consumer_min = ConsumerManager(fio, tp).min_next_snapshot(now)
    if consumer_min is not None:
        max_exclusive = min(max_exclusive, consumer_min)
    max_exclusive = min(max_exclusive, first + cfg.max_deletes, last)
    if max_exclusive <= first:
        return
    older_than = cfg.older_than_millis if cfg.older_than_millis is not None else now - cfg.changelog_time_retained_ms
    end = max_exclusive
    for cid in range(low, max_exclusive + 1):
        c = read_changelog(fio, tp, cid)
        if c is not None and older_than <= c.time_millis:
            end = cid
            break
    if end <= first:
        return
    end_changelog = read_changelog(fio, tp, end)
    if end_changelog is None:
        log.info("changelog expiry of %s stopped: changelog %d is gone", tp, end)
        return
    _expire_changelogs_until(ctx, first, end, end_changelog, result)


def _expire_changelogs_until(ctx: StoreContext, first: int, end: int, end_changelog: Snapshot | None,
                             result: ExpireResult) -> None:
    """Expire changelogs ``[first, end)``; ``end_changelog`` (None: ``end`` is the earliest snapshot) and the
    earliest snapshot keep what they share with them."""
    fio, tp = ctx.file_io, ctx.table_path
    earliest_snap = earliest_snapshot_id(fio, tp)
    if earliest_snap is None or end <= first:
        return
    refs = FileRefs(ctx)
    tagged = [s for s, _ in TagManager(ctx).tagged_snapshots()]
    # what follows the range in the lineage keeps what it shares with it: the end changelog, the earliest snapshot
    # and -- when changelogs are dropped up to a gap (delete_all) -- the nearest tag at or after the end
    next_tag = min((t for t in tagged if t.id >= end), key=lambda t: t.id, default=None)
    try:
        anchors = [*_skipping_tags(tagged, first, end), *([next_tag] if next_tag else []),
                   read_snapshot(fio, tp, earliest_snap)]
        skip = refs.skip_names(anchors)
        if end_changelog is not None:
            skip |= refs.skip_names([end_changelog], missing_ok=True)
        pins = refs.branch_pins()
    except (OSError, TableEngineError) as e:
        log.info("not expiring changelogs of %s: %s", tp, e)
        return
    skip |= pins.meta
    data: list[str] = []
    meta: dict[str, str] = {}
    for cid in range(first, end):
        c = read_changelog(fio, tp, cid)
        if c is None:
            continue
        if c.changelog_manifest_list:
            data += refs.changelog_paths(c)
            files = refs.meta_files(c, data_lists=False, index=False)
        else:
            deleted = _deleted_by(refs, c, tagged)
            if deleted is None:
                continue
            data += deleted
            files = refs.meta_files(c, changelog_list=False, index=False)
        meta.update((n, p) for n, p in files.items() if n not in skip)
    if end_changelog is None:
        # the lifecycle is no longer decoupled: the writer files the earliest snapshot's delta deleted were left
        # for its changelog, which will now never exist -- they are due now
        data += _deleted_by(refs, anchors[-1], tagged) or []  # anchors[-1]: the earliest snapshot
    data = [p for p in data if p not in pins.data]
    result.deleted_changelog_files += refs.delete(data)
    result.deleted_metadata_files += refs.delete(meta.values())
    for cid in range(first, end):
        delete_changelog(fio, tp, cid)
        result.expired_changelog_ids.append(cid)
    write_changelog_hint(fio, tp, "EARLIEST", end)
    log.info("expired changelogs [%d, %d) of %s", first, end, tp)


# ---------------------------------------------------------------------------------------------------- helpers


def _skipping_tags(tagged: list[Snapshot], begin: int, end: int) -> list[Snapshot]:
    """Tags whose metadata may be shared with snapshots ``[begin, end)``: from the last tag ``<= begin`` to the
    last tag ``< end`` (Paimon's ``findSkippingTags``)."""
    right = max((i for i, t in enumerate(tagged) if t.id < end), default=-1)
    if right < 0:
        return []
    left = max((i for i, t in enumerate(tagged) if t.id <= begin), default=0)
    return tagged[left:right + 1]


def _deleted_by(refs: FileRefs, snap: Snapshot, tagged: list[Snapshot]) -> list[str] | None:
    """Files the delta of ``snap`` deleted that the nearest older tag does not hold (None: tag unreadable)."""
    prev_tag = max((t for t in tagged if t.id < snap.id), key=lambda t: t.id, default=None)
    held: set[str] = set()
    if prev_tag is not None:
        live = _live_or_none(refs, prev_tag)
        if live is None:
            return None
        held = live

    def keep(e: ManifestEntry) -> bool:
        return refs.entry_path(e) in held

    return refs.delta_deleted(snap, keep)


def _live_or_none(refs: FileRefs, snap: Snapshot) -> set[str] | None:
    try:
        return refs.live_paths(snap)
    except (OSError, TableEngineError) as e:
        log.warning("cannot read the files of tagged snapshot %d: %s", snap.id, e)
        return None


def _try_read(ctx: StoreContext, sid: int) -> Snapshot | None:
    try:
        return read_snapshot(ctx.file_io, ctx.table_path, sid)
    except TableEngineError:
        return None


def _int(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"expected an integer, got {value!r}")
    return value


def _duration(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, str):
        return parse_duration(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"expected a duration in milliseconds or a string such as '1 h', got {value!r}")
    return value
