"""Which (partition, bucket)s a dedicated compaction takes: the controls of Paimon's ``compact`` procedure.

* ``partitions``: only partitions matching one of the specs (a spec that matches none is a PartitionSpecError);
* ``partition_idle_time`` (``idle_ms``): only partitions whose newest data file was created at least that long
  ago (the manifests' file creation times: metadata only);
* ``buckets`` (Paimon's ``buckets => '0-99,200-299'``): only these buckets of a fixed-bucket table (keeps one job
  within memory); :func:`parse_buckets` reads the text as Paimon's ``ParameterUtils.parseIntegerRanges`` does;
* ``compaction.skip-expired-partitions``: with ``partition.expiration-time`` and the ``values-time`` strategy,
  partitions already expired by their values are left out (the next ``expire-partitions`` drops them anyway).

Every filter is on metadata; what is left is sorted by (partition, bucket).
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Collection, Mapping

from table_engine import clock
from table_engine.core_enums import PartitionExpireStrategy
from table_engine.errors import CommandError
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.io.paths import partition_value_string
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs, partition_specs, select_partitions
from table_engine.store.partition_time import PartitionTimeExtractor

log = logging.getLogger(__name__)

_RANGE = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")


def parse_buckets(text: str, bucket_count: int | None = None, *, where: str = "compact",
                  name: str = "buckets") -> frozenset[int]:
    """The bucket numbers of ``text``: comma-separated numbers and inclusive ranges (``"0-2, 4, 6 - 7"``), each
    below ``bucket_count`` when given. A one-line CommandError naming the argument (``name``) and the bad item
    otherwise."""
    if not text or not text.strip():
        raise CommandError(f"{where}: {name} must not be empty (e.g. '0-99,200-299')")
    out: set[int] = set()
    for token in text.split(","):
        item = token.strip()
        m = _RANGE.fullmatch(item)
        if m is None:
            raise CommandError(f"{where}: {name} {text!r}: {item!r} is not a bucket number or a range 'A-B'")
        start = int(m.group(1))
        end = start if m.group(2) is None else int(m.group(2))
        if start > end:
            raise CommandError(f"{where}: {name} {text!r}: range {item!r} starts after its end")
        if bucket_count is not None and end >= bucket_count:
            raise CommandError(f"{where}: {name} {text!r}: {item!r} is out of range [0, {bucket_count}) "
                               f"(the table's bucket = {bucket_count})")
        out.update(range(start, end + 1))
    return frozenset(out)


def table_buckets(ctx: StoreContext, buckets: Collection[int] | str | None) -> frozenset[int] | None:
    """``buckets`` checked against the table: only a fixed-bucket table (``bucket`` > 0) has them, as in Paimon;
    None when not given."""
    if buckets is None:
        return None
    where = f"compact of {ctx.table_path}"
    count = ctx.options.bucket()
    if count <= 0:
        raise CommandError(f"{where}: buckets are only supported for fixed-bucket tables (bucket > 0), this table "
                           f"has bucket = {count}")
    if isinstance(buckets, str):
        return parse_buckets(buckets, count, where=where)
    wanted = frozenset(buckets)
    bad = sorted(b for b in wanted if not 0 <= b < count)
    if bad or not wanted:
        raise CommandError(f"{where}: buckets {sorted(wanted)}: " + (
            f"{bad[0]} is out of range [0, {count})" if bad else "must not be empty"))
    return wanted


def select_compaction(ctx: StoreContext, buckets_files: Mapping[tuple[bytes, int], list[DataFileMeta]],
                      partitions: PartitionSpecs | None = None, idle_ms: int | None = None,
                      buckets: Collection[int] | None = None) -> list[tuple[bytes, int]]:
    """The (partition, bucket) keys of ``buckets_files`` a compaction takes, sorted (see the module docstring)."""
    keys = sorted(buckets_files)
    if partitions is not None:
        fields = ctx.schema.partition_fields()
        specs = partition_specs(partitions, fields, ctx.options.partition_default_name(), ctx.table_path) or []
        selected = select_partitions((part for part, _ in keys), specs, fields, require_match=True,
                                     what="compact", table=ctx.table_path)
        keys = [k for k in keys if k[0] in selected]
    if idle_ms is not None:
        newest = newest_creation_millis(buckets_files)
        cutoff = clock.now_millis() - idle_ms
        keys = [k for k in keys if newest[k[0]] <= cutoff]
    if buckets is not None:
        keys = [k for k in keys if k[1] in buckets]
    expired = expired_partitions(ctx, {part for part, _ in keys})
    if expired:
        log.info("%s: %d expired partitions not compacted (compaction.skip-expired-partitions)", ctx.table_path,
                 len(expired))
        keys = [k for k in keys if k[0] not in expired]
    return keys


def newest_creation_millis(buckets_files: Mapping[tuple[bytes, int], list[DataFileMeta]]) -> dict[bytes, int]:
    """Per partition, the creation time of its newest data file (0 when unknown): when it was last written."""
    newest: dict[bytes, int] = {}
    for (part, _), files in buckets_files.items():
        t = max((f.creation_time_millis or 0 for f in files), default=0)
        newest[part] = max(newest.get(part, 0), t)
    return newest


def expired_partitions(ctx: StoreContext, parts: Collection[bytes],
                       now: datetime.datetime | None = None) -> set[bytes]:
    """The partitions of ``parts`` a compaction skips by ``compaction.skip-expired-partitions``: only with
    ``partition.expiration-time`` set and ``partition.expiration-strategy`` = ``values-time`` (else none), those
    whose time (from their values) is older than now - expiration time. A partition without a time is kept."""
    o = ctx.options
    expiration = o.partition_expiration_time()
    if not o.compaction_skip_expired_partitions() or expiration is None or not parts \
            or o.partition_expiration_strategy() is not PartitionExpireStrategy.VALUES_TIME \
            or not ctx.schema.partition_keys:
        return set()
    keys = list(ctx.schema.partition_keys)
    types = [f.type for f in ctx.schema.partition_fields()]
    default = o.partition_default_name()
    extractor = PartitionTimeExtractor(o.partition_timestamp_pattern(), o.partition_timestamp_formatter())
    extractor.check_pattern(keys)
    cutoff = (now or clock.now_local()) - datetime.timedelta(milliseconds=expiration)
    out: set[bytes] = set()
    for part in parts:
        values = decode_row(part, types)
        if any(v is None for v in values):
            continue
        try:
            when = extractor.extract(keys, [partition_value_string(v, t, default) for v, t in zip(values, types)])
        except (ValueError, OverflowError):
            continue
        if cutoff > when:
            out.add(part)
    return out
