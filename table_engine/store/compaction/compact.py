"""Compaction of primary-key tables, per (partition, bucket): restore the bucket's levels from its live files, pick a
unit (universal picker, or a forced full compaction), rewrite it, and describe the change as a commit message.

* :class:`BucketCompactor` compacts one bucket: the manager rules of Paimon's ``MergeTreeCompactManager`` (skip a
  unit that is empty or one file already at its output level; drop -U/-D records only when the output level is not
  0 and at least the highest non-empty level, i.e. nothing older stays outside the unit).
* :class:`WriterCompaction` is a writer's state for one bucket: its levels and the compaction changes not yet
  handed over. An output of an earlier compaction of the same commit that a later compaction consumes is deleted
  at once (it was never committed), as in Paimon's ``MergeTreeWriter``.
* :func:`compact_table` is the dedicated compaction job: buckets are compacted concurrently, one task per bucket,
  and all results are committed as one COMPACT snapshot. A concurrent commit that removed an input file makes the
  commit fail with CommitConflictError; this job's new files are deleted and the table is unchanged. Append tables
  go through the same plan and job, each bucket by
  :func:`table_engine.store.compaction.append_compact.compact_append_bucket`.

With ``deletion-vectors.enabled`` (merge-on-write) a bucket's compaction is lookup compaction: level 0 is always
pushed up (:mod:`table_engine.lsm.compaction.force_up`), -U/-D records are always dropped, files are read with their
deletion vectors applied, older versions of the keys moved out of level 0 are marked in the vectors of the files
above (:mod:`table_engine.store.compaction.dv_lookup`), rewritten files lose their vectors, and the bucket's new DV
index file travels with the compaction in the commit message.

``merge-engine = first-row`` compacts with lookup too (Paimon's ``needLookup``): level 0 is always pushed up and a
new key that a level above the output level holds already is dropped
(:class:`~table_engine.lsm.compaction.first_row.FirstRowLookup`), so each key lives in one level above 0 and batch
reads, which skip level 0 of first-row tables, see every key once.

Memory: without deletion vectors, lookup (first-row) and a lookup / full-compaction changelog producer, a unit is
rewritten by streaming (:class:`~table_engine.lsm.compaction.rewriter.Streaming`): each sorted run is read in chunks
of :data:`STREAM_CHUNK_ROWS` rows and merged chunk by chunk, output files are written as they fill, so a bucket
larger than memory compacts in memory bounded by (sorted runs x chunk) + one target-file-size file. Those three
cases still read each merged section into memory whole (they look keys up or compare a key's versions across the
section).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import (
    CHANGELOG_PRODUCER_ROW_DEDUPLICATE,
    CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS,
    COMPACTION_FORCE_REWRITE_ALL_FILES,
    COMPACTION_INCREMENTAL_SIZE_THRESHOLD,
    COMPACTION_MAX_SIZE_AMPLIFICATION,
    COMPACTION_OFFPEAK_END_HOUR,
    COMPACTION_OFFPEAK_RATIO,
    COMPACTION_OFFPEAK_START_HOUR,
    COMPACTION_OPTIMIZATION_INTERVAL,
    COMPACTION_SIZE_RATIO,
    COMPACTION_TOTAL_SIZE_THRESHOLD,
    RECORD_LEVEL_EXPIRE_TIME,
    RECORD_LEVEL_TIME_FIELD,
    RECORD_LEVEL_TIME_FIELD_TYPE,
)
from table_engine.errors import CommandError, CommitConflictError, SchemaError, UnsupportedError, naming_snapshot
from table_engine.features import Op, require
from table_engine.format.binary_row import decode_row
from table_engine.format.bucket import POSTPONE_BUCKET
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.feature_detection import data_file_features
from table_engine.format.index_manifest import IndexFileMeta
from table_engine.format.snapshot import snapshot_properties
from table_engine.io.executor import parallel_map
from table_engine.lsm.compaction.changelog import ChangelogHook, FullCompactionChangelog, LookupChangelog
from table_engine.lsm.compaction.expire import RecordLevelExpire
from table_engine.lsm.compaction.first_row import FirstRowLookup
from table_engine.lsm.compaction.force_up import pick_force_up_level0
from table_engine.lsm.compaction.rewriter import CompactResult, CompactRewriter, Streaming
from table_engine.lsm.compaction.universal import (
    CompactUnit,
    OffPeakHours,
    UniversalCompaction,
    pick_full_compaction,
)
from table_engine.lsm.levels import KeyCodec, Levels
from table_engine.lsm.merge_engines import MergeCapabilities, MergeFunction
from table_engine.lsm.sort import MergeOrder
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.append_compact import AppendCompactionSettings, compact_append_bucket
from table_engine.store.compaction.clustering import Clustering, cluster_partition
from table_engine.store.compaction.data_evolution_compact import compact_data_evolution_bucket
from table_engine.store.compaction.dv_lookup import DeletionVectorLookup
from table_engine.store.compaction.select import select_compaction, table_buckets
from table_engine.store.compaction.sort_compact import SortOrder, check_sortable, sort_partition
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors, dv_index_files
from table_engine.store.kv_file_writer import DataFileWriter
from table_engine.store.partition_spec import PartitionSpecs
from table_engine.store.paths import file_path_in
from table_engine.store.reading.on_latest import on_latest
from table_engine.store.reading.read import ReadContext, iter_data_file, read_context, read_data_file
from table_engine.store.reading.scan import live_entries

log = logging.getLogger(__name__)

_REPLANS = 5
"""How often a dedicated compaction is planned again when concurrent commits changed its input while it ran."""

_COMPACT_THREADS = min(4, os.cpu_count() or 1)
#: rows per chunk a streaming compaction reads from each sorted run (memory: runs x chunk + one output file)
STREAM_CHUNK_ROWS = 65536


@dataclass(frozen=True)
class ChangelogSettings:
    """``changelog-producer`` lookup / full-compaction: how compaction produces changelog."""

    producer: ChangelogProducer
    compare: tuple[str, ...] | None
    """``changelog-producer.row-deduplicate``: the columns compared (None: every update is emitted)."""
    insert_only: bool
    """The merge engine's changelog is insert-only (:attr:`MergeCapabilities.changelog_kinds`: ``first-row``)."""

    @staticmethod
    def of(ctx: StoreContext) -> ChangelogSettings | None:
        o = ctx.options
        producer = o.changelog_producer()
        if producer not in (ChangelogProducer.LOOKUP, ChangelogProducer.FULL_COMPACTION):
            return None
        compare = None
        if o.get(CHANGELOG_PRODUCER_ROW_DEDUPLICATE):
            ignored = set(o.get(CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS) or ())
            unknown = sorted(ignored - set(ctx.schema.field_names()))
            if unknown:
                raise SchemaError(f"{CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS.key} names unknown columns "
                                  f"{unknown} of {ctx.table_path}")
            compare = tuple(n for n in ctx.schema.field_names() if n not in ignored)
        return ChangelogSettings(producer, compare, _capabilities(ctx).insert_only_changelog)


