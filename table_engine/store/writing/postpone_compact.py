"""The compaction of a postpone bucket table (``bucket`` = -2): it is what publishes the rows.

Writers put records in ``bucket-postpone`` (:mod:`table_engine.store.writing.postpone`), invisible to batch reads.
This job, as Paimon's ``SparkPostponeCompactProcedure`` / Flink's postpone compaction, for each partition with
postponed files:

1. decides the partition's bucket count: the count of its real buckets when it has any, else
   ``postpone.default-bucket-num``, else ``ceil(rows / postpone.target-row-num-per-bucket)``, else
   ``ceil(file bytes / postpone.target-size-per-bucket)`` (at least 1), as ``PostponeUtils`` does;
2. reads the postponed records writer by writer (files of one writer prefix by creation time: a writer's records
   keep their order; different writers have none between them, as in Paimon) and writes them, with their row kinds,
   through an ordinary fixed-bucket writer of that bucket count (Paimon's ``tableForPostponeRewrite``): the bucket
   key's Paimon hash picks the bucket, sequence numbers continue each bucket's, and the writer's compaction merges
   them with what the bucket holds, per the merge engine;
3. compacts the other real buckets as the ordinary dedicated compaction would;

and commits all of it, the postponed files deleted, as one COMPACT snapshot. A concurrent commit that removed an
input file (another compactor, an overwrite, a rescale) makes the commit fail with CommitConflictError and leaves
the table as it was; writers that only add postponed files (``write-only`` or not: postpone writers never compact)
do not conflict, their files wait for the next compaction.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

import pyarrow as pa

from table_engine.core_options import (
    COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT,
    FULL_COMPACTION_DELTA_COMMITS,
    POSTPONE_DEFAULT_BUCKET_NUM,
    POSTPONE_TARGET_ROW_NUM_PER_BUCKET,
    POSTPONE_TARGET_SIZE_PER_BUCKET,
    WRITE_ONLY,
)
from table_engine.errors import CorruptMetadataError, naming_snapshot
from table_engine.format.binary_row import decode_row
from table_engine.format.bucket import BucketMode
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.snapshot import snapshot_properties
from table_engine.io.executor import parallel_map
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.compact import BucketFiles, compact_buckets, plan_compaction
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs
from table_engine.store.paths import file_path_in
from table_engine.store.reading.read import read_context, read_data_file
from table_engine.store.writing.postpone import POSTPONE_BUCKET, writer_prefix
from table_engine.store.writing.write import TableWrite

log = logging.getLogger(__name__)

_READ_WINDOW_BYTES = 64 << 20
"""Postponed files decoded at once, in parallel, before they are written: up to this many file bytes (at least
one file, at most :data:`_READ_WINDOW_FILES`). A window of several files keeps every core decoding (the Avro
reader releases the GIL); the writer buffers what it is given until ``write-buffer-size`` anyway."""
_READ_WINDOW_FILES = 4 * max(1, os.cpu_count() or 1)
_DECODERS = max(2, os.cpu_count() or 1)
"""Files decoded at once: one per core (decoding is CPU-bound)."""


def read_windows(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """``files`` in order, cut into windows of at most :data:`_READ_WINDOW_BYTES` (or one file)."""
    windows: list[list[DataFileMeta]] = []
    size = 0
    for f in files:
        if not windows or size + f.file_size > _READ_WINDOW_BYTES or len(windows[-1]) >= _READ_WINDOW_FILES:
            windows.append([])
            size = 0
        windows[-1].append(f)
        size += f.file_size
    return windows


def is_postpone_table(ctx: StoreContext) -> bool:
    """Whether the table is in postpone bucket mode."""
    return ctx.bucket_mode is BucketMode.POSTPONE_MODE


def compact_postpone_table(ctx: StoreContext, commit: FileStoreCommit, full: bool = False,
                           partitions: PartitionSpecs | None = None,
                           idle_partitions_older_than_ms: int | None = None,
                           properties: Mapping[str, str] | None = None) -> int | None:
    """Assign the postponed records (of the selected partitions, as :func:`plan_compaction` selects them) to
    buckets, compact, commit (with snapshot ``properties``); the COMPACT snapshot id, or None when there is nothing
    to do."""
    snapshot_properties(properties)  # bad properties fail before anything is written
    snapshot = ctx.latest_snapshot()
    messages = postpone_compaction_messages(ctx, full, partitions, idle_partitions_older_than_ms)
    if not messages or snapshot is None:
        return None
    # as Paimon's tableForPostponeRewrite: strict mode from the snapshot read, so that a rescale or another
    # compaction committed meanwhile fails this commit (new files must not land in a changed bucket layout)
    strict = ctx.with_options({COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key: str(snapshot.id)})
    commit = FileStoreCommit(strict, commit.user)
    try:
        return commit.commit(messages, properties=properties)
    except BaseException:
        commit.abort(messages)
        raise


def bucket_counts(ctx: StoreContext, plan: Sequence[BucketFiles]) -> dict[bytes, int]:
    """The bucket count of every partition of ``plan`` that has postponed files (step 1 of the module docstring)."""
    known: dict[bytes, int] = {}
    for b in plan:
        if b.bucket >= 0 and b.total_buckets > 0:
            if known.setdefault(b.partition, b.total_buckets) != b.total_buckets:
                raise CorruptMetadataError(f"partition {b.partition.hex()} of {ctx.table_path} has buckets of "
                                           f"different bucket counts {known[b.partition]} and {b.total_buckets}")
    opts = ctx.options
    default = opts.get(POSTPONE_DEFAULT_BUCKET_NUM)
    rows_per_bucket = opts.get(POSTPONE_TARGET_ROW_NUM_PER_BUCKET)
    size_per_bucket = opts.get(POSTPONE_TARGET_SIZE_PER_BUCKET)
    out: dict[bytes, int] = {}
    for b in plan:
        if b.bucket != POSTPONE_BUCKET:
            continue
        if b.partition in known:
            out[b.partition] = known[b.partition]
        elif default is not None:
            out[b.partition] = default
        elif rows_per_bucket is not None:
            out[b.partition] = max(1, -(-sum(f.row_count for f in b.files) // rows_per_bucket))
        else:
            out[b.partition] = max(1, -(-sum(f.file_size for f in b.files) // size_per_bucket))
    return out


def writer_order(files: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    """Postponed files in reading order: writer by writer, each writer's files by creation time. Paimon gives
    writers no order between them; this engine takes them by their first file's creation time (then manifest
    order), so that commits made one after the other keep their order."""
    by_writer: dict[str, list[DataFileMeta]] = {}
    for f in files:
        by_writer.setdefault(writer_prefix(f.file_name), []).append(f)
    groups = [sorted(fs, key=lambda f: f.creation_time_millis or 0) for fs in by_writer.values()]
    groups.sort(key=lambda fs: fs[0].creation_time_millis or 0)
    return [f for fs in groups for f in fs]


def postpone_compaction_messages(ctx: StoreContext, full: bool = False,
                                 partitions: PartitionSpecs | None = None,
                                 idle_partitions_older_than_ms: int | None = None) -> list[CommitMessage]:
    """Steps 1-3 of the module docstring, uncommitted. On failure the files written so far are deleted."""
    plan = plan_compaction(ctx, partitions, idle_partitions_older_than_ms, with_postponed=True)
    postponed = [b for b in plan if b.bucket == POSTPONE_BUCKET]
    counts = bucket_counts(ctx, plan)
    by_count: dict[int, list[BucketFiles]] = {}
    for b in postponed:
        by_count.setdefault(counts[b.partition], []).append(b)
    messages: list[CommitMessage] = []
    written: set[tuple[bytes, int]] = set()
    try:
        for n, group in sorted(by_count.items()):
            for m in _assign(ctx, n, group, full):
                written.add((m.partition, m.bucket))
                messages.append(m)
        rest = [b for b in plan if b.bucket >= 0 and (b.partition, b.bucket) not in written]
        messages += compact_buckets(ctx, rest, full)
    except BaseException:
        _delete_outputs(ctx, messages)
        raise
    messages += [CommitMessage(b.partition, POSTPONE_BUCKET, b.total_buckets, compact_before=list(b.files))
                 for b in postponed]
    if postponed:
        log.info("postpone compaction of %s: %d postponed file(s) of %d partition(s) into buckets %s",
                 ctx.table_path, sum(len(b.files) for b in postponed), len(postponed), sorted(set(counts.values())))
    return messages


def _assign(ctx: StoreContext, num_buckets: int, group: Sequence[BucketFiles], full: bool) -> list[CommitMessage]:
    """Write the postponed records of ``group`` (partitions of ``num_buckets`` buckets) into their buckets through a
    fixed-bucket writer that compacts; its messages as compaction results."""
    raw = dict(ctx.options.raw)
    raw.update({"bucket": str(num_buckets), WRITE_ONLY.key: "false"})
    if full:
        raw[FULL_COMPACTION_DELTA_COMMITS.key] = "1"
    wctx = ctx.with_options(raw)
    writer = TableWrite(wctx)
    read_ctx = read_context(ctx)
    part_types = [f.type for f in ctx.schema.partition_fields()]
    default_name = ctx.options.partition_default_name()
    try:
        for b in group:
            values = decode_row(b.partition, part_types)

            def read(f: DataFileMeta, values: list[object] = values) -> pa.Table:
                path = file_path_in(ctx.table_path, ctx.schema, values, POSTPONE_BUCKET, f, default_name)
                # one chunk per column, combined on the decoding thread rather than by the writer
                return read_data_file(read_ctx, path, f, ctx.schema.fields, system=True).combine_chunks()

            with naming_snapshot(b.snapshot_id):
                # decoded a window at a time in parallel, written in the writers' order
                for window in read_windows(writer_order(b.files)):
                    for t in parallel_map(read, window, _DECODERS):
                        kinds = t.column(VALUE_KIND).combine_chunks()
                        writer.write(t.drop_columns([SEQUENCE_NUMBER, VALUE_KIND]), kinds)
        messages = writer.prepare_commit()
    except BaseException:
        writer.abort()
        raise
    out = []
    for m in messages:
        values = decode_row(m.partition, part_types)
        new = {f.file_name for f in m.new_files}
        kept = {f.file_name for f in m.compact_after}  # upgraded to a higher level: the same file
        for f in m.compact_before:  # written and compacted away before anyone saw them
            if f.file_name in new and f.file_name not in kept:
                ctx.file_io.try_delete(file_path_in(ctx.table_path, ctx.schema, values, m.bucket, f, default_name))
        out.append(_as_compaction(m))
    return out


def _as_compaction(m: CommitMessage) -> CommitMessage:
    """A writer's message (new files, its own compaction of them and of the bucket) as one compaction result: what
    it wrote and did not compact away is compaction output (Paimon's ``BucketFiles``)."""
    new = {f.file_name for f in m.new_files}
    compacted = {f.file_name for f in m.compact_before}
    return CommitMessage(
        m.partition, m.bucket, m.total_buckets,
        compact_before=[f for f in m.compact_before if f.file_name not in new],
        compact_after=[*m.compact_after, *(f for f in m.new_files if f.file_name not in compacted)],
        compact_changelog_files=[*m.changelog_files, *m.compact_changelog_files],
        new_index_files=m.new_index_files, deleted_index_files=m.deleted_index_files)


def _delete_outputs(ctx: StoreContext, messages: Sequence[CommitMessage]) -> None:
    for m in messages:
        values = decode_row(m.partition, [f.type for f in ctx.schema.partition_fields()])
        for f in (*m.compact_after, *m.compact_changelog_files):
            ctx.file_io.try_delete(file_path_in(ctx.table_path, ctx.schema, values, m.bucket, f,
                                                ctx.options.partition_default_name()))
