"""Writing: Arrow data -> row kinds, partitions, buckets, sequence numbers -> sorted, folded level-0 files.

A :class:`TableWrite` is one writer task (phase one of the two-phase commit): it buffers rows up to
``write-buffer-size`` (spilling sorted runs to local disk when ``write-buffer-spillable``), flushes them as sorted
runs (level-0 files, rolled at ``target-file-size``) and returns :class:`CommitMessage` objects from
:meth:`TableWrite.prepare_commit`. Everything per row is vectorized. It coordinates three parts, as Java's
``AbstractFileStoreWrite`` / ``KeyValueFileStoreWrite`` coordinate ``MergeTreeWriter``s:

* :mod:`~table_engine.store.writing.bucketing`: the partition id and bucket of each row, per bucket mode;
* :mod:`~table_engine.store.writing.restore`: what the table holds of the buckets, restored before the first write;
* :mod:`~table_engine.store.writing.bucket_writer`: per bucket, sequence numbers, level-0 files and, unless
  ``write-only``, their compaction (at ``prepare_commit`` and, for a primary-key table past
  ``num-sorted-run.stop-trigger`` sorted runs, right after a flush).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.core_options import (
    LOCAL_SORT_MAX_NUM_FILE_HANDLES,
    WRITE_BUFFER_SPILL_MAX_DISK_SIZE,
    WRITE_BUFFER_SPILLABLE,
)
from table_engine.errors import DataError, MissingFileError, SchemaMismatchError
from table_engine.format.bucket import BucketMode
from table_engine.format.hash_index import write_hash_index
from table_engine.format.index_manifest import HASH_INDEX, IndexFileMeta
from table_engine.io.paths import index_dir, new_index_file_name
from table_engine.lsm.key_value import VALUE_KIND, check_no_null_keys, row_kinds_from_strings
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.writing.bucket_assign import Assigner
from table_engine.store.writing.bucket_writer import BUCKET_ID, PARTITION_ID, BucketState, BucketWriters
from table_engine.store.writing.bucketing import BucketSpec, RowKeyExtractor
from table_engine.store.writing.restore import CommittedState
from table_engine.store.writing.spill import SpilledRuns
from table_engine.types import VARIANT_ARROW_TYPE, is_variant_arrow_type, variant_children_filled

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _names_base_snapshot(
        method: Callable[Concatenate[TableWrite, _P], _R]) -> Callable[Concatenate[TableWrite, _P], _R]:
    """A MissingFileError (a committed file the writer reads: data, deletion vector, HASH index) names the snapshot
    the writer restored its state from."""

    @functools.wraps(method)
    def wrapper(self: TableWrite, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except MissingFileError as e:  # the snapshot is known once the call restored the writer's state
            named = e.in_snapshot(self.base_snapshot_id)
            if named is e:
                raise
            raise named from e

    return wrapper


class TableWrite:
    """One writer task. Not thread-safe; create one per task/thread."""

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx
        schema = ctx.schema
        self.schema = schema
        self.opts = ctx.options
        self.layout = ctx.layout
        self.has_pk = self.layout.has_pk
        self.spec = BucketSpec.of(schema, self.opts)
        for s in self.opts.sequence_fields():
            schema.field(s)
        self.merge_fn = ctx.merge_function
        self.buffer_limit = self.opts.write_buffer_size()
        self.rowkind_field = self.opts.rowkind_field()
        if self.rowkind_field is not None:
            schema.field(self.rowkind_field)
        self._blob_names = self.layout.blob_names
        # state
        self._buffer: list[pa.Table] = []
        self._buffered_bytes = 0
        self._restored = False
        self._written: list[str] = []
        self._committed = CommittedState()
        self._keys = RowKeyExtractor(ctx, self.spec, self._committed.hash_indexes)
        self._writers = BucketWriters(ctx, self.spec, self._keys.partitions, self._committed, self._written.append)
        self._buckets: dict[tuple[int, int], BucketState] = self._writers.states
        """(partition id, bucket) -> the group's state (the bucket writers' own dict)."""
        self._spill = SpilledRuns(self.opts.get(LOCAL_SORT_MAX_NUM_FILE_HANDLES),
                                  self.opts.get(WRITE_BUFFER_SPILL_MAX_DISK_SIZE)) \
            if self.has_pk and not self._writers.postpone and self._spillable() else None

    def _spillable(self) -> bool:
        """``write-buffer-spillable``; unset: on for object stores (no directories), as Paimon decides it."""
        spillable = self.opts.get(WRITE_BUFFER_SPILLABLE)
        return bool(spillable) if spillable is not None else not self.ctx.file_io.has_directories

    @property
    def assigner(self) -> Assigner | None:
        """Dynamic bucket modes: new keys go only to this writer's buckets (one of several writers of a commit).
        Set before the first write."""
        return self._keys.assigner

    @assigner.setter
    def assigner(self, assigner: Assigner | None) -> None:
        self._keys.assigner = assigner

    @property
    def sequence_floor(self) -> int:
        """The lowest sequence number this writer gives a bucket it opens (above the bucket's committed ones
        anyway): writers of one commit that share buckets get disjoint ranges in the order their input came in
        (:mod:`table_engine.spark.jobs.file_write`). Set before the first write."""
        return self._writers.sequence_floor

    @sequence_floor.setter
    def sequence_floor(self, floor: int) -> None:
        self._writers.sequence_floor = floor

    @property
    def rows_written(self) -> int:
        """Rows written into data files so far."""
        return self._writers.rows_written

    # ---- public ------------------------------------------------------------------------------------------------
    @_names_base_snapshot
    def write(self, data: pa.Table | pa.RecordBatch, row_kinds: Sequence[str] | pa.Array | None = None) -> None:
        """Buffer ``data`` (all table columns); ``row_kinds`` gives +I/-U/+U/-D per row."""
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        if not isinstance(data, pa.Table):
            raise SchemaMismatchError(f"write() takes a pyarrow Table or RecordBatch, not {type(data).__name__}")
        if data.num_rows == 0:
            return
        self._restore()
        kv = self._prepare(data, row_kinds)
        if kv.num_rows == 0:
            return
        self._buffer.append(kv)
        self._buffered_bytes += kv.nbytes
        if self._buffered_bytes >= self.buffer_limit:
            if self._spill is None:
                self.flush()
            else:  # write-buffer-spillable: a sorted run on local disk, merged into level-0 files at flush
                self._writers.flush_kv(self._take_buffer(), spill=self._spill)
                if self._spill.over_budget():
                    self.flush()

    def _take_buffer(self) -> pa.Table:
        kv = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer, self._buffered_bytes = [], 0
        return kv

    def flush(self) -> None:
        """Write the buffered rows (and the spilled runs, merged by streaming) as level-0 files (one sorted run per
        bucket)."""
        if self._spill is not None and len(self._spill):
            if self._buffer:
                self._writers.flush_kv(self._take_buffer(), spill=self._spill)
            self._writers.merge_spilled(self._spill)
            return
        if not self._buffer:
            return
        self._writers.flush(self._take_buffer())

    @_names_base_snapshot
    def prepare_commit(self, commit_identifier: int | None = None) -> list[CommitMessage]:
        """Flush, compact (unless ``write-only``) and hand over everything written since the last call.

        Compaction: the universal picker on every bucket written since the last call, or a full compaction of every
        bucket written since the last full one when ``full-compaction.delta-commits`` (N) says so: with the
        ``commit_identifier`` the messages will be committed under, when it is a multiple of N or the batch
        identifier (Long.MAX_VALUE: every batch commit is fully compacted, as in Paimon, and the ``compacted-full``
        scan mode relies on it); without one, every N-th call of this writer.
        """
        self.flush()
        self._writers.compact_for_commit(commit_identifier)
        messages = self._writers.drain()
        if self.spec.mode is BucketMode.HASH_DYNAMIC:
            self._write_hash_indexes(messages)
        if self.spec.mode is BucketMode.KEY_DYNAMIC:
            for (gid, _), msg in messages.items():
                msg.moved_keys_only = gid not in self._keys.input_partitions
            self._keys.input_partitions = set()
        return [messages[k] for k in sorted(messages)]

    def _write_hash_indexes(self, messages: dict[tuple[int, int], CommitMessage]) -> None:
        """Dynamic buckets: a new HASH index file for every bucket whose keys changed, replacing its old ones."""
        partitions = self._keys.partitions
        for part_bytes, idx in self._keys.hash_indexes.items():
            if not idx.changed:
                continue
            gid = partitions.id_of(part_bytes)
            for bucket in sorted(idx.changed):
                msg = messages.setdefault((gid, bucket), self._writers.message(gid, bucket))
                name = new_index_file_name(0)
                hashes = idx.hashes_of(bucket)
                size = write_hash_index(self.ctx.file_io, f"{index_dir(self.ctx.table_path)}/{name}", hashes)
                self._written.append(f"{index_dir(self.ctx.table_path)}/{name}")
                msg.new_index_files.append(IndexFileMeta(HASH_INDEX, name, size, len(hashes)))
                old = self._committed.hash_index_files.pop((part_bytes, bucket), [])
                msg.deleted_index_files.extend(old)
                self._committed.hash_index_files[(part_bytes, bucket)] = [msg.new_index_files[-1]]
            idx.changed.clear()

    def abort(self, keep: Collection[str] = ()) -> None:
        """Delete every file this writer created (for a task that will not commit), except the files named in
        ``keep``: those a commit published before it failed (``FileStoreCommit.published_files``)."""
        for p in self._written:
            if p.rsplit("/", 1)[-1] not in keep:
                self.ctx.file_io.try_delete(p)
        self._written = []
        self._buffer = []
        if self._spill is not None:
            self._spill.clear()

    @property
    def base_snapshot_id(self) -> int | None:
        """The snapshot this writer restored its buckets from (None before its first write or on an empty table)."""
        return self._committed.snapshot_id

    def written_paths(self) -> list[str]:
        return list(self._written)

    def skip_compaction(self) -> None:
        """This writer only writes new files: someone else compacts them (one of several writers of an
        unaware-bucket append table, whose compaction the committer runs once; see
        :func:`~table_engine.store.compaction.compact.compact_written_append_partitions`). Call before the first
        write."""
        self._writers.skip_compaction()

    # ---- restoring committed state -----------------------------------------------------------------------------
    def _restore(self) -> None:
        if self._restored:
            return
        self._restored = True
        if self.spec.mode is BucketMode.POSTPONE_MODE:  # as Paimon: postpone writers ignore previous files,
            return                                      # sequence numbers start at 0
        if self.spec.mode is BucketMode.KEY_DYNAMIC:
            self._keys.bootstrap_global_index()
        self._committed.restore_latest(self.ctx, keep_files=self._writers.compacting,
                                       dynamic=self.spec.mode is BucketMode.HASH_DYNAMIC)

    # ---- preparing input ---------------------------------------------------------------------------------------
    def _conform(self, data: pa.Table) -> pa.Table:
        names = [f.name for f in self.layout.arrow_schema]
        given = data.column_names
        missing = [n for n in names if n not in given]
        extra = [n for n in given if n not in names]
        if missing or extra:
            raise SchemaMismatchError(
                f"data columns do not match table {self.ctx.table_path}: missing {missing}, unknown {extra}")
        cols = []
        for f in self.layout.arrow_schema:
            col = data.column(f.name)
            if f.name in self._blob_names and not (pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type)):
                raise SchemaMismatchError(f"column {f.name!r} is BLOB: it takes binary or large_binary values (bytes "
                                          f"or serialized blob descriptors), not {col.type}")
            if f.type == VARIANT_ARROW_TYPE and is_variant_arrow_type(col.type) and col.num_chunks:
                col = variant_children_filled(col)
            if col.type != f.type:
                try:
                    col = col.cast(f.type, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                    raise SchemaMismatchError(
                        f"column {f.name!r}: cannot write {col.type} into {f.type}: {e}") from None
            if not f.nullable and col.null_count and f.name not in self.schema.primary_keys:
                raise DataError(f"column {f.name!r} is NOT NULL but has {col.null_count} null value(s)")
            cols.append(col)
        return pa.Table.from_arrays(cols, schema=pa.schema([f.with_nullable(True) for f in self.layout.arrow_schema]))

    def _kinds(self, data: pa.Table, row_kinds: Sequence[str] | pa.Array | None) -> pa.Array:
        n = data.num_rows
        if row_kinds is not None:
            if len(row_kinds) != n:
                raise DataError(f"row_kinds has {len(row_kinds)} entries for {n} rows")
            if isinstance(row_kinds, pa.Array | pa.ChunkedArray) and pa.types.is_integer(row_kinds.type):
                codes = row_kinds.cast(pa.int8())
                if pc.any(pc.or_(pc.less(codes, 0), pc.greater(codes, 3))).as_py():
                    raise DataError("row_kinds codes must be 0..3 (+I, -U, +U, -D)")
                return codes
            return row_kinds_from_strings(row_kinds, "row_kinds")
        if self.rowkind_field is not None:
            return row_kinds_from_strings(data.column(self.rowkind_field), f"rowkind.field {self.rowkind_field!r}")
        return pa.array(np.zeros(n, np.int8))

    def _prepare(self, data: pa.Table, row_kinds: Sequence[str] | pa.Array | None) -> pa.Table:
        """The rows conformed to the table's columns, with their row kind, partition id and bucket."""
        kinds = self._kinds(data, row_kinds)
        t = self._conform(data)
        if self.has_pk:
            check_no_null_keys(t, list(self.schema.primary_keys), f"write to {self.ctx.table_path}")
        else:
            if pc.any(pc.not_equal(kinds, 0)).as_py():
                raise DataError(f"append table {self.ctx.table_path} only accepts +I rows (it has no primary key)")
        t = t.append_column(VALUE_KIND, kinds)
        drop = None
        if self.opts.ignore_delete():
            drop = pc.or_(pc.equal(kinds, 1), pc.equal(kinds, 3))
        elif self.opts.ignore_update_before():
            drop = pc.equal(kinds, 1)
        if drop is not None and pc.any(drop).as_py():
            t = t.filter(pc.invert(drop))
        if t.num_rows == 0:
            return t
        if self.merge_fn is not None:
            t = self.merge_fn.on_write(t)  # the merge engine rejects row kinds it cannot take, prepares values
        t, parts, buckets = self._keys.extract(t)
        t = t.append_column(PARTITION_ID, pa.array(parts, pa.int32()))
        t = t.append_column(BUCKET_ID, pa.array(buckets, pa.int32()))
        return t
