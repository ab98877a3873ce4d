"""Partition expiry and explicit partition drops (Paimon's ``PartitionExpire``, ``PartitionTimeExtractor``).

Expiring or dropping partitions is a *logical* drop: one OVERWRITE commit deleting every file (and index file)
of the partitions. The files stay on disk while older snapshots or tags use them and go away with snapshot
expiry, like any deleted file.

Strategies (``partition.expiration-strategy``):

* ``values-time``: the partition's time comes from its values -- ``partition.timestamp-pattern`` (``$dt``,
  ``$dt $hour:00:00``, ``$year-$month-$day``; default: the first partition value) gives a string, parsed with
  ``partition.timestamp-formatter`` (a Java ``DateTimeFormatter`` pattern such as ``yyyyMMdd``, ``yyyy-MM-dd HH``;
  default: ``yyyy-MM-dd[ HH:mm:ss[.S]]`` with 1-2 digit fields). A partition expires when that time is before
  ``now - partition.expiration-time`` (local wall-clock time, like Java's ``LocalDateTime.now()``). The time of a
  daily partition is the start of its day, so with ``'1 d'`` the partition of day D is dropped from D+1 00:00 on,
  i.e. yesterday's partition goes early this morning -- Paimon's intended semantics (apache/paimon#5812).
  Values that do not parse (or are null) are never expired.
* ``update-time``: a partition expires when its newest file was created before ``now - expiration-time``.

At most ``partition.expiration-max-num`` partitions (in value order) expire per run, committed in batches of
``partition.expiration-batch-size``. Writers check at commit time every ``partition.expiration-check-interval``
(tracked per process and table; the first commit of a process checks).
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from table_engine import clock
from table_engine.core_enums import PartitionExpireStrategy
from table_engine.core_options import default_commit_user
from table_engine.errors import OptionError, PartitionSpecError, SchemaError
from table_engine.format.binary_row import decode_row
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.io.paths import partition_value_string
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs, partition_specs, select_partitions
from table_engine.store.reading.scan import live_entries

__all__ = ["PartitionExpireResult", "PartitionTimeExtractor", "drop_partitions", "expire_partitions",
           "java_formatter_regex"]

log = logging.getLogger(__name__)

_LAST_CHECK: dict[str, int] = {}  # table path -> epoch ms of the last commit-time check in this process

_DEFAULT_FORMAT = re.compile(
    r"(?P<y>\d{1,10})-(?P<M>\d{1,2})-(?P<d>\d{1,2})"
    r"(?: (?P<H>\d{1,2}):(?P<m>\d{1,2}):(?P<s>\d{1,2})(?:\.(?P<S>\d{1,9}))?)?")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


# ------------------------------------------------------------------------------------------------ time parsing


def java_formatter_regex(pattern: str) -> re.Pattern[str]:
    """A regex with named groups (y, M, d, H, h, k, K, m, s, S, a) parsing what ``DateTimeFormatter.ofPattern``
    parses for the supported letters; quoted text ``'...'`` and other characters are literals."""
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise OptionError(f"unterminated quote in timestamp formatter {pattern!r}")
            out.append(re.escape(pattern[i + 1:end] or "'"))
            i = end + 1
            continue
        if not c.isalpha():
            out.append(re.escape(c))
            i += 1
            continue
        n = 1
        while i + n < len(pattern) and pattern[i + n] == c:
            n += 1
        i += n
        group = {"u": "y", "y": "y", "M": "M", "L": "M"}.get(c, c)
        if group in seen:
            raise OptionError(f"timestamp formatter {pattern!r} repeats the field {c!r}")
        seen.add(group)
        if group == "y":
            out.append(r"(?P<yy>\d{2})" if n == 2 else rf"(?P<y>[+-]?\d{{{max(n, 1)},10}})")
        elif group == "M" and n >= 3:
            names = "|".join(m[:3] if n == 3 else m for m in _MONTHS)
            out.append(rf"(?P<Mname>{names})")
        elif group in ("M", "d", "H", "h", "k", "K", "m", "s"):
            out.append(rf"(?P<{group}>\d{{1,2}})" if n == 1 else rf"(?P<{group}>\d{{{n}}})")
        elif group == "S":
            out.append(rf"(?P<S>\d{{{n}}})")
        elif group == "a":
            out.append(r"(?P<a>AM|PM)")
        else:
            raise OptionError(f"timestamp formatter {pattern!r}: pattern letter {c!r} is not supported "
                              "(supported: y u M L d H h k K m s S a and literals)")
    return re.compile("".join(out))


def _to_datetime(m: re.Match[str]) -> datetime.datetime:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if "yy" in g:
        year = 2000 + int(g["yy"])
    elif "y" in g:
        year = int(g["y"])
    else:
        raise ValueError("no year")
    if "Mname" in g:
        month = next(i + 1 for i, name in enumerate(_MONTHS) if name.startswith(g["Mname"]))
    elif "M" in g:
        month = int(g["M"])
    else:
        raise ValueError("no month")
    if "d" not in g:
        raise ValueError("no day of month")
    hour = 0
    if "H" in g:
        hour = int(g["H"])
    elif "k" in g:
        hour = int(g["k"]) % 24
    elif ("h" in g or "K" in g) and "a" in g:
        hour = int(g.get("h", g.get("K", "0"))) % 12 + (12 if g["a"] == "PM" else 0)
    fraction = g.get("S", "")
    micros = int((fraction + "000000")[:6]) if fraction else 0
    return datetime.datetime(year, month, int(g["d"]), hour, int(g.get("m", 0)), int(g.get("s", 0)), micros)


@dataclass
class PartitionTimeExtractor:
    """Time of a partition from its values (``partition.timestamp-pattern`` + ``-formatter``)."""

    pattern: str | None = None
    formatter: str | None = None
    _regex: re.Pattern[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._regex = java_formatter_regex(self.formatter) if self.formatter else None

    def extract(self, keys: Sequence[str], values: Sequence[str]) -> datetime.datetime:
        """ValueError when the values do not form a timestamp."""
        text = values[0] if self.pattern is None else self.replace_pattern(keys, values)
        m = (self._regex or _DEFAULT_FORMAT).fullmatch(text)
        if m is None:
            raise ValueError(f"{text!r} does not match {self.formatter or 'yyyy-MM-dd[ HH:mm:ss]'}")
        return _to_datetime(m)

    def check_pattern(self, keys: Sequence[str]) -> None:
        """OptionError when the pattern refers (``$name``) to something that is not a partition column: no
        partition would ever match, and every one would be skipped with a warning."""
        if self.pattern is None:
            return
        for m in re.finditer(r"\$(\w+)", self.pattern):
            if not any(m.group(1).startswith(k) for k in keys):
                raise OptionError(f"partition.timestamp-pattern {self.pattern!r}: ${m.group(1)} is not a partition "
                                  f"column (partition columns: {list(keys)})")

    def replace_pattern(self, keys: Sequence[str], values: Sequence[str]) -> str:
        """Substitute ``$key`` by its value; longer keys win (``$dt1`` is not ``$dt`` + ``1``)."""
        assert self.pattern is not None
        order = sorted(range(len(keys)), key=lambda i: -len(keys[i]))
        out: list[str] = []
        i = 0
        p = self.pattern
        while i < len(p):
            if p[i] == "$" and i + 1 < len(p):
                hit = next((j for j in order if p.startswith(keys[j], i + 1)), None)
                if hit is not None:
                    out.append(values[hit])
                    i += 1 + len(keys[hit])
                    continue
            out.append(p[i])
            i += 1
        return "".join(out)


# ------------------------------------------------------------------------------------------------ expiry


@dataclass
class PartitionExpireResult:
    """Partitions dropped (as ``{key: value string}``) and the snapshots of the drop commits."""

    partitions: list[dict[str, str]] = field(default_factory=list)
    snapshot_ids: list[int] = field(default_factory=list)


def expire_partitions(ctx: StoreContext, *, expiration_time: int | str | None = None,
                      strategy: str | None = None, timestamp_formatter: str | None = None,
                      timestamp_pattern: str | None = None, max_expires: int | None = None,
                      now: datetime.datetime | None = None, dry_run: bool = False) -> PartitionExpireResult:
    """Drop expired partitions; arguments override the table options (Paimon's ``expire_partitions``)."""
    opts = ctx.options
    if isinstance(expiration_time, str):
        from table_engine.options import parse_duration

        expiration_time = parse_duration(expiration_time, key="expiration_time")
    expiration = expiration_time if expiration_time is not None else opts.partition_expiration_time()
    if expiration is None:
        raise OptionError("partition expiry needs partition.expiration-time (or an expiration_time argument)")
    if not ctx.schema.partition_keys:
        raise SchemaError(f"table {ctx.table_path} is not partitioned: no partitions to expire")
    kind = PartitionExpireStrategy(strategy) if strategy else opts.partition_expiration_strategy()
    max_num = max_expires if max_expires is not None else opts.partition_expiration_max_num()
    now = now or clock.now_local()
    cutoff = now - datetime.timedelta(milliseconds=expiration)
    parts = _partitions(ctx)
    keys = list(ctx.schema.partition_keys)
    expired: list[tuple[list[str], tuple[Any, ...]]] = []
    if kind is PartitionExpireStrategy.VALUES_TIME:
        extractor = PartitionTimeExtractor(timestamp_pattern or opts.partition_timestamp_pattern(),
                                           timestamp_formatter or opts.partition_timestamp_formatter())
        extractor.check_pattern(keys)
        for values, strings, _ in parts:
            if any(v is None for v in values):
                log.warning("partition %s of %s has a null value: not expired by values-time", strings, ctx.table_path)
                continue
            try:
                part_time = extractor.extract(keys, strings)
            except (ValueError, OverflowError) as e:
                log.warning("cannot extract a time from partition %s of %s (%s): not expired; use the update-time "
                            "strategy or drop it explicitly", dict(zip(keys, strings)), ctx.table_path, e)
                continue
            if cutoff > part_time:
                expired.append((strings, values))
    else:
        cutoff_ms = int(cutoff.timestamp() * 1000)
        expired = [(strings, values) for values, strings, last in parts if cutoff_ms > last]
    expired.sort(key=lambda x: ",".join(x[0]))
    expired = expired[:max_num]
    result = PartitionExpireResult([dict(zip(keys, s)) for s, _ in expired])
    if not expired or dry_run:
        return result
    batch = opts.partition_expiration_batch_size() or len(expired)
    for start in range(0, len(expired), batch):
        chunk = expired[start:start + batch]
        sid = _commit_drop(ctx, [v for _, v in chunk])
        if sid is not None:
            result.snapshot_ids.append(sid)
    log.info("expired %d partitions of %s: %s", len(expired), ctx.table_path, result.partitions)
    return result


def drop_partitions(ctx: StoreContext, partitions: PartitionSpecs, ignore_if_missing: bool = False) -> int | None:
    """Drop the partitions matching any of the specs (typed against the partition columns, see
    :mod:`table_engine.store.partition_spec`); a spec may name a subset of the partition keys.

    One OVERWRITE commit; returns its snapshot id. A spec that matches no partition is a PartitionSpecError and
    nothing is dropped; with ``ignore_if_missing`` it is logged instead (no commit, None, when none matches).
    """
    fields = ctx.schema.partition_fields()
    specs = partition_specs(partitions, fields, ctx.options.partition_default_name(), ctx.table_path) or []
    if not specs:
        raise PartitionSpecError(f"drop_partitions of {ctx.table_path} needs at least one partition spec")
    snap = ctx.latest_snapshot()
    live = {e.partition for e in live_entries(ctx.file_io, ctx.table_path, snap)} if snap is not None else set()
    selected = select_partitions(live, specs, fields, require_match=not ignore_if_missing, what="drop_partitions",
                                 table=ctx.table_path)
    if not selected:
        log.info("drop_partitions of %s: %s match no partition (already gone): nothing to drop", ctx.table_path,
                 [str(s) for s in specs])
        return None
    types = [f.type for f in fields]
    return _commit_drop(ctx, [tuple(decode_row(p, types)) for p in sorted(selected)])


def commit_time_check_due(ctx: StoreContext, commit_identifier: int, now_ms: int | None = None) -> bool:
    """Is the per-process ``partition.expiration-check-interval`` up (or an end-of-input batch commit)?"""
    opts = ctx.options
    if opts.partition_expiration_time() is None or not ctx.schema.partition_keys:
        return False
    now_ms = clock.now_millis() if now_ms is None else now_ms
    interval = opts.partition_expiration_check_interval()
    last = _LAST_CHECK.get(ctx.table_path)
    due = (last is None or interval == 0 or now_ms > last + interval
           or (opts.end_input_check_partition_expire() and commit_identifier == BATCH_COMMIT_IDENTIFIER))
    if due:
        _LAST_CHECK[ctx.table_path] = now_ms
    return due


def _partitions(ctx: StoreContext) -> list[tuple[tuple[Any, ...], list[str], int]]:
    """(values, value strings, newest file creation ms) of every partition of the latest snapshot."""
    snap = ctx.latest_snapshot()
    if snap is None:
        return []
    fields = ctx.schema.partition_fields()
    types = [f.type for f in fields]
    default = ctx.options.partition_default_name()
    newest: dict[bytes, int] = {}
    for e in live_entries(ctx.file_io, ctx.table_path, snap):
        t = e.file.creation_time_millis or 0
        newest[e.partition] = max(newest.get(e.partition, 0), t)
    out = []
    for part, last in newest.items():
        values = tuple(decode_row(part, types))
        strings = [partition_value_string(v, t, default) for v, t in zip(values, types)]
        out.append((values, strings, last))
    return out


def _commit_drop(ctx: StoreContext, values: Sequence[tuple[Any, ...]]) -> int | None:
    keys = list(ctx.schema.partition_keys)
    specs = tuple(dict(zip(keys, v)) for v in values)
    commit = FileStoreCommit(ctx, default_commit_user(ctx.options), new_user=True)
    return commit.commit([], BATCH_COMMIT_IDENTIFIER, overwrite=Overwrite(drop_partitions=specs))
