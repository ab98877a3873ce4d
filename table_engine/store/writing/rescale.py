"""``rescale``: rewrite partitions' data into another number of buckets, as Paimon's ``rescale`` procedure.

Paimon's Spark/Flink ``RescaleProcedure`` reads the real buckets of the selected partitions (postponed rows stay
where they are), writes them with ``bucket`` = ``bucket_num`` and commits an OVERWRITE of those partitions that
keeps ``bucket-postpone`` (the writer is not a postpone writer), under strict mode with the snapshot it read as the
last safe one (``commit.strict-mode.last-safe-snapshot``), so that a compaction or another rewrite committed
meanwhile fails the rescale instead of being lost. On a postpone table this is how a partition's bucket count
changes; the next postpone compaction routes its postponed rows to the new count.

Fixed-bucket tables: ``bucket_num`` defaults to the table's ``bucket`` and must equal it (this engine's writers
hash every partition into the table's count; Paimon first alters ``bucket``, which this engine does not allow on a
table with data), so a rescale there rewrites the partitions' files in place. Dynamic-bucket and append tables
without fixed buckets are refused, as in Paimon.
"""

from __future__ import annotations

import logging

from table_engine.core_options import BUCKET, COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT, WRITE_ONLY, CommitUser
from table_engine.errors import OptionError, UnsupportedError
from table_engine.format.bucket import BucketMode
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.compaction.compact import plan_compaction
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.scan import plan_splits
from table_engine.store.writing.write import TableWrite

log = logging.getLogger(__name__)


def check_rescale(ctx: StoreContext, bucket_num: int | None) -> int:
    """The bucket count to rescale to, or a one-line OptionError/UnsupportedError naming the field."""
    bucket = ctx.options.bucket()
    if bucket_num is not None and bucket_num <= 0:
        raise OptionError(f"rescale of {ctx.table_path}: bucket_num = {bucket_num} must be a positive bucket count")
    if ctx.bucket_mode is BucketMode.POSTPONE_MODE:
        if bucket_num is None:
            raise OptionError(f"rescale of postpone bucket table {ctx.table_path}: bucket_num is required (the "
                              "partitions' new bucket count)")
        return bucket_num
    if bucket <= 0:
        raise UnsupportedError(f"rescale of {ctx.table_path}: bucket = {bucket}; rescale needs a fixed-bucket "
                               "(bucket > 0) or postpone bucket (bucket = -2) table")
    if bucket_num is not None and bucket_num != bucket:
        raise OptionError(f"rescale of {ctx.table_path}: bucket_num = {bucket_num} differs from the table's "
                          f"bucket = {bucket}; this engine keeps one bucket count for the partitions of a "
                          "fixed-bucket table")
    return bucket


def rescale(ctx: StoreContext, user: CommitUser, bucket_num: int | None = None,
            partitions: PartitionSpecs | None = None) -> int | None:
    """Rewrite the real buckets of the selected partitions (all by default; a spec that matches no partition is a
    PartitionSpecError) into ``bucket_num`` buckets in one OVERWRITE commit; its snapshot id, or None when the
    partitions hold no rows in real buckets. The table is unchanged when anything fails. The new files are on
    level 0 (the caller compacts them where batch reads skip level 0, as after any overwrite)."""
    num = check_rescale(ctx, bucket_num)
    snapshot = ctx.latest_snapshot()
    if snapshot is None:
        raise OptionError(f"rescale of {ctx.table_path}: the table has no snapshot, nothing to rescale")
    selected = {b.partition for b in plan_compaction(ctx, partitions, with_postponed=True)}  # validates the specs
    splits = [s for s in plan_splits(ctx.file_io, ctx.table_path, snapshot, ctx.schema,
                                     schema_loader=ctx.schema_by_id) if s.partition in selected]
    if not splits:
        log.info("rescale of %s: no rows in real buckets of the selected partitions", ctx.table_path)
        return None
    raw = dict(ctx.options.raw)
    raw.update({BUCKET.key: str(num), WRITE_ONLY.key: "true",  # an overwrite commits no compaction
                COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key: str(snapshot.id)})
    wctx = ctx.with_options(raw)
    writer = TableWrite(wctx)
    reader = TableRead(read_context(ctx))
    try:
        for batch in reader.to_batches(splits):
            writer.write(batch)
        messages = writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
        commit = FileStoreCommit(wctx, user)
        sid = commit.commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=Overwrite(dynamic=True))
    except BaseException:
        writer.abort()
        raise
    log.info("rescaled %d partition(s) of %s into %d bucket(s): snapshot %s", len({s.partition for s in splits}),
             ctx.table_path, num, sid)
    return sid
