"""What a commit did to a table's data, for the result line of the commands that commit (``commit``)."""

from __future__ import annotations

from typing import Any

from table_engine.ops.metrics import commit_metrics
from table_engine.store.committing import snapshot_info
from table_engine.store.partition_spec import decode_partitions, format_partition_text
from table_engine.table import Table

__all__ = ["commit_facts", "commits_facts", "write_facts"]


def commit_facts(table: Table, snapshot_id: int | None,
                 changes: snapshot_info.SnapshotChanges | None = None) -> dict[str, Any]:
    """What a commit did to the data, for the result line's ``commit`` field (a consumer such as the Airflow
    provider tells data from upkeep by it): ``commit_kind``, ``added_rows`` and ``deleted_rows`` (of the files it
    added and removed), ``changelog_records`` (the snapshot's ``changelogRecordCount``) and ``partitions`` (the
    partitions it touched, as ``k=v,...`` text), for a compaction ``published_rows`` (rows it moved out of the
    postpone bucket, which readers see only from then on), and ``metrics``, Paimon's commit metrics
    (:func:`~table_engine.ops.metrics.commit_metrics`). Empty for no snapshot."""
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
    facts["metrics"] = commit_metrics(table, [snapshot_id])
    return facts


def commits_facts(table: Table, snapshot_ids: list[int]) -> dict[str, Any]:
    """:func:`commit_facts` of several commits of one command (a partition expiry commits in batches), added up:
    the counts summed, the partitions of all, the kind of the first. Empty for none."""
    merged: dict[str, Any] = {}
    for sid in snapshot_ids:
        for key, value in commit_facts(table, sid).items():
            if key == "partitions":
                merged[key] = [*merged.get(key, []), *[p for p in value if p not in merged.get(key, [])]]
            elif key == "metrics":
                continue
            elif isinstance(value, int) and key in merged:
                merged[key] += value
            elif key not in merged:
                merged[key] = value
    if merged:
        merged["metrics"] = commit_metrics(table, snapshot_ids)
    return merged


def write_facts(table: Table, snapshot_id: int | None) -> dict[str, Any]:
    """The facts of a write whose last snapshot is ``snapshot_id``: a write commits its data (APPEND or OVERWRITE)
    and, on some tables, a compaction right after under the same commit user and identifier (a ``lookup`` or
    ``full-compaction`` changelog producer, a full compaction every N commits), so its facts are those of its data
    commit, with the changelog records of all of them and ``compacted`` true; ``snapshot_ids`` lists them. A data
    event then says APPEND, not the COMPACT that followed it. Empty for no snapshot."""
    if snapshot_id is None:
        return {}
    ids = _one_commit(table, snapshot_id)
    kinds = {i: str(table.snapshot(i).commit_kind) for i in ids}
    data = [i for i in ids if kinds[i] != "COMPACT"]
    if len(ids) == 1:
        return commit_facts(table, snapshot_id)
    if not data:  # compactions only (no data commit retained): as they are
        return {**commits_facts(table, ids), "snapshot_ids": ids}
    facts = commits_facts(table, data)
    facts["changelog_records"] = sum(table.snapshot(i).changelog_record_count or 0 for i in ids)
    facts["compacted"] = True
    facts["snapshot_ids"] = ids
    facts["metrics"] = commit_metrics(table, ids)
    return facts


def _one_commit(table: Table, snapshot_id: int) -> list[int]:
    """The snapshots of the one commit of a writer ending at ``snapshot_id``, oldest first: ``snapshot_id``, and when
    it is a compaction, the compactions and then the data commit right before it by the same user under the same
    identifier (a batch write's identifier is the same on every write: the walk stops at the first data commit, so
    an earlier write is never counted); an expired snapshot ends the walk."""
    from table_engine.errors import SnapshotNotExistError

    last = table.snapshot(snapshot_id)
    ids = [snapshot_id]
    earliest = table.earliest_snapshot_id() or snapshot_id
    if str(last.commit_kind) != "COMPACT":
        return ids
    for sid in range(snapshot_id - 1, earliest - 1, -1):
        try:
            snap = table.snapshot(sid)
        except SnapshotNotExistError:
            break
        if (snap.commit_user, snap.commit_identifier) != (last.commit_user, last.commit_identifier):
            break
        ids.insert(0, sid)
        if str(snap.commit_kind) != "COMPACT":
            break
    return ids