@dataclass(frozen=True)
class CompactionSettings:
    """The compaction options of a table, resolved once."""

    num_levels: int
    picker: UniversalCompaction
    min_file_size: int
    stop_trigger: int
    force_rewrite_all: bool
    expire: RecordLevelExpire | None
    deletion_vectors: bool = False
    bitmap64: bool = False
    changelog: ChangelogSettings | None = None
    lookup: bool = False
    """Lookup compaction (Paimon's ``needLookup``): level 0 is always pushed up."""
    first_wins: bool = False
    """A key's first record is its value (:attr:`MergeCapabilities.first_wins`): lookup compaction drops new records
    of keys a level above holds."""

    @staticmethod
    def of(ctx: StoreContext) -> CompactionSettings:
        o = ctx.options
        picker = UniversalCompaction(
            max_size_amp=o.get(COMPACTION_MAX_SIZE_AMPLIFICATION), size_ratio=o.get(COMPACTION_SIZE_RATIO),
            num_run_trigger=o.num_sorted_runs_compaction_trigger(),
            optimization_interval_ms=o.get(COMPACTION_OPTIMIZATION_INTERVAL),
            total_size_threshold=o.get(COMPACTION_TOTAL_SIZE_THRESHOLD),
            incremental_size_threshold=o.get(COMPACTION_INCREMENTAL_SIZE_THRESHOLD),
            off_peak=OffPeakHours.create(o.get(COMPACTION_OFFPEAK_START_HOUR), o.get(COMPACTION_OFFPEAK_END_HOUR),
                                         o.get(COMPACTION_OFFPEAK_RATIO)))
        unit = o.get(RECORD_LEVEL_TIME_FIELD_TYPE).value if RECORD_LEVEL_TIME_FIELD_TYPE.is_set(o.raw) else None
        expire = RecordLevelExpire.create(o.get(RECORD_LEVEL_EXPIRE_TIME), o.get(RECORD_LEVEL_TIME_FIELD), unit,
                                          ctx.schema, ctx.schema_by_id)
        return CompactionSettings(o.num_levels(), picker, o.compaction_file_size(True),
                                  o.num_sorted_runs_stop_trigger(), o.get(COMPACTION_FORCE_REWRITE_ALL_FILES), expire,
                                  o.deletion_vectors_enabled(), o.deletion_vectors_bitmap64(),
                                  ChangelogSettings.of(ctx), ctx.need_lookup(), _capabilities(ctx).first_wins)


