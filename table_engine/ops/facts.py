"""What a commit did to a table's data, for the result line of the commands that commit (``commit``)."""

from __future__ import annotations

from typing import Any

from table_engine.store.committing import snapshot_info
from table_engine.store.partition_spec import decode_partitions, format_partition_text
from table_engine.table import Table

__all__ = ["commit_facts", "commits_facts"]


def commit_facts(table: Table, snapshot_id: int | None,
                 changes: snapshot_info.SnapshotChanges | None = None) -> dict[str, Any]:
    """What a commit did to the data, for the result line's ``commit`` field (a consumer such as the Airflow
    provider tells data from upkeep by it): ``commit_kind``, ``added_rows`` and ``deleted_rows`` (of the files it
    added and removed), ``changelog_records`` (the snapshot's ``changelogRecordCount``) and ``partitions`` (the
    partitions it touched, as ``k=v,...`` text), and for a compaction ``published_rows`` (rows it moved out of the
    postpone bucket, which readers see only from then on). Empty for no snapshot."""
    if snapshot_id is None:
        return {}
    snap = table.snapshot(snapshot_id)
    if changes is None:
        changes = snapshot_info.snapshot_changes(table.file_io, table.path, snap)
    fields = table.schema.partition_fields()
    decoded = decode_partitions(list(changes.partitions), fields).to_pylist() if fields else []
    default = table.options.partition_default_name()
    facts = {"commit_kind": str(snap.commit_kind), "added_rows": changes.added_rows,
             "deleted_rows": changes.deleted_rows, "added_files": len(changes.added_files),
             "added_bytes": changes.added_bytes, "changelog_records": snap.changelog_record_count or 0,
             "partitions": [format_partition_text(p, default) for p in decoded]}
    if facts["commit_kind"] == "COMPACT":
        facts["published_rows"] = changes.deleted_postponed_rows
    return facts


def commits_facts(table: Table, snapshot_ids: list[int]) -> dict[str, Any]:
    """:func:`commit_facts` of several commits of one command (a partition expiry commits in batches), added up:
    the counts summed, the partitions of all, the kind of the last. Empty for none."""
    merged: dict[str, Any] = {}
    for sid in snapshot_ids:
        for key, value in commit_facts(table, sid).items():
            if key == "partitions":
                merged[key] = [*merged.get(key, []), *[p for p in value if p not in merged.get(key, [])]]
            elif isinstance(value, int) and key in merged:
                merged[key] += value
            else:
                merged[key] = value
    return merged
