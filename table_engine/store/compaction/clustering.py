"""Incremental clustering of append tables (``clustering.incremental``, Paimon 1.3's ``IncrementalClusterManager``).

A file's ``level`` is its clustering state: writers add files at level 0 (and do not compact: only clustering may
rewrite such a table's files); a dedicated compaction of a partition reads its runs (each level-0 file one run,
oldest first; each level above 0 one run), lets Paimon's universal picker choose some
(:func:`pick_clustering`: ``num-sorted-run.compaction-trigger``, ``compaction.size-ratio``,
``compaction.max-size-amplification-percent``, ``num-levels``; a full compaction takes every run unless the
partition is one run at the top level clustered by the same columns), sorts their rows by ``clustering.columns``
with ``clustering.strategy`` (:mod:`table_engine.sort`) and writes them as files of the unit's output level (always
above 0), in one COMPACT snapshot with the read files' deletion vectors dropped. So only new data is clustered, and
a table Paimon Java clusters and this engine clusters keep one layout.

Not built (refused by name where they would matter): bucketed clustering (Paimon 1.4), clustering with row tracking,
``clustering.history-partition.*`` (the full re-clustering of idle partitions Paimon runs when a compaction is given a
partition filter).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from table_engine.core_enums import OrderType
from table_engine.core_options import (
    CLUSTERING_STRATEGY,
    COMPACTION_MAX_SIZE_AMPLIFICATION,
    COMPACTION_SIZE_RATIO,
)
from table_engine.errors import UnsupportedError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.index_manifest import IndexFileMeta
from table_engine.format.schema_file import clustering_columns
from table_engine.lsm.compaction.universal import CompactUnit, UniversalCompaction
from table_engine.lsm.levels import LevelSortedRun, SortedRun
from table_engine.sort import clustering_strategy
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.sort_compact import rewrite_sorted
from table_engine.store.context import StoreContext
from table_engine.store.reading.read import ReadContext

__all__ = ["Clustering", "clustering_runs", "cluster_partition", "pick_clustering"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Clustering:
    """A clustering table's settings, resolved once."""

    columns: tuple[str, ...]
    strategy: OrderType
    num_levels: int
    picker: UniversalCompaction

    @staticmethod
    def of(ctx: StoreContext) -> Clustering | None:
        """The table's clustering (None unless ``clustering.incremental``); refuses what is not built."""
        o = ctx.options
        if not o.clustering_incremental():
            return None
        where = f"incremental clustering of {ctx.table_path}"
        if o.row_tracking_enabled():
            raise UnsupportedError(f"{where}: row-tracking.enabled: clustering would move rows away from the row "
                                   "ids of their files (not built: ADR 0049)")
        columns = clustering_columns(ctx.schema)
        if not columns:
            raise UnsupportedError(f"{where}: clustering.columns is not set")
        picker = UniversalCompaction(max_size_amp=o.get(COMPACTION_MAX_SIZE_AMPLIFICATION),
                                     size_ratio=o.get(COMPACTION_SIZE_RATIO),
                                     num_run_trigger=o.num_sorted_runs_compaction_trigger())
        return Clustering(columns, clustering_strategy(o.get(CLUSTERING_STRATEGY), len(columns)), o.num_levels(),
                          picker)


def clustering_runs(files: Sequence[DataFileMeta]) -> list[LevelSortedRun]:
    """A partition's sorted runs as Paimon's ``IncrementalClusterManager`` sees them: each level-0 file a run of its
    own (oldest first, by sequence number), then one run per level above 0, by level."""
    level0 = sorted((f for f in files if f.level == 0), key=lambda f: (f.min_sequence_number, f.file_name))
    runs = [LevelSortedRun(0, SortedRun.of(f)) for f in level0]
    for level in sorted({f.level for f in files if f.level > 0}):
        run = sorted((f for f in files if f.level == level), key=lambda f: (f.min_sequence_number, f.file_name))
        runs.append(LevelSortedRun(level, SortedRun(tuple(run))))
    return runs


def pick_clustering(num_levels: int, runs: Sequence[LevelSortedRun], full: bool, picker: UniversalCompaction,
                    clustered_alike: Callable[[DataFileMeta], bool]) -> CompactUnit | None:
    """The runs a clustering compaction rewrites (Paimon's ``IncrementalClusterStrategy.pick``), a pure function.
    ``full``: every run to the top level, unless the partition is one run at the top level whose files were
    clustered by the current columns (``clustered_alike`` of its first file); else the universal picker without
    its early full compaction and off-peak ratio."""
    max_level = num_levels - 1
    if not runs:
        return None
    if full:
        if len(runs) == 1 and runs[0].level == max_level and clustered_alike(runs[0].run.files[0]):
            return None
        return CompactUnit.from_runs(max_level, runs)
    return picker.pick(num_levels, runs)


def cluster_partition(ctx: StoreContext, clustering: Clustering, partition: bytes, bucket: int, total_buckets: int,
                      files: Sequence[DataFileMeta], dv_index_files: Sequence[IndexFileMeta], full: bool,
                      track: Callable[[str], None] | None = None,
                      read_ctx: ReadContext | None = None) -> CommitMessage | None:
    """Cluster what :func:`pick_clustering` picks of one partition's ``files``: the commit message, None when
    nothing is picked."""
    runs = clustering_runs(files)
    unit = pick_clustering(clustering.num_levels, runs, full, clustering.picker,
                           lambda f: _clustered_by(ctx, f) == clustering.columns)
    if unit is None or not unit.files:
        return None
    message, rows, _ = rewrite_sorted(ctx, clustering.strategy, clustering.columns, partition, bucket, total_buckets,
                                      unit.files, dv_index_files, unit.output_level, track, read_ctx)
    log.info("clustered %d file(s) (%d rows) of a partition of %s by %s(%s) into %d file(s) at level %d",
             len(unit.files), rows, ctx.table_path, clustering.strategy.value, ", ".join(clustering.columns),
             len(message.compact_after), unit.output_level)
    return message


def _clustered_by(ctx: StoreContext, f: DataFileMeta) -> tuple[str, ...]:
    """The clustering columns of the schema ``f`` was written with."""
    return clustering_columns(ctx.schema_by_id(f.schema_id))