def memory_bound_reason(ctx: StoreContext) -> str | None:
    """What makes a compaction of this primary-key table read a merged section of a bucket into memory (None: its
    buckets are merged by streaming, in memory bounded by a chunk per sorted run, whatever their size). Append
    tables: None (a compaction rewrites groups of small files of about ``target-file-size``)."""
    if not ctx.schema.primary_keys:
        return None
    if ctx.options.deletion_vectors_enabled():
        return "deletion-vectors.enabled"
    if _capabilities(ctx).first_wins:
        return "the first-row merge engine"
    changelog = ChangelogSettings.of(ctx)
    if changelog is not None:
        return f"changelog-producer {changelog.producer.value}"
    return None


def _capabilities(ctx: StoreContext) -> MergeCapabilities:
    caps = ctx.merge_capabilities
    if caps is None:
        raise UnsupportedError(f"compaction of append table {ctx.table_path} is not supported")
    return caps


class BucketCompactor:
    """Compacts the files of one (partition, bucket). Buckets are independent: one compactor per task/thread."""

    def __init__(self, ctx: StoreContext, settings: CompactionSettings, partition: bytes, bucket: int,
                 track: Callable[[str], None] | None = None, read_ctx: ReadContext | None = None,
                 dv_index_files: Sequence[IndexFileMeta] = ()) -> None:
        schema = ctx.schema
        if not schema.primary_keys:
            raise UnsupportedError(f"compaction of append table {ctx.table_path} is not supported")
        self.ctx = ctx
        self.settings = settings
        self.partition = partition
        self.bucket = bucket
        self.partition_values = decode_row(partition, [f.type for f in schema.partition_fields()])
        self.codec = KeyCodec([f.type for f in schema.key_fields()])
        self.read_ctx = read_ctx or read_context(ctx)
        self.file_writer = DataFileWriter(ctx, track)
        self.bucket_path = self.file_writer.bucket_path(self.partition_values, bucket)
        self.order = MergeOrder(tuple(schema.trimmed_primary_keys()), self.read_ctx.sequence_fields,
                                self.read_ctx.sequence_descending)
        self.chunk_rows = STREAM_CHUNK_ROWS
        self.dvs = BucketDeletionVectors(ctx.file_io, ctx.table_path, dv_index_files, settings.bitmap64, track) \
            if settings.deletion_vectors else None

    def levels(self, files: Sequence[DataFileMeta]) -> Levels:
        where = f" (bucket {self.bucket} of {self.ctx.table_path})"
        return Levels(files, self.settings.num_levels, self.codec, where)

    def file_path(self, f: DataFileMeta) -> str:
        return file_path_in(self.ctx.table_path, self.ctx.schema, self.partition_values, self.bucket, f,
                            self.ctx.options.partition_default_name())

    def pick(self, levels: Levels, full: bool, now_ms: int | None = None) -> CompactUnit | None:
        """The unit to compact next (None: nothing to do)."""
        s = self.settings
        runs = levels.sorted_runs()
        if full:
            needs_rewrite = s.expire.is_expire_file if s.expire is not None else None
            return pick_full_compaction(levels.number_of_levels, runs, needs_rewrite, s.force_rewrite_all)
        if s.lookup:  # lookup compaction: level 0 always goes up
            unit = pick_force_up_level0(s.picker, levels.number_of_levels, runs, now_ms)
        else:
            unit = s.picker.pick(levels.number_of_levels, runs, now_ms)
        if unit is None or not unit.files or (len(unit.files) == 1 and unit.files[0].level == unit.output_level):
            return None
        return unit

    def compact(self, levels: Levels, full: bool = False, now_ms: int | None = None
                ) -> tuple[Levels, CompactResult] | None:
        """Pick and run one compaction; the new levels and what changed, or None when nothing was picked."""
        unit = self.pick(levels, full, now_ms)
        if unit is None:
            return None
        drop_delete = unit.output_level != 0 and (unit.output_level >= levels.non_empty_highest_level()
                                                  or self.dvs is not None)
        lookup: DeletionVectorLookup | FirstRowLookup | None = None
        if self.settings.first_wins:
            lookup = FirstRowLookup(levels, self._read_keys, self.order.key_cols, self.codec)
        elif self.dvs is not None:
            lookup = DeletionVectorLookup(levels, self.dvs, self._read_live, self.order.key_cols, self.codec,
                                          self._merge_function(), self.order, self._newest_wins())
        streaming = Streaming(self._read_chunks, self.file_writer.target_file_size) if self.dvs is None else None
        rewriter = CompactRewriter(self.codec, self._read_file, self._write_files, self._merge_function(),
                                   self.order, self.settings.min_file_size, levels.max_level, self.settings.expire,
                                   self.settings.force_rewrite_all, lookup, self._changelog_hook(levels), streaming)
        result = rewriter.compact(unit, drop_delete)
        if self.dvs is not None:  # rewritten files take their vectors with them; upgraded ones keep them
            kept = {f.file_name for f in result.after}
            self.dvs.drop(f.file_name for f in result.before if f.file_name not in kept)
        log.debug("compacted %d file(s) of bucket %d of %s into %d file(s) at level %d", len(result.before),
                  self.bucket, self.ctx.table_path, len(result.after), unit.output_level)
        return levels.update(result.before, result.after), result

    def _changelog_hook(self, levels: Levels) -> ChangelogHook | None:
        ch = self.settings.changelog
        if ch is None:
            return None
        if ch.producer is ChangelogProducer.LOOKUP:
            return LookupChangelog(levels, self._read_file, self._write_changelog, self._merge_function(),
                                   self.order, self.codec, compare=ch.compare, insert_only=ch.insert_only,
                                   newest_wins=self._newest_wins())
        return FullCompactionChangelog(levels.max_level, self._read_file, self._write_changelog,
                                       self.order.key_cols, compare=ch.compare)

    def _write_changelog(self, kv: pa.Table, level: int) -> list[DataFileMeta]:
        return self.file_writer.write_changelog(self.bucket_path, kv, level, FileSource.COMPACT)

    def _merge_function(self) -> MergeFunction:
        assert self.read_ctx.merge_function is not None
        return self.read_ctx.merge_function

    def _newest_wins(self) -> bool:
        return self._merge_function().capabilities.newest_wins and not self.read_ctx.sequence_fields

    def _read_file(self, f: DataFileMeta) -> pa.Table:
        t = read_data_file(self.read_ctx, self.file_path(f), f, self.ctx.schema.fields, system=True)
        mask = self.dvs.keep_mask(f, t.num_rows) if self.dvs is not None else None
        return t if mask is None else t.filter(pa.array(mask))

    def _read_chunks(self, f: DataFileMeta) -> Iterator[pa.Table]:
        """A data file in chunks of :data:`STREAM_CHUNK_ROWS` rows (streaming compaction; no deletion vectors)."""
        return iter_data_file(self.read_ctx, self.file_path(f), f, self.ctx.schema.fields, system=True,
                              batch_rows=self.chunk_rows)

    def _read_live(self, f: DataFileMeta, full: bool) -> tuple[pa.Table, npt.NDArray[np.int64]]:
        fields = self.ctx.schema.fields if full else self.ctx.schema.key_fields()
        t = read_data_file(self.read_ctx, self.file_path(f), f, fields, system=True, with_seq=full)
        mask = self.dvs.keep_mask(f, t.num_rows) if self.dvs is not None else None
        if mask is None:
            return t, np.arange(t.num_rows, dtype=np.int64)
        return t.filter(pa.array(mask)), np.flatnonzero(mask).astype(np.int64)

    def _read_keys(self, f: DataFileMeta) -> pa.Table:
        return read_data_file(self.read_ctx, self.file_path(f), f, self.ctx.schema.key_fields(), system=False)

    def _write_files(self, kv: pa.Table, level: int) -> list[DataFileMeta]:
        return self.file_writer.write_kv(self.bucket_path, kv, level, FileSource.COMPACT)


