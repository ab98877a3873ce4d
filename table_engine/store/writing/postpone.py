"""Postpone bucket mode (``bucket`` = -2, Paimon 1.1+): where and how its writers put new rows.

A writer of a postpone table does not know bucket counts: it writes every record, unsorted and unmerged, in arrival
order, to the partition's ``bucket-postpone`` directory as level-0 files with sequence numbers counted from 0 by
that writer (Paimon's ``PostponeBucketFileStoreWrite`` ignores previous files), manifest bucket -2 and total buckets
-2. Batch reads skip those files; the dedicated compaction (:mod:`table_engine.store.writing.postpone_compact`)
assigns the records to real buckets, which is what makes them visible.

Each writer names its files ``<data-file.prefix>-u-<user>-s-<id>-w-<uuid>-<n>.avro`` (Paimon's writer prefix) so that
the compaction can read one writer's files in the order they were written. As in Paimon, they are Avro files
whatever ``file.format`` says, without statistics (``metadata.stats-mode`` none).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable

from table_engine.core_options import FILE_FORMAT, FILE_FORMAT_PER_LEVEL, METADATA_STATS_MODE
from table_engine.format.bucket import POSTPONE_BUCKET
from table_engine.store.context import StoreContext
from table_engine.store.kv_file_writer import DataFileWriter

__all__ = ["POSTPONE_BUCKET", "postpone_file_writer", "writer_prefix"]

_WRITER_MARK = "-w-"


def postpone_file_writer(ctx: StoreContext, track: Callable[[str], None] | None = None,
                         user: str | None = None) -> DataFileWriter:
    """A data-file writer for ``bucket-postpone`` files: Avro whatever ``file.format`` says, no statistics, this
    writer's own file-name prefix (as Paimon's ``PostponeBucketFileStoreWrite`` sets them)."""
    writer = DataFileWriter(ctx.with_options({FILE_FORMAT.key: "avro", METADATA_STATS_MODE.key: "none"},
                                             drop=[FILE_FORMAT_PER_LEVEL.key]), track)
    writer.data_file_prefix = f"{ctx.options.data_file_prefix()}-u-{user or uuid.uuid4()}-s-" \
                              f"{random.randrange(2**31 - 1)}{_WRITER_MARK}"
    return writer


def writer_prefix(file_name: str) -> str:
    """The writer part of a postpone file's name (Paimon's ``getWriterPrefix``): files with equal prefixes come
    from one writer, whose records are ordered by the files' creation times."""
    cut = file_name.rfind(_WRITER_MARK)
    return file_name if cut < 0 else file_name[:cut + len(_WRITER_MARK)]
