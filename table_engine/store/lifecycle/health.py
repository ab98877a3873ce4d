"""Table health from metadata only: what a table's LSM trees, retention and consumers look like, no data file read.

Read: the snapshots (and long-lived changelogs), the latest snapshot's manifests and index manifest, tags, branches and
consumers. Per partition and bucket (:class:`BucketHealth`): files, rows and bytes; level-0 files and sorted runs
(Paimon's LSM: every level-0 file is one sorted run, every other level that holds files is one); small files (smaller
than ``target-file-size`` x ``compaction.small-file-ratio``, the size below which compaction rewrites a file); rows
deleted by deletion vectors (the ``_CARDINALITY`` of each vector in the index manifest; for vectors written without one,
``dv_unknown``, the vector counted in its DV index file); the postpone backlog (files in bucket ``-2`` of a ``bucket =
-2`` table, not yet assigned to a bucket). Per table (:class:`TableHealth`): snapshots and changelogs against their
retention, the number a snapshot expiry would remove now (as :mod:`~table_engine.store.lifecycle.expire` decides,
without its per-run ``snapshot.expire.limit``), consumers and how many snapshots they are behind, tags, branches, the
last compaction, tag and expiry, and optionally the orphan candidates (a bounded listing, see
:func:`~table_engine.store.lifecycle.orphans.find_orphans`).

Aggregation is vectorized: the latest snapshot's manifests are read into Arrow and merged and grouped by partition,
bucket and level with Arrow.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_engine import clock
from table_engine.errors import MissingFileError, SnapshotNotExistError
from table_engine.format.avro_data_file import read_avro_data
from table_engine.format.binary_row import decode_row
from table_engine.format.bucket import POSTPONE_BUCKET
from table_engine.format.changelog_file import list_changelog_ids, read_changelog
from table_engine.format.deletion_vector import read_dv_index
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX, DeletionVectorMeta, IndexFileMeta
from table_engine.format.manifest_list import ManifestFileMeta
from table_engine.format.snapshot import CommitKind, Snapshot, list_snapshot_ids, read_snapshot, snapshot_dir
from table_engine.io.executor import parallel_map
from table_engine.io.paths import index_file_path, manifest_path
from table_engine.store.branches import BranchManager
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.expire import ExpireConfig
from table_engine.store.lifecycle.orphans import DAY_MILLIS, find_orphans
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.partition_spec import PartitionSpec, format_partition_texts, select_partitions, value_text
from table_engine.store.reading.scan import PartitionDecoder, read_manifest_metas
from table_engine.types import DataType

__all__ = ["BucketHealth", "ConsumerHealth", "DEFAULT_MAX_ORPHAN_FILES", "HealthTotals", "OrphanHealth",
           "PartitionHealth", "RetentionHealth", "SnapshotEvent", "TableHealth", "TagHealth", "table_health"]

DEFAULT_MAX_ORPHAN_FILES = 100_000
"""Files the orphan listing looks at, at most (the listing says when it was cut)."""


@dataclass(frozen=True)
class BucketHealth:
    """One bucket of one partition of the latest snapshot (``partition``: ``k=v/k2=v2``, ``""`` unpartitioned)."""

    partition: str
    bucket: int
    files: int
    rows: int
    bytes: int
    level0_files: int
    sorted_runs: int
    max_level: int
    small_files: int
    small_file_ratio: float
    deleted_rows: int
    """Rows deleted by deletion vectors (their cardinalities in the index manifest)."""
    deletion_vector_ratio: float
    dv_unknown: int
    """Deletion vectors whose cardinality the index manifest does not give (Paimon Java 1.0 writes none): counted
    in their DV index file instead (a metadata file; still no data file read)."""
    postpone_files: int


@dataclass(frozen=True)
class HealthTotals:
    """The counters a partition and the table total over their buckets (:func:`_sums`): a counter
    :class:`BucketHealth` also has is the buckets' sum, a ratio is recomputed from the sums (:data:`_RATIOS`),
    ``max_sorted_runs`` is the worst bucket's.

    :class:`PartitionHealth` and :class:`TableHealth` inherit these fields after their leading ones (a dataclass
    takes the fields of the base listed last first: ``(HealthTotals, _PartitionKey)`` gives the key, then the
    totals, then the class's own fields; that order is the order of :meth:`TableHealth.to_dict`)."""

    files: int
    rows: int
    bytes: int
    level0_files: int
    max_sorted_runs: int
    small_files: int
    small_file_ratio: float
    deleted_rows: int
    deletion_vector_ratio: float
    postpone_files: int


_RATIOS = {"small_file_ratio": ("small_files", "files"), "deletion_vector_ratio": ("deleted_rows", "rows")}
"""Each ratio of :class:`HealthTotals`: (numerator, denominator) counters, 0.0 where the denominator is 0."""
_SUMMED = tuple(f.name for f in fields(HealthTotals)
                if f.name in {b.name for b in fields(BucketHealth)} and f.name not in _RATIOS)
"""The counters of :class:`HealthTotals` that are sums of the buckets' counters of the same name."""


@dataclass(frozen=True)
class _PartitionKey:
    """The fields of :class:`PartitionHealth` before its totals."""

    partition: str
    buckets: int


@dataclass(frozen=True)
class PartitionHealth(HealthTotals, _PartitionKey):
    """A partition: the sums of its buckets, the worst bucket's sorted runs and level-0 files."""

    postpone_rows: int
    postpone_bytes: int


@dataclass(frozen=True)
class RetentionHealth:
    """Snapshots (or long-lived changelogs) against their retention options."""

    count: int
    earliest_id: int | None
    latest_id: int | None
    earliest_time_millis: int | None
    retain_min: int
    retain_max: int
    time_retained_millis: int
    expirable: int
    """How many an expiry would remove now (all of them over several runs of ``snapshot.expire.limit``)."""
    over_max: int
    """How many are beyond ``*.num-retained.max`` (expire whatever their age)."""
    held_by_consumers: int
    """How many would expire by age and count but a consumer still needs."""


@dataclass(frozen=True)
class ConsumerHealth:
    """A consumer: the snapshot it reads next, how many snapshots it is behind the latest, whether that snapshot
    is gone (expired: the consumer cannot resume where it was)."""

    consumer_id: str
    next_snapshot_id: int
    lag: int
    expired: bool


@dataclass(frozen=True)
class TagHealth:
    """A tag: its snapshot, creation time, retention, whether it is past it."""

    name: str
    snapshot_id: int
    create_time: str | None
    time_retained_millis: int | None
    expired: bool


@dataclass(frozen=True)
class SnapshotEvent:
    """A snapshot that marks an event (the last compaction, the tagged snapshot): id, kind, commit time (epoch
    ms), commit user and the snapshot's ``properties`` (e.g. the Airflow run that wrote it)."""

    snapshot_id: int
    commit_kind: str
    time_millis: int
    commit_user: str
    properties: dict[str, str] | None


@dataclass(frozen=True)
class OrphanHealth:
    """Files under the table no snapshot, tag or changelog references, modified before ``older_than_millis``."""

    files: int
    bytes: int
    listed: int
    truncated: bool
    """The listing stopped at ``max_files`` files: there may be more."""
    older_than_millis: int
    sample: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _TableHead:
    """The fields of :class:`TableHealth` before its totals."""

    table: str
    primary_key: bool
    snapshot_id: int | None
    computed_at_millis: int
    target_file_size: int
    small_file_threshold: int
    num_sorted_run_compaction_trigger: int


@dataclass(frozen=True)
class TableHealth(HealthTotals, _TableHead):
    """The health of one table (see the module docstring); :meth:`to_dict` is its JSON form."""

    partitions: list[PartitionHealth]
    buckets: list[BucketHealth]
    snapshots: RetentionHealth
    changelogs: RetentionHealth
    consumers: list[ConsumerHealth]
    tags: list[TagHealth]
    branches: list[str]
    last_compaction: SnapshotEvent | None
    last_tag: SnapshotEvent | None
    last_tag_name: str | None
    last_expiry_millis: int | None
    """When the ``EARLIEST`` hint was last written (expiry writes it; so does the first commit), None if absent."""
    latest: SnapshotEvent | None
    partition_filter: str | None = None
    orphans: OrphanHealth | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON types only."""
        return asdict(self)


def table_health(ctx: StoreContext, name: str, *, partitions: Sequence[PartitionSpec] = (),
                 orphans: bool = False, max_orphan_files: int = DEFAULT_MAX_ORPHAN_FILES,
                 orphans_older_than_millis: int | None = None, now_millis: int | None = None) -> TableHealth:
    """The health of the table of ``ctx`` (``name`` names it in the result): per bucket and partition of the
    partitions ``partitions`` select (all if empty), per table; the orphan listing only with ``orphans``."""
    now = clock.now_millis() if now_millis is None else now_millis
    o = ctx.options
    pk = bool(ctx.schema.primary_keys)
    fio, tp = ctx.file_io, ctx.table_path
    snaps = _snapshots(ctx)
    latest = snaps[-1] if snaps else None
    buckets = _bucket_table(ctx, latest, partitions, o.compaction_file_size(pk))
    bucket_rows = [BucketHealth(**r) for r in buckets.to_pylist()]
    parts = _partitions(bucket_rows)
    consumers = ConsumerManager(fio, tp).consumers()
    latest_id = latest.id if latest else None
    earliest_id = snaps[0].id if snaps else None
    cfg = ExpireConfig.from_options(o)
    tags = TagManager(ctx).all()
    compaction = next((s for s in reversed(snaps) if s.commit_kind == CommitKind.COMPACT), None)
    newest_tag = max(tags, key=lambda t: (t.create_time or datetime.datetime.min, t.snapshot_id), default=None)
    hint = [st for st in fio.list_status(snapshot_dir(tp)) if st.path.rstrip("/").endswith("/EARLIEST")]
    totals = _sums(bucket_rows)
    found = None
    if orphans:
        cutoff = now - DAY_MILLIS if orphans_older_than_millis is None else orphans_older_than_millis
        res = find_orphans(ctx, cutoff, max_orphan_files)
        found = OrphanHealth(files=res.count, bytes=res.total_bytes, listed=res.listed, truncated=res.truncated,
                             older_than_millis=cutoff, sample=res.paths[:20])
    return TableHealth(
        table=name, primary_key=pk, snapshot_id=latest_id, computed_at_millis=now,
        target_file_size=o.target_file_size(pk), small_file_threshold=o.compaction_file_size(pk),
        num_sorted_run_compaction_trigger=o.num_sorted_runs_compaction_trigger(),
        **totals,
        max_sorted_runs=max((b.sorted_runs for b in bucket_rows), default=0),
        partitions=parts, buckets=bucket_rows,
        snapshots=_retention(snaps, cfg.retain_min, cfg.retain_max, cfg.time_retained_ms, latest_id, consumers,
                             not cfg.consumer_changelog_only, now),
        changelogs=_retention(_changelogs(ctx), cfg.changelog_retain_min, cfg.changelog_retain_max,
                              cfg.changelog_time_retained_ms, latest_id, consumers, True, now, changelog=True),
        consumers=[ConsumerHealth(cid, nxt, max(0, (latest_id or 0) - nxt + 1),
                                  earliest_id is not None and nxt < earliest_id)
                   for cid, nxt in sorted(consumers.items())],
        tags=[TagHealth(t.name, t.snapshot_id, t.create_time.isoformat() if t.create_time else None,
                        t.time_retained_ms, _tag_expired(t.expires_at(), now)) for t in tags],
        branches=BranchManager(fio, tp).names(),
        last_compaction=_event(compaction), last_tag=_event(newest_tag.snapshot) if newest_tag else None,
        last_tag_name=newest_tag.name if newest_tag else None,
        last_expiry_millis=hint[0].mtime_millis if hint else None, latest=_event(latest),
        partition_filter=format_partition_texts(partitions) or None, orphans=found)


# ---- per bucket ----------------------------------------------------------------------------------------------------
_FILES_SCHEMA = pa.schema([("partition", pa.binary()), ("bucket", pa.int32()), ("level", pa.int32()),
                           ("file_name", pa.string()), ("size", pa.int64()), ("rows", pa.int64())])


def _bucket_table(ctx: StoreContext, snap: Snapshot | None, specs: Sequence[PartitionSpec],
                  small_threshold: int) -> pa.Table:
    """One row per (partition, bucket) of ``snap`` with the columns of :class:`BucketHealth`."""
    fields = ctx.schema.partition_fields()
    files = _live_files(ctx, snap, specs)
    if specs and files.num_rows:
        parts = pc.unique(files["partition"]).to_pylist()
        wanted = pa.array(sorted(select_partitions(parts, specs, fields)), pa.binary())
        files = files.filter(pc.is_in(files["partition"], value_set=wanted))
    deletions = _dv_cardinalities(ctx, snap)
    if deletions.num_rows:
        files = files.join(deletions, "file_name", join_type="left outer")
    else:
        files = files.append_column("deleted", pa.nulls(files.num_rows, pa.int64()))
        files = files.append_column("dv_unknown", pa.nulls(files.num_rows, pa.int64()))
    for name in ("deleted", "dv_unknown"):
        files = files.set_column(files.schema.get_field_index(name), name, pc.fill_null(files[name], 0))
    files = files.append_column("small", pc.cast(pc.less(files["size"], small_threshold), pa.int64()))
    files = files.append_column("l0", pc.cast(pc.equal(files["level"], 0), pa.int64()))
    files = files.append_column("postpone", pc.cast(pc.equal(files["bucket"], POSTPONE_BUCKET), pa.int64()))
    keys = ["partition", "bucket"]
    per = files.group_by(keys).aggregate([
        ("size", "count"), ("rows", "sum"), ("size", "sum"), ("l0", "sum"), ("level", "max"), ("small", "sum"),
        ("deleted", "sum"), ("dv_unknown", "sum"), ("postpone", "sum")])
    # sorted runs: every level-0 file, plus one per other level that holds files
    levels = files.filter(pc.greater(files["level"], 0)).group_by([*keys, "level"]).aggregate([])
    upper = levels.group_by(keys).aggregate([("level", "count")]).rename_columns([*keys, "upper_runs"])
    per = per.join(upper, keys, join_type="left outer")
    upper_runs = pc.fill_null(per["upper_runs"], 0)
    count = per["size_count"]
    rows = per["rows_sum"]
    decode = PartitionDecoder([f.type for f in ctx.schema.partition_fields()])
    default = ctx.options.partition_default_name()
    names = [f.name for f in fields]
    texts = {p: "/".join(f"{k}={value_text(v, default)}" for k, v in zip(names, decode(p), strict=True))
             for p in set(per["partition"].to_pylist())}
    out = pa.table({
        "partition": pa.array([texts[p] for p in per["partition"].to_pylist()], pa.string()),
        "bucket": per["bucket"],
        "files": count,
        "rows": rows,
        "bytes": per["size_sum"],
        "level0_files": per["l0_sum"],
        "sorted_runs": pc.add(per["l0_sum"], upper_runs),
        "max_level": per["level_max"],
        "small_files": per["small_sum"],
        "small_file_ratio": _ratio(per["small_sum"], count),
        "deleted_rows": per["deleted_sum"],
        "deletion_vector_ratio": _ratio(per["deleted_sum"], rows),
        "dv_unknown": per["dv_unknown_sum"],
        "postpone_files": per["postpone_sum"],
    })
    return out.sort_by([("partition", "ascending"), ("bucket", "ascending")])


def _ratio(num: pa.ChunkedArray, den: pa.ChunkedArray) -> pa.ChunkedArray:
    """``num / den`` as doubles, 0 where ``den`` is 0."""
    d = pc.cast(den, pa.float64())
    return pc.if_else(pc.equal(d, 0.0), 0.0, pc.divide(pc.cast(num, pa.float64()), d))


def _dv_cardinalities(ctx: StoreContext, snap: Snapshot | None) -> pa.Table:
    """``file_name``, ``deleted`` (rows its deletion vector deletes), ``dv_unknown`` (1: the index manifest gives
    no cardinality, as Paimon Java 1.0 writes it: the vector was counted in its DV index file, a metadata file) of
    every data file that has a deletion vector in ``snap``'s index manifest."""
    names: list[str] = []
    deleted: list[int] = []
    unknown: list[int] = []
    uncounted: list[tuple[IndexFileMeta, list[DeletionVectorMeta]]] = []
    for ie in ctx.index_entries(snap):
        f = ie.index_file
        if f.index_type != DELETION_VECTORS_INDEX or not f.dv_ranges:
            continue
        missing = [dv for dv in f.dv_ranges if dv.cardinality is None]
        if missing:
            uncounted.append((f, missing))
        for dv in f.dv_ranges:  # one per data file with deletions: far fewer than the data files
            if dv.cardinality is not None:
                names.append(dv.data_file_name)
                deleted.append(dv.cardinality)
                unknown.append(0)

    def count(item: tuple[IndexFileMeta, list[DeletionVectorMeta]]) -> dict[str, int]:
        vectors = read_dv_index(ctx.file_io, index_file_path(ctx.table_path, item[0]), item[1])
        return {name: len(bitmap) for name, bitmap in vectors.items()}

    for counted in parallel_map(count, uncounted, 8):
        names.extend(counted)
        deleted.extend(counted.values())
        unknown.extend([1] * len(counted))
    return pa.table({"file_name": pa.array(names, pa.string()), "deleted": pa.array(deleted, pa.int64()),
                     "dv_unknown": pa.array(unknown, pa.int64())})


def _live_files(ctx: StoreContext, snap: Snapshot | None, specs: Sequence[PartitionSpec] = ()) -> pa.Table:
    """``partition``, ``bucket``, ``level``, ``file_name``, ``size``, ``rows`` of every live data file of ``snap``:
    the manifests read into Arrow (:func:`~table_engine.format.avro_data_file.read_avro_data`, DataFusion's reader)
    and their ADD and DELETE entries merged with Arrow (a file is live when added more often than deleted: an
    identity is added once, deleted at most once after). With ``specs``, manifests whose partition statistics
    exclude every spec are not read (the caller still filters the files)."""
    if snap is None:
        return _FILES_SCHEMA.empty_table()
    metas = read_manifest_metas(ctx.file_io, ctx.table_path, snap)
    if specs:
        types = [f.type for f in ctx.schema.partition_fields()]
        metas = [m for m in metas if _may_hold(m, specs, types)]
    paths = [manifest_path(ctx.table_path, m.file_name) for m in metas]

    def read(path: str) -> pa.Table:
        try:
            t = read_avro_data(ctx.file_io, path, ["_KIND", "_PARTITION", "_BUCKET", "_FILE"])
        except FileNotFoundError:
            raise MissingFileError("manifest file", path, snap.id) from None
        f = t["_FILE"]
        return pa.table({
            "partition": pc.cast(t["_PARTITION"], pa.binary()), "bucket": pc.cast(t["_BUCKET"], pa.int32()),
            "level": pc.cast(pc.struct_field(f, "_LEVEL"), pa.int32()),
            "file_name": pc.cast(pc.struct_field(f, "_FILE_NAME"), pa.string()),
            "size": pc.cast(pc.struct_field(f, "_FILE_SIZE"), pa.int64()),
            "rows": pc.cast(pc.struct_field(f, "_ROW_COUNT"), pa.int64()),
            "sign": pc.if_else(pc.equal(t["_KIND"], 0), 1, -1).cast(pa.int64())})

    tables = parallel_map(read, paths, 8) if len(paths) > 1 else [read(p) for p in paths]
    if not tables:
        return _FILES_SCHEMA.empty_table()
    keys = ["partition", "bucket", "level", "file_name", "size", "rows"]
    merged = pa.concat_tables(tables).group_by(keys).aggregate([("sign", "sum")])
    return merged.filter(pc.greater(merged["sign_sum"], 0)).select(keys)


def _may_hold(meta: ManifestFileMeta, specs: Sequence[PartitionSpec], types: Sequence[DataType]) -> bool:
    """May the manifest ``meta`` list files of a partition some spec selects (by its partition min/max)?"""
    try:
        lows = decode_row(meta.partition_stats.min_values, types)
        highs = decode_row(meta.partition_stats.max_values, types)
    except Exception:  # noqa: BLE001 - statistics we cannot decode prove nothing
        return True
    index = {f.name: i for i, f in enumerate(specs[0].fields)} if specs else {}

    def within(name: str, value: Any) -> bool:
        low, high = lows[index[name]], highs[index[name]]
        return value is None or low is None or high is None or bool(low <= value <= high)

    try:
        return any(all(within(k, v) for k, v in spec.items) for spec in specs)
    except TypeError:  # values that do not compare prove nothing
        return True


def _partitions(buckets: Sequence[BucketHealth]) -> list[PartitionHealth]:
    groups: dict[str, list[BucketHealth]] = {}
    for b in buckets:
        groups.setdefault(b.partition, []).append(b)
    out = []
    for part, bs in groups.items():
        post = [b for b in bs if b.bucket == POSTPONE_BUCKET]
        out.append(PartitionHealth(
            partition=part, buckets=len(bs) - len(post), **_sums(bs),
            max_sorted_runs=max(b.sorted_runs for b in bs if b.bucket != POSTPONE_BUCKET) if len(post) < len(bs)
            else 0,
            postpone_rows=sum(b.rows for b in post), postpone_bytes=sum(b.bytes for b in post)))
    return out


def _sums(bs: Sequence[BucketHealth]) -> dict[str, Any]:
    """The :class:`HealthTotals` of the buckets ``bs`` but ``max_sorted_runs`` (its callers differ on the postpone
    bucket): the counters summed, the ratios recomputed from the sums."""
    out: dict[str, Any] = {name: sum(getattr(b, name) for b in bs) for name in _SUMMED}
    for ratio, (num, den) in _RATIOS.items():
        out[ratio] = out[num] / out[den] if out[den] else 0.0
    return out


# ---- per table -----------------------------------------------------------------------------------------------------
def _snapshots(ctx: StoreContext) -> list[Snapshot]:
    """The live snapshots, oldest first (read in parallel; one expired meanwhile is left out)."""
    def read(i: int) -> Snapshot | None:
        try:
            return read_snapshot(ctx.file_io, ctx.table_path, i)
        except SnapshotNotExistError:
            return None
    ids = list_snapshot_ids(ctx.file_io, ctx.table_path)
    return [s for s in parallel_map(read, ids, 8) if s is not None]


def _changelogs(ctx: StoreContext) -> list[Snapshot]:
    ids = list_changelog_ids(ctx.file_io, ctx.table_path)
    found = parallel_map(lambda i: read_changelog(ctx.file_io, ctx.table_path, i), ids, 8)
    return [c for c in found if c is not None]


def _retention(items: Sequence[Snapshot], retain_min: int, retain_max: int, time_retained: int,
               latest_id: int | None, consumers: dict[str, int], consumers_hold: bool, now: int,
               changelog: bool = False) -> RetentionHealth:
    """How ``items`` (snapshots, or long-lived changelogs with ``changelog``; ids relative to the latest snapshot
    ``latest_id``) stand against their retention, by the rules of :mod:`~table_engine.store.lifecycle.expire`:
    beyond ``max`` they expire; beyond ``min`` a snapshot expires when the one after it is older than the
    retention, a changelog when it is; consumers hold theirs."""
    if not items or latest_id is None:
        return RetentionHealth(len(items), None, None, None, retain_min, retain_max, time_retained, 0, 0, 0)
    first = items[0].id
    low = max(latest_id - retain_max + 1, first)
    times = {s.id: s.time_millis for s in items}
    rule = _changelog_end if changelog else _snapshot_end
    free = rule(times, first, items[-1].id, low, latest_id - retain_min + 1, now - time_retained)
    limit = min(consumers.values()) if consumers_hold and consumers else None
    end = free if limit is None else rule(times, first, items[-1].id, low,
                                          min(latest_id - retain_min + 1, limit), now - time_retained)
    return RetentionHealth(
        count=len(items), earliest_id=first, latest_id=items[-1].id, earliest_time_millis=items[0].time_millis,
        retain_min=retain_min, retain_max=retain_max, time_retained_millis=time_retained,
        expirable=sum(1 for s in items if s.id < end), over_max=sum(1 for s in items if s.id < low),
        held_by_consumers=sum(1 for s in items if end <= s.id < free))


def _snapshot_end(times: dict[int, int], first: int, last: int, low: int, max_exclusive: int,
                  older_than: int) -> int:
    """The first snapshot id snapshot expiry keeps (``_expire_snapshots``)."""
    del last
    end = max_exclusive
    for sid in range(low, max_exclusive):
        nxt = times.get(sid + 1)
        if nxt is not None and older_than <= nxt:
            return sid
    return max(end, first)


def _changelog_end(times: dict[int, int], first: int, last: int, low: int, max_exclusive: int,
                   older_than: int) -> int:
    """The first changelog id changelog expiry keeps (``expire_changelogs``)."""
    max_exclusive = min(max_exclusive, last)
    if max_exclusive <= first:
        return first
    for cid in range(low, max_exclusive + 1):
        t = times.get(cid)
        if t is not None and older_than <= t:
            return max(cid, first)
    return max_exclusive


def _event(snap: Snapshot | None) -> SnapshotEvent | None:
    if snap is None:
        return None
    return SnapshotEvent(snap.id, str(snap.commit_kind), snap.time_millis, snap.commit_user,
                         dict(snap.properties) if snap.properties else None)


def _tag_expired(expires_at: datetime.datetime | None, now: int) -> bool:
    if expires_at is None:
        return False
    return expires_at <= datetime.datetime.fromtimestamp(now / 1000)