@dataclass
class WriterCompaction:
    """A writer's compaction state of one bucket: levels (committed + new files) and pending compaction changes."""

    compactor: BucketCompactor
    levels: Levels
    before: dict[str, DataFileMeta] = field(default_factory=dict)  # by file name, as Paimon's compactBefore
    after: list[DataFileMeta] = field(default_factory=list)
    dirty_since_full: bool = False
    changelog: list[DataFileMeta] = field(default_factory=list)

    def add_new_files(self, files: Sequence[DataFileMeta]) -> None:
        if files:
            self.levels = self.levels.update([], files)
            self.dirty_since_full = True

    def must_wait(self) -> bool:
        """More sorted runs than ``num-sorted-run.stop-trigger``: compact before accepting more writes."""
        return self.levels.number_of_sorted_runs() > self.compactor.settings.stop_trigger

    def compact(self, full: bool = False) -> bool:
        out = self.compactor.compact(self.levels, full)
        if full:
            self.dirty_since_full = False
        if out is None:
            return False
        self.levels, result = out
        self.changelog.extend(result.changelog)
        after_names = {f.file_name for f in result.after}
        pending = {(f.file_name, f.level): f for f in self.after}
        for f in result.before:
            if pending.pop((f.file_name, f.level), None) is not None:
                # an output of this commit's earlier compaction: never committed, so delete it now (unless the
                # file lives on, upgraded, or is the upgrade of a file this commit removes)
                if f.file_name not in self.before and f.file_name not in after_names:
                    self.compactor.ctx.file_io.try_delete(self.compactor.file_path(f))
            else:
                self.before[f.file_name] = f
        self.after = [*pending.values(), *result.after]
        return True

    def drain_changelog(self) -> list[DataFileMeta]:
        """Changelog files of the compactions since the last call (lookup / full-compaction producers)."""
        out, self.changelog = self.changelog, []
        return out

    def drain(self) -> tuple[list[DataFileMeta], list[DataFileMeta]]:
        before, after = list(self.before.values()), self.after
        self.before, self.after = {}, []
        return before, after

    def drain_index_files(self) -> tuple[list[IndexFileMeta], list[IndexFileMeta]]:
        """The bucket's new deletion-vector index file (if the vectors changed) and the ones it replaces."""
        dvs = self.compactor.dvs
        return dvs.flush() if dvs is not None else ([], [])


