"""Paimon's commit metrics of one command's commit, by Paimon's names (its ``CommitMetrics``), computed from the
snapshots it committed and their delta manifests: what the job result's ``commit.metrics`` holds and the provider
reports through Airflow's metrics (docs/metrics.md).

Paimon Java measures them while it commits; here they are read back from what the commit wrote, so the two that
only the committing process can know are not among them: ``lastCommitDuration`` and ``lastCommitAttempts``.
"""

from __future__ import annotations

from collections.abc import Sequence

from table_engine.format.manifest import FileKind, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.io.paths import manifest_path
from table_engine.table import Table

__all__ = ["COMMIT_METRICS", "commit_metrics"]

COMMIT_METRICS: dict[str, str] = {
    "lastTableFilesAdded": "data files the commit added: newly written ones and a compaction's output",
    "lastTableFilesDeleted": "data files the commit removed: a compaction's input, an overwrite's old files",
    "lastTableFilesAppended": "data files written by the commit's APPEND or OVERWRITE snapshots",
    "lastTableFilesCommitCompacted": "data files its COMPACT snapshots added or removed (compaction in and out)",
    "lastChangelogFilesAppended": "changelog files of its APPEND or OVERWRITE snapshots",
    "lastChangelogFileCommitCompacted": "changelog files of its COMPACT snapshots",
    "lastGeneratedSnapshots": "snapshots the commit made (a write followed by its compaction makes 2)",
    "lastDeltaRecordsAppended": "delta records of its APPEND or OVERWRITE snapshots",
    "lastChangelogRecordsAppended": "changelog records of its APPEND or OVERWRITE snapshots",
    "lastDeltaRecordsCommitCompacted": "delta records of its COMPACT snapshots",
    "lastChangelogRecordsCommitCompacted": "changelog records of its COMPACT snapshots",
    "lastPartitionsWritten": "partitions whose data files it added or removed",
    "lastBucketsWritten": "buckets (of a partition) whose data files it added or removed",
    "lastCompactionInputFileSize": "bytes of the data files its COMPACT snapshots removed",
    "lastCompactionOutputFileSize": "bytes of the data files its COMPACT snapshots added",
}
"""Each metric (Paimon's name) and what it counts."""


def commit_metrics(table: Table, snapshot_ids: Sequence[int]) -> dict[str, int]:
    """:data:`COMMIT_METRICS` of the commit that made ``snapshot_ids`` (one command's snapshots) of ``table``."""
    m = dict.fromkeys(COMMIT_METRICS, 0)
    written: set[tuple[bytes, int]] = set()
    for sid in snapshot_ids:
        snap = table.snapshot(sid)
        compact = str(snap.commit_kind) == "COMPACT"
        m["lastGeneratedSnapshots"] += 1
        m["lastDeltaRecordsCommitCompacted" if compact else "lastDeltaRecordsAppended"] += snap.delta_record_count or 0
        m["lastChangelogRecordsCommitCompacted" if compact else "lastChangelogRecordsAppended"] += \
            snap.changelog_record_count or 0
        for meta in read_manifest_list(table.file_io, manifest_path(table.path, snap.delta_manifest_list)):
            for e in read_manifest(table.file_io, manifest_path(table.path, meta.file_name)):
                added = e.kind == FileKind.ADD
                written.add((e.partition, e.bucket))
                m["lastTableFilesAdded" if added else "lastTableFilesDeleted"] += 1
                if compact:
                    m["lastTableFilesCommitCompacted"] += 1
                    m["lastCompactionOutputFileSize" if added else "lastCompactionInputFileSize"] += e.file.file_size
                elif added:
                    m["lastTableFilesAppended"] += 1
        if snap.changelog_manifest_list:
            files = sum(1 for meta in read_manifest_list(table.file_io, manifest_path(
                table.path, snap.changelog_manifest_list)) for _ in read_manifest(
                    table.file_io, manifest_path(table.path, meta.file_name)))
            m["lastChangelogFileCommitCompacted" if compact else "lastChangelogFilesAppended"] += files
    m["lastPartitionsWritten"] = len({p for p, _ in written})
    m["lastBucketsWritten"] = len(written)
    return m
