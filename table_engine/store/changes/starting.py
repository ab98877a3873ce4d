"""Where a scan starts: ``scan.mode`` and its options resolved against the table's snapshots.

The resolvers are pure functions of the options and a sequence of snapshots (oldest first); :class:`LiveSnapshots`
is that sequence for a table, read lazily.

Mirrors Paimon's ``AbstractDataTableScan.createStartingScanner`` and its ``StartingScanner`` implementations:

=================== ================================================= ==============================================
mode                batch read                                        streaming read
=================== ================================================= ==============================================
latest-full         the latest snapshot                               latest snapshot in full, then its changes
latest              the latest snapshot                               only changes committed after the start
latest-delta        what the latest snapshot changed                  (not allowed)
compacted-full      the latest COMPACT snapshot (full compaction when full snapshot of it, then changes
                    ``changelog-producer`` is full-compaction or
                    ``full-compaction.delta-commits`` is set), else
                    the latest
from-timestamp      the snapshot at or before the time (error if      changes after the last snapshot earlier than
                    none)                                             the time
from-snapshot       that snapshot (or ``scan.tag-name``)              changes from that snapshot on (no full phase)
from-snapshot-full  that snapshot                                     that snapshot in full, then changes
incremental         changes between two snapshots/tags/timestamps     (not allowed)
=================== ================================================= ==============================================

A streaming read with a ``consumer-id`` whose consumer exists (and ``consumer.ignore-progress`` false) starts at the
consumer's next snapshot instead. Snapshot ids before the earliest live snapshot are moved up to it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from table_engine.core_enums import ChangelogProducer, IncrementalBetweenScanMode, StartupMode
from table_engine.core_options import (
    CHANGELOG_PRODUCER,
    CONSUMER_ID,
    CONSUMER_IGNORE_PROGRESS,
    FULL_COMPACTION_DELTA_COMMITS,
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_SCAN_MODE,
    INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT,
    INCREMENTAL_BETWEEN_TIMESTAMP,
    SCAN_MODE,
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
    CoreOptions,
)
from table_engine.errors import OptionError, SnapshotNotExistError, UnsupportedError
from table_engine.format.snapshot import CommitKind, Snapshot, list_snapshot_ids, read_snapshot
from table_engine.store.context import StoreContext

__all__ = ["IncrementalRange", "LiveSnapshots", "StartingPoint", "resolve_batch_start", "resolve_incremental",
           "resolve_stream_start", "startup_mode", "validate_scan_options"]

LONG_MAX = 2**63 - 1
_UNSUPPORTED = (StartupMode.FROM_CREATION_TIMESTAMP, StartupMode.FROM_FILE_CREATION_TIME)

TagResolver = Callable[[str], Snapshot | None]
"""Tag name -> its snapshot, None when there is no such tag."""


@dataclass(frozen=True)
class StartingPoint:
    """Where a scan starts.

    ``full_snapshot``: the snapshot read in full first (None: no full phase). ``next_snapshot``: the first snapshot
    whose changes a streaming read takes after that (None: nothing to read yet, resolve again later).
    """

    full_snapshot: int | None
    next_snapshot: int | None
    mode: StartupMode

    @property
    def waiting(self) -> bool:
        return self.full_snapshot is None and self.next_snapshot is None


@dataclass(frozen=True)
class IncrementalRange:
    """Changes of snapshots ``start`` (exclusive) to ``end`` (inclusive), read as ``scan_mode``.

    ``scan_mode`` is DELTA, CHANGELOG or DIFF (AUTO is resolved). ``empty``: nothing to read (e.g. the same start
    and end, or times outside the table's history).
    """

    start: int
    end: int
    scan_mode: IncrementalBetweenScanMode
    before: Snapshot | None = None
    after: Snapshot | None = None
    """For a diff of two tags: their snapshots (which may have expired)."""

    @property
    def empty(self) -> bool:
        return self.end <= self.start


def startup_mode(options: CoreOptions) -> StartupMode:
    """``scan.mode`` with ``default`` and the deprecated ``full`` resolved (Paimon's ``CoreOptions.startupMode``)."""
    mode = options.get(SCAN_MODE)
    if mode is StartupMode.FULL:
        return StartupMode.LATEST_FULL
    if mode is not StartupMode.DEFAULT:
        return mode
    raw = options.raw
    if SCAN_TIMESTAMP_MILLIS.is_set(raw) or SCAN_TIMESTAMP.is_set(raw):
        return StartupMode.FROM_TIMESTAMP
    if SCAN_SNAPSHOT_ID.is_set(raw) or SCAN_TAG_NAME.is_set(raw):
        return StartupMode.FROM_SNAPSHOT
    if INCREMENTAL_BETWEEN.is_set(raw) or INCREMENTAL_BETWEEN_TIMESTAMP.is_set(raw):
        return StartupMode.INCREMENTAL
    return StartupMode.LATEST_FULL


def scan_timestamp_millis(options: CoreOptions) -> int | None:
    """``scan.timestamp-millis``, else ``scan.timestamp`` (local time) in epoch milliseconds."""
    millis = options.get(SCAN_TIMESTAMP_MILLIS)
    if millis is not None:
        return millis
    text = options.get(SCAN_TIMESTAMP)
    return None if text is None else _local_millis(text, SCAN_TIMESTAMP.key)


def validate_scan_options(options: CoreOptions) -> None:
    """Paimon's ``SchemaValidation.validateStartupMode``: the options a ``scan.mode`` needs, and none that belong
    to another mode (OptionError naming them)."""
    mode = startup_mode(options)
    raw = options.raw
    ts, snap, tag = (SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP), (SCAN_SNAPSHOT_ID,), (SCAN_TAG_NAME,)
    incr = (INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP)
    rules: dict[StartupMode, tuple[tuple[Any, ...], tuple[Any, ...]]] = {
        StartupMode.FROM_TIMESTAMP: (ts, snap + tag + incr),
        StartupMode.FROM_SNAPSHOT: (snap + tag, ts + incr),
        StartupMode.INCREMENTAL: (incr, ts + snap + tag),
        StartupMode.FROM_SNAPSHOT_FULL: (snap, ts + tag + incr),
        StartupMode.LATEST_DELTA: ((), ts + snap + tag + incr + (INCREMENTAL_BETWEEN_SCAN_MODE,
                                                                 INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT)),
    }
    needed, forbidden = rules.get(mode, ((), ts + snap + tag + incr))
    if needed:
        given = [o.key for o in needed if o.is_set(raw)]
        if len(given) != 1:
            raise OptionError(f"exactly one of {[o.key for o in needed]} must be set when {SCAN_MODE.key} is "
                              f"{mode.value}" + (f", got {given}" if given else ""))
    for o in forbidden:
        if o.is_set(raw):
            raise OptionError(f"[{o.key}] must be null when you use {mode.value} for {SCAN_MODE.key}")


# ---- batch --------------------------------------------------------------------------------------------------------
def resolve_batch_start(options: CoreOptions, snapshots: Sequence[Snapshot], tag: TagResolver) -> Snapshot | None:
    """The snapshot a batch read of a non-incremental ``scan.mode`` reads in full (None: the table is empty).

    ``snapshots``: the live snapshots, oldest first. ``latest-delta`` and ``incremental`` are not full reads: see
    :func:`resolve_incremental`.
    """
    mode = startup_mode(options)
    latest = snapshots[-1] if snapshots else None
    if mode in (StartupMode.LATEST_FULL, StartupMode.LATEST):
        return latest
    if mode is StartupMode.COMPACTED_FULL:
        return _compacted(options, snapshots) or latest
    if mode is StartupMode.FROM_TIMESTAMP:
        millis = _required_millis(options, mode)
        found = _at_or_before(snapshots, millis)
        if found is None:
            first = f"{snapshots[0].time_millis}" if snapshots else "null"
            raise SnapshotNotExistError(
                f"there is currently no snapshot earlier than or equal to timestamp [{millis}] "
                f"({SCAN_TIMESTAMP_MILLIS.key}), the earliest snapshot's timestamp is [{first}]")
        return found
    if mode in (StartupMode.FROM_SNAPSHOT, StartupMode.FROM_SNAPSHOT_FULL):
        sid = options.get(SCAN_SNAPSHOT_ID)
        if sid is None and mode is StartupMode.FROM_SNAPSHOT:
            name = options.get(SCAN_TAG_NAME)
            if name is None:
                raise OptionError(f"scan.mode {mode.value} needs {SCAN_SNAPSHOT_ID.key} or {SCAN_TAG_NAME.key}")
            snap = tag(name)
            if snap is None:
                raise SnapshotNotExistError(f"tag {name!r} ({SCAN_TAG_NAME.key}) does not exist")
            return snap
        if sid is None:
            raise OptionError(f"{SCAN_SNAPSHOT_ID.key} must be set when {SCAN_MODE.key} is {mode.value}")
        return _by_id(snapshots, sid)
    if mode in _UNSUPPORTED:
        raise UnsupportedError(f"{SCAN_MODE.key} {mode.value} is not supported by this engine")
    raise OptionError(f"{SCAN_MODE.key} {mode.value} is not a full batch read")


# ---- streaming ----------------------------------------------------------------------------------------------------
def resolve_stream_start(options: CoreOptions, snapshots: Sequence[Snapshot],
                         consumer_next: int | None = None, table_was_empty: bool = False) -> StartingPoint:
    """Where a streaming read starts.

    ``consumer_next``: the recorded next snapshot of the ``consumer-id`` consumer (None: no consumer or no
    record). ``table_was_empty``: for ``latest``, whether the table had no snapshot when the read was created (then
    the first snapshot is read as changes, as Paimon's ``ContinuousLatestStartingScanner``).
    """
    mode = startup_mode(options)
    earliest = snapshots[0].id if snapshots else None
    latest = snapshots[-1].id if snapshots else None
    if options.get(CONSUMER_ID) is not None and not options.get(CONSUMER_IGNORE_PROGRESS) \
            and consumer_next is not None:
        if earliest is None:
            return StartingPoint(None, None, mode)
        return StartingPoint(None, max(consumer_next, earliest), mode)
    if mode is StartupMode.LATEST_FULL:
        return StartingPoint(latest, None if latest is None else latest + 1, mode)
    if mode is StartupMode.LATEST:
        if latest is None:
            return StartingPoint(None, None, mode)
        return StartingPoint(None, 1 if table_was_empty else latest + 1, mode)
    if mode is StartupMode.COMPACTED_FULL:
        picked = _compacted(options, snapshots)
        sid = picked.id if picked is not None else latest
        return StartingPoint(sid, None if sid is None else sid + 1, mode)
    if mode is StartupMode.FROM_TIMESTAMP:
        millis = _required_millis(options, mode)
        if latest is None or earliest is None:
            return StartingPoint(None, None, mode)
        before = _before(snapshots, millis)  # the last snapshot strictly earlier than the time
        return StartingPoint(None, (before.id if before is not None else earliest - 1) + 1, mode)
    if mode in (StartupMode.FROM_SNAPSHOT, StartupMode.FROM_SNAPSHOT_FULL):
        return _stream_from_snapshot(options, mode, earliest)
    if mode in _UNSUPPORTED:
        raise UnsupportedError(f"{SCAN_MODE.key} {mode.value} is not supported by this engine")
    raise OptionError(f"{SCAN_MODE.key} {mode.value} is not supported in streaming mode (batch reads only)")


def _stream_from_snapshot(options: CoreOptions, mode: StartupMode, earliest: int | None) -> StartingPoint:
    """The start of a streaming ``from-snapshot`` (changes from ``scan.snapshot-id``) or ``from-snapshot-full`` read."""
    sid = options.get(SCAN_SNAPSHOT_ID)
    if mode is StartupMode.FROM_SNAPSHOT:
        if sid is None:
            if options.get(SCAN_TAG_NAME) is not None:
                raise OptionError(f"cannot scan from a tag ({SCAN_TAG_NAME.key}) in streaming mode: use "
                                  f"{SCAN_SNAPSHOT_ID.key}")
            raise OptionError(f"scan.mode from-snapshot needs {SCAN_SNAPSHOT_ID.key}")
        if earliest is None:
            return StartingPoint(None, None, mode)
        return StartingPoint(None, max(sid, earliest), mode)
    if sid is None:
        raise OptionError(f"{SCAN_SNAPSHOT_ID.key} must be set when {SCAN_MODE.key} is from-snapshot-full")
    if earliest is None:
        return StartingPoint(None, None, mode)
    full = max(sid, earliest)
    return StartingPoint(full, full + 1, mode)


# ---- incremental --------------------------------------------------------------------------------------------------
def resolve_incremental(options: CoreOptions, snapshots: Sequence[Snapshot], tag: TagResolver) -> IncrementalRange:
    """The range of a batch ``incremental-between`` / ``incremental-between-timestamp`` / ``latest-delta`` read
    (Paimon's ``createIncrementalStartingScanner``)."""
    mode = options.get(INCREMENTAL_BETWEEN_SCAN_MODE)
    earliest = snapshots[0] if snapshots else None
    latest = snapshots[-1] if snapshots else None
    if startup_mode(options) is StartupMode.LATEST_DELTA:
        if latest is None:
            return IncrementalRange(0, 0, IncrementalBetweenScanMode.DELTA)
        return IncrementalRange(latest.id - 1, latest.id, IncrementalBetweenScanMode.DELTA)
    between = options.get(INCREMENTAL_BETWEEN)
    if between is not None:
        return _between_snapshots(options, between, snapshots, tag, mode, earliest)
    return _between_timestamps(options, snapshots, mode, earliest, latest)


def _between_snapshots(options: CoreOptions, between: str, snapshots: Sequence[Snapshot], tag: TagResolver,
                       mode: IncrementalBetweenScanMode, earliest: Snapshot | None) -> IncrementalRange:
    """The range of ``incremental-between``: two tags or two snapshot ids."""
    left, right = _pair(between, INCREMENTAL_BETWEEN.key, "start(exclusive) and end snapshot, e.g. '5,10'")
    start_tag, end_tag = tag(left), tag(right)
    if start_tag is not None and end_tag is not None:
        if options.get(INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT):
            return _checked(start_tag.id, end_tag.id, snapshots, _auto(options, mode))
        return IncrementalRange(start_tag.id, end_tag.id, IncrementalBetweenScanMode.DIFF, start_tag, end_tag)
    try:
        start, end = int(left), int(right)
    except ValueError:
        raise OptionError(f"{INCREMENTAL_BETWEEN.key} {between!r}: didn't find two tags for start {left!r} and "
                          f"end {right!r}, and they are not two snapshot ids") from None
    if end < start:
        raise OptionError(f"{INCREMENTAL_BETWEEN.key} {between!r}: ending snapshot id {end} should be >= "
                          f"starting snapshot id {start}")
    if earliest is None or start == end:
        return IncrementalRange(start, start, _auto(options, mode))
    if mode is IncrementalBetweenScanMode.DIFF:
        return IncrementalRange(start, end, mode)
    return _checked(start, end, snapshots, _auto(options, mode))


def _between_timestamps(options: CoreOptions, snapshots: Sequence[Snapshot], mode: IncrementalBetweenScanMode,
                        earliest: Snapshot | None, latest: Snapshot | None) -> IncrementalRange:
    """The range of ``incremental-between-timestamp``: the snapshots committed in (start, end]."""
    text = options.get(INCREMENTAL_BETWEEN_TIMESTAMP)
    if text is None:
        raise OptionError(f"an incremental read needs {INCREMENTAL_BETWEEN.key} or {INCREMENTAL_BETWEEN_TIMESTAMP.key}")
    left, right = _pair(text, INCREMENTAL_BETWEEN_TIMESTAMP.key, "start(exclusive) and end timestamp")
    t1, t2 = (_millis(left, INCREMENTAL_BETWEEN_TIMESTAMP.key), _millis(right, INCREMENTAL_BETWEEN_TIMESTAMP.key))
    if t2 < t1:
        raise OptionError(f"{INCREMENTAL_BETWEEN_TIMESTAMP.key} {text!r}: ending timestamp {t2} should be >= "
                          f"starting timestamp {t1}")
    resolved = _auto(options, mode) if mode is not IncrementalBetweenScanMode.DIFF else mode
    if earliest is None or latest is None or t1 == t2 or t1 > latest.time_millis or t2 < earliest.time_millis:
        return IncrementalRange(0, 0, resolved)
    start_snap = _at_or_before(snapshots, t1)
    start = earliest.id - 1 if start_snap is None or earliest.time_millis > t1 else start_snap.id
    end_snap = _at_or_before(snapshots, t2)
    end = latest.id if end_snap is None else end_snap.id
    return IncrementalRange(start, end, resolved)


def _auto(options: CoreOptions, mode: IncrementalBetweenScanMode) -> IncrementalBetweenScanMode:
    if mode is not IncrementalBetweenScanMode.AUTO:
        return mode
    return IncrementalBetweenScanMode.DELTA if options.get(CHANGELOG_PRODUCER) is ChangelogProducer.NONE \
        else IncrementalBetweenScanMode.CHANGELOG


def _checked(start: int, end: int, snapshots: Sequence[Snapshot], mode: IncrementalBetweenScanMode) \
        -> IncrementalRange:
    earliest, latest = snapshots[0].id, snapshots[-1].id
    if start < earliest - 1 or end > latest:
        raise SnapshotNotExistError(f"the specified scan snapshot id range [{start}, {end}] is out of the available "
                                    f"snapshot id range [{earliest}, {latest}]")
    return IncrementalRange(start, end, mode)


class LiveSnapshots(Sequence[Snapshot]):
    """The live snapshots of a table, oldest first, read lazily (one directory listing; a snapshot file when it is
    first looked at), so resolving a start by id or time reads a handful of files, not all."""

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx
        self.ids = list_snapshot_ids(ctx.file_io, ctx.table_path)
        self._cache: dict[int, Snapshot] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Snapshot: ...

    @overload
    def __getitem__(self, index: slice) -> list[Snapshot]: ...

    def __getitem__(self, index: int | slice) -> Snapshot | list[Snapshot]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        sid = self.ids[index]
        snap = self._cache.get(sid)
        if snap is None:
            snap = self._cache[sid] = read_snapshot(self.ctx.file_io, self.ctx.table_path, sid)
        return snap


# ---- helpers ------------------------------------------------------------------------------------------------------
def _compacted(options: CoreOptions, snapshots: Sequence[Snapshot]) -> Snapshot | None:
    """Paimon's ``CompactedStartingScanner`` / ``FullCompactedStartingScanner`` pick: the latest COMPACT snapshot
    (a full compaction's when the table runs them)."""
    full = options.get(CHANGELOG_PRODUCER) is ChangelogProducer.FULL_COMPACTION \
        or FULL_COMPACTION_DELTA_COMMITS.is_set(options.raw)
    delta_commits = options.get(FULL_COMPACTION_DELTA_COMMITS) or 1
    for snap in reversed(snapshots):
        if snap.commit_kind != CommitKind.COMPACT:
            continue
        ident = snap.commit_identifier
        if not full or ident % delta_commits == 0 or ident == LONG_MAX:
            return snap
    return None


def _by_id(snapshots: Sequence[Snapshot], sid: int) -> Snapshot:
    if snapshots:
        first = snapshots[0].id
        i = sid - first  # ids are contiguous
        if 0 <= i < len(snapshots) and snapshots[i].id == sid:
            return snapshots[i]
        for snap in snapshots:  # a gap (should not happen): search
            if snap.id == sid:
                return snap
    if not snapshots:
        raise SnapshotNotExistError("there is currently no snapshot")
    raise SnapshotNotExistError(f"the specified scan snapshot id {sid} ({SCAN_SNAPSHOT_ID.key}) is out of the "
                                f"available snapshot id range [{snapshots[0].id}, {snapshots[-1].id}]")


def _at_or_before(snapshots: Sequence[Snapshot], millis: int) -> Snapshot | None:
    """The newest snapshot with ``time_millis <= millis`` (binary search: times grow with ids)."""
    i = _first_after(snapshots, lambda s: s.time_millis > millis)
    return snapshots[i - 1] if i > 0 else None


def _before(snapshots: Sequence[Snapshot], millis: int) -> Snapshot | None:
    """The newest snapshot with ``time_millis < millis``."""
    i = _first_after(snapshots, lambda s: s.time_millis >= millis)
    return snapshots[i - 1] if i > 0 else None


def _first_after(snapshots: Sequence[Snapshot], past: Callable[[Snapshot], bool]) -> int:
    lo, hi = 0, len(snapshots)
    while lo < hi:
        mid = (lo + hi) // 2
        if past(snapshots[mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _required_millis(options: CoreOptions, mode: StartupMode) -> int:
    millis = scan_timestamp_millis(options)
    if millis is None:
        raise OptionError(f"scan.mode {mode.value} needs {SCAN_TIMESTAMP_MILLIS.key} or {SCAN_TIMESTAMP.key}")
    return millis


def _pair(text: str, key: str, expected: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise OptionError(f"{key} must specify {expected}, but is {text!r}")
    return parts[0], parts[1]


def _millis(text: str, key: str) -> int:
    try:
        return int(text)
    except ValueError:
        return _local_millis(text, key)


def _local_millis(text: str, key: str) -> int:
    try:
        return int(datetime.datetime.fromisoformat(text.strip()).timestamp() * 1000)
    except ValueError:
        raise OptionError(f"{key}: {text!r} is neither epoch milliseconds nor a local 'yyyy-MM-dd HH:mm:ss' "
                          "timestamp") from None


def options_with(base: Mapping[str, str], dynamic: Mapping[str, str] | None) -> CoreOptions:
    """Table options overlaid with per-read (dynamic) options."""
    return CoreOptions({**base, **(dynamic or {})})