# ---- the dedicated job -------------------------------------------------------------------------------------------
def compact_table(ctx: StoreContext, commit: FileStoreCommit, full: bool = False,
                  partitions: PartitionSpecs | None = None,
                  idle_partitions_older_than_ms: int | None = None,
                  properties: Mapping[str, str] | None = None,
                  buckets: Collection[int] | str | None = None, order: SortOrder | None = None) -> int | None:
    """Compact every bucket (of the selected partitions, of ``buckets`` only when given) and commit (with snapshot
    ``properties``); the COMPACT snapshot id, or None. With ``order``: a sort compaction of each selected partition
    (:mod:`table_engine.store.compaction.sort_compact`)."""
    snapshot_properties(properties)  # bad properties fail before anything is written
    if order is not None:
        check_sortable(ctx, order)
        if idle_partitions_older_than_ms is not None:
            raise CommandError("sort compact do not support 'partition_idle_time'.")
        if buckets is not None:
            raise CommandError("Specifying buckets is not supported for sort compact.")
    for attempt in range(1, _REPLANS + 1):
        base = ctx.latest_snapshot()
        messages: list[CommitMessage] = []
        try:
            messages = compaction_messages(ctx, full, partitions, idle_partitions_older_than_ms, buckets, order)
            if not messages:
                return None
            return commit.commit(messages, properties=properties)
        except (CommitConflictError, FileNotFoundError) as e:
            commit.abort(messages)
            now = ctx.latest_snapshot()
            if now is None or base is None or now.id == base.id:
                raise  # nothing moved: a file of the table itself is missing (or a real conflict)
            if attempt == _REPLANS:
                raise CommitConflictError(
                    f"compaction of {ctx.table_path}: concurrent commits changed its input {attempt} times while it "
                    f"ran ({e}); nothing was committed, run it again") from None
            log.info("compaction of %s planned again on snapshot %d: its input changed under it (%s)",
                     ctx.table_path, now.id, e)
        except BaseException:
            commit.abort(messages)
            raise
    return None  # pragma: no cover (the loop returns or raises)


