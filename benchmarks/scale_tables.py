"""Fast builders of big synthetic tables for scale benchmarks (issue 14).

:func:`build_many_files_table` makes a table with many partitions, buckets and data files in seconds: the data
files are never written, only their metadata (valid ``DataFileMeta`` entries with exact value statistics) is
committed through the engine's own commit path (``Table.new_commit()``, manifest writing and merging, manifest
lists, snapshots). Such a table is for measuring planning (``Table.plan``): reading its rows fails, since the
files do not exist.

Layout: an append table ``(p INT, id BIGINT, v DOUBLE)`` partitioned by ``p`` with ``bucket`` buckets
(``bucket-key = id``). File ``k`` of a (partition, bucket) holds ids ``[k * 1000, k * 1000 + 999]`` (stats say
so), ``v`` in ``[0, 1]``, 1000 rows. Files are spread evenly over partitions and buckets and committed in
``commits`` commits (each commit adds files to every partition), so the manifests of the latest snapshot are
what a long-running ingestion job leaves behind after manifest merging.

  from benchmarks.scale_tables import build_many_files_table
  table = build_many_files_table("/tmp/t", partitions=1000, buckets=4, files=100_000)
  table.plan([("p", "=", 7)])   # one partition
  table.plan()                  # the whole table
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping

import pyarrow as pa

from table_engine.catalog import Catalog
from table_engine.format.binary_row import encode_row
from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, FileSource, SimpleStats
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.table import Table
from table_engine.types import parse_type

ROWS_PER_FILE = 1000
SCHEMA = pa.schema([("p", pa.int32()), ("id", pa.int64()), ("v", pa.float64())])
_VALUE_TYPES = [parse_type("INT"), parse_type("BIGINT"), parse_type("DOUBLE")]
_PART_TYPES = [parse_type("INT")]


def _file(p: int, k: int, seq: int, file_uuid: str) -> DataFileMeta:
    lo, hi = k * ROWS_PER_FILE, k * ROWS_PER_FILE + ROWS_PER_FILE - 1
    stats = SimpleStats(encode_row([p, lo, 0.0], _VALUE_TYPES), encode_row([p, hi, 1.0], _VALUE_TYPES), [0, 0, 0])
    return DataFileMeta(
        file_name=f"data-{file_uuid}-{k}.parquet", file_size=16_384, row_count=ROWS_PER_FILE,
        min_key=EMPTY_ROW, max_key=EMPTY_ROW, key_stats=SimpleStats.EMPTY, value_stats=stats,
        min_sequence_number=seq, max_sequence_number=seq + ROWS_PER_FILE - 1, schema_id=0, level=0,
        creation_time_millis=0, delete_row_count=0, file_source=FileSource.APPEND, value_stats_cols=None)


def build_many_files_table(path: str, partitions: int, buckets: int, files: int, *, commits: int = 50,
                           options: Mapping[str, str] | None = None) -> Table:
    """An append table at ``path`` (a new directory) whose latest snapshot holds ``files`` data files spread over
    ``partitions`` x ``buckets``, committed in ``commits`` commits through the engine's committer.

    ``options`` are extra table options (e.g. ``manifest.merge-min-count``). Only metadata is written: plan the
    table, do not read its rows."""
    os.makedirs(path, exist_ok=True)
    catalog = Catalog(path)
    catalog.create_database("db", ignore_if_exists=True)
    opts = {"bucket": str(buckets), "bucket-key": "id", **(options or {})}
    table = catalog.create_table("db.t", SCHEMA, partition_keys=["p"], options=opts)
    commits = max(1, min(commits, files))
    cells = partitions * buckets
    done = 0
    seq = 0
    for c in range(commits):
        upto = files * (c + 1) // commits
        messages: dict[tuple[int, int], CommitMessage] = {}
        for i in range(done, upto):
            cell = i % cells
            p, bucket = divmod(cell, buckets)
            k = i // cells
            msg = messages.get((p, bucket))
            if msg is None:
                msg = CommitMessage(encode_row([p], _PART_TYPES), bucket, buckets)
                messages[(p, bucket)] = msg
            msg.new_files.append(_file(p, k, seq, str(uuid.uuid4())))
            seq += ROWS_PER_FILE
        done = upto
        table.new_commit().commit(list(messages.values()))
    return catalog.get_table("db.t")