def compact_invisible_level0(ctx: StoreContext, new_commit: Callable[[], FileStoreCommit], sid: int | None,
                             overwritten: bool, dropped: Collection[tuple[bytes, int]] = ()) -> int | None:
    """After a commit (snapshot ``sid``) of a table whose batch reads skip level 0 (first-row, deletion vectors),
    compact what its writers' compaction left on level 0 and commit that with a committer of ``new_commit``; the
    COMPACT snapshot id, else ``sid``. Not with ``write-only``.

    An OVERWRITE commit carries no compaction (the writers compacted against the files it replaces): every bucket is
    compacted, as Paimon commits the compaction of an overwrite right after it. A commit whose writers' compaction
    was dropped (``dropped``: several writers compacted one bucket, or a concurrent commit invalidated it) gets its
    buckets' level 0 compacted. A conflict leaves the commit as it is (the next compaction makes it visible)."""
    o = ctx.options
    if sid is None or o.write_only() or not ctx.schema.primary_keys \
            or not (o.deletion_vectors_enabled() or ctx.batch_scan_skip_level0()):
        return sid  # append tables read level 0: nothing to make visible
    if overwritten:
        messages = compaction_messages(ctx)
    elif dropped:
        messages = compact_buckets(ctx, [b for b in plan_compaction(ctx) if (b.partition, b.bucket) in dropped
                                         and any(f.level == 0 for f in b.files)])
    else:
        return sid
    return _commit_follow_up(ctx, new_commit, sid, messages, "compaction")


def compact_written_append_partitions(ctx: StoreContext, new_commit: Callable[[], FileStoreCommit], sid: int | None,
                                      partitions: Collection[bytes]) -> int | None:
    """After a commit (snapshot ``sid``) of an unaware-bucket append table by several writers (Spark tasks, which
    do not compact: all of them write bucket 0 of a partition, so their compactions would collide), run the append
    compaction once for the ``partitions`` they wrote, as Paimon's compaction coordinator does for such tables; the
    COMPACT snapshot id, else ``sid``. Not with ``write-only``. A conflict leaves the commit as it is."""
    if sid is None or ctx.options.write_only() or ctx.options.clustering_incremental() or ctx.schema.primary_keys \
            or not partitions:
        return sid  # a clustering table is compacted by clustering only
    wanted = set(partitions)
    messages = compact_buckets(ctx, [b for b in plan_compaction(ctx) if b.partition in wanted])
    return _commit_follow_up(ctx, new_commit, sid, messages, "append compaction")


def _commit_follow_up(ctx: StoreContext, new_commit: Callable[[], FileStoreCommit], sid: int,
                      messages: list[CommitMessage], what: str) -> int:
    """Commit the follow-up compaction ``messages`` of snapshot ``sid``; the COMPACT snapshot id, else ``sid``. A
    conflict (a concurrent commit changed the files) leaves the commit as it is; any other failure is raised. Either
    way, the compaction's new files are deleted when it is not committed."""
    if not messages:
        return sid
    commit = new_commit()
    try:
        return commit.commit(messages) or sid
    except CommitConflictError as e:
        commit.abort(messages)
        log.warning("%s after snapshot %s of %s failed: %s", what, sid, ctx.table_path, e)
        return sid
    except BaseException:
        commit.abort(messages)
        raise


@dataclass(frozen=True)
class BucketFiles:
    """The live files of one (partition, bucket) to compact."""

    partition: bytes
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    dv_index_files: tuple[IndexFileMeta, ...] = ()
    snapshot_id: int | None = None
    """The snapshot the files are from (named when one of them is missing)."""


def plan_compaction(ctx: StoreContext, partitions: PartitionSpecs | None = None,
                    idle_partitions_older_than_ms: int | None = None,
                    with_postponed: bool = False, buckets: Collection[int] | str | None = None) -> list[BucketFiles]:
    """The buckets of the latest snapshot (of the selected partitions, of ``buckets`` of a fixed-bucket table only
    when given: :mod:`table_engine.store.compaction.select`) with their live files. The postponed files of a
    postpone bucket table (bucket -2) are left out unless ``with_postponed``: only the postpone compaction
    (:mod:`table_engine.store.writing.postpone_compact`) may take them."""
    wanted = table_buckets(ctx, buckets)  # a bad bucket list fails before anything is read
    snapshot = ctx.latest_snapshot()
    files_of: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    total_buckets: dict[tuple[bytes, int], int] = {}
    for e in live_entries(ctx.file_io, ctx.table_path, snapshot) if snapshot is not None else ():
        if e.bucket == POSTPONE_BUCKET and not with_postponed:
            continue
        files_of.setdefault((e.partition, e.bucket), []).append(e.file)
        total_buckets[(e.partition, e.bucket)] = e.total_buckets
    keys = select_compaction(ctx, files_of, partitions, idle_partitions_older_than_ms, wanted)  # checks the specs
    if snapshot is None or not keys:
        return []
    # the capability gate on the files a compaction would rewrite (row ids, column files, unknown kinds)
    require(ctx.table_path, data_file_features(f for key in keys for f in files_of[key]), Op.MAINTAIN)
    dvs = dv_index_files(ctx.index_entries(snapshot)) if ctx.options.deletion_vectors_enabled() else {}
    return [BucketFiles(part, bucket, total_buckets[(part, bucket)], tuple(files_of[(part, bucket)]),
                        tuple(dvs.get((part, bucket), ())), snapshot.id)
            for part, bucket in keys]


def compact_buckets(ctx: StoreContext, plan: Sequence[BucketFiles], full: bool = False,
                    threads: int = _COMPACT_THREADS, order: SortOrder | None = None) -> list[CommitMessage]:
    """Compact the planned buckets (``threads`` at a time) and describe the results, uncommitted; with ``order``,
    sort each planned partition (one at a time: each is sorted in memory). On failure the files written so far are
    deleted."""
    if not plan:
        return []
    if order is not None:
        threads = 1
    append = None if ctx.schema.primary_keys else AppendCompactionSettings.of(ctx)
    clustering = Clustering.of(ctx) if append is not None and order is None else None
    settings = CompactionSettings.of(ctx) if append is None else None
    read_ctx = read_context(ctx)
    evolution = read_ctx.data_evolution  # column files are merged by row range, never appended together
    written: list[str] = []

    def one(b: BucketFiles) -> CommitMessage | None:
        if order is not None:
            with naming_snapshot(b.snapshot_id):
                return sort_partition(ctx, order, b.partition, b.bucket, b.total_buckets, b.files, b.dv_index_files,
                                      written.append, read_ctx)
        if clustering is not None:
            with naming_snapshot(b.snapshot_id):
                return cluster_partition(ctx, clustering, b.partition, b.bucket, b.total_buckets, b.files,
                                         b.dv_index_files, full, written.append, read_ctx)
        if append is not None and evolution:
            with naming_snapshot(b.snapshot_id):
                return compact_data_evolution_bucket(ctx, b.partition, b.bucket, b.total_buckets, b.files,
                                                     b.dv_index_files, written.append, read_ctx)
        if append is not None:
            return compact_append_bucket(ctx, append, b.partition, b.bucket, b.total_buckets, b.files,
                                         b.dv_index_files, full, written.append, read_ctx)
        assert settings is not None
        compactor = BucketCompactor(ctx, settings, b.partition, b.bucket, written.append, read_ctx,
                                    b.dv_index_files)
        with naming_snapshot(b.snapshot_id):
            out = compactor.compact(compactor.levels(b.files), full)
            if out is None or out[1].is_empty():
                return None
            new_index, old_index = compactor.dvs.flush() if compactor.dvs is not None else ([], [])
        return CommitMessage(b.partition, b.bucket, b.total_buckets, compact_before=out[1].before,
                             compact_after=out[1].after, new_index_files=new_index, deleted_index_files=old_index,
                             compact_changelog_files=out[1].changelog)

    try:
        if len(plan) > 1 and threads > 1:
            results = parallel_map(one, plan, threads)
        else:
            results = [one(b) for b in plan]
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise
    return [m for m in results if m is not None]


def compaction_messages(ctx: StoreContext, full: bool = False,
                        partitions: PartitionSpecs | None = None,
                        idle_partitions_older_than_ms: int | None = None,
                        buckets: Collection[int] | str | None = None,
                        order: SortOrder | None = None) -> list[CommitMessage]:
    """Compact the buckets of the latest snapshot (concurrently) and describe the results, uncommitted; with
    ``order``, sort them (:func:`compact_buckets`).

    A concurrent expiry may remove the snapshot, and the files only it referenced, while they are read (a table that
    retains one snapshot, written and compacted by other processes): its compaction would conflict at commit anyway,
    so it is planned again on the new latest snapshot (:func:`~table_engine.store.reading.on_latest.on_latest`). A
    file missing from a snapshot that still exists is not that, and fails.

    The two steps, :func:`plan_compaction` and :func:`compact_buckets`, can also run apart (a Spark job plans on the
    driver and compacts groups of buckets in tasks)."""
    return on_latest(ctx, lambda _: compact_buckets(
        ctx, plan_compaction(ctx, partitions, idle_partitions_older_than_ms, buckets=buckets), full, order=order),
        "compaction")

