"""Job-level commits of Spark writes: exactly once, whatever Spark retries.

Spark runs a data source's ``commit()`` once per job, in a Python worker, with one message per task (the
successful attempt of a retried task). Everything needed to make that commit idempotent lives in the table itself:
a snapshot records its ``commitUser`` and ``commitIdentifier``, and a write job commits under one commit user
(fixed for the job, or given by the caller so that a re-run of the whole job is recognised) with one identifier
(the batch id for streaming micro-batches). :func:`commit_once` publishes the snapshot unless one with that
(user, identifier) exists already, in which case the job's files that the snapshot does not reference are deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from table_engine.core_options import CommitUser
from table_engine.errors import DataError
from table_engine.format.bucket import BucketMode
from table_engine.format.snapshot import Snapshot
from table_engine.store.committing import snapshot_info
from table_engine.store.committing.commit import Overwrite
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.compact import compact_invisible_level0, compact_written_append_partitions
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.table import Table

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskFiles:
    """What one writer task produced: its commit messages and counts."""

    task: int
    attempt: int
    messages: tuple[CommitMessage, ...]
    rows: int
    staged: tuple[str, ...] = ()
    """Arrow IPC files of rows staged for the job's commit (updates by row id, upserts by key)"""

    @property
    def files(self) -> int:
        return sum(len(m.new_files) for m in self.messages)


def find_commit(table: Table, commit_user: str, identifier: int, since_millis: int | None = None
                ) -> Snapshot | None:
    """The snapshot of (``commit_user``, ``identifier``) in ``table``, if committed (looking back no further than
    ``since_millis`` when given)."""
    return snapshot_info.find_commit(table.file_io, table.path, commit_user, identifier, since_millis=since_millis)


def commit_once(table: Table, messages: Sequence[CommitMessage], user: CommitUser, identifier: int,
                overwrite: Overwrite | None = None) -> int | None:
    """Commit ``messages`` as one snapshot of (``user``, ``identifier``) unless that snapshot exists.

    A user generated for this job (:attr:`CommitUser.generated <table_engine.core_options.CommitUser.generated>`)
    can only have snapshots committed since: the lookup reads those (a commit the same job repeats) and no older
    history, and the cost stays constant however long the table's history is.

    Returns the snapshot id (the existing one for a repeated commit; None when there was nothing to commit; the
    COMPACT snapshot that makes a first-row or deletion-vector table's new level-0 files visible when the tasks'
    own compaction could not be committed). When the commit fails, the messages' files are deleted and the table
    is unchanged.
    """
    commit_user, since = user.name, user.since_millis
    committer = table.new_commit(user)
    done = find_commit(table, commit_user, identifier, since)
    if done is not None:
        log.info("%s: commit %s/%s is snapshot %d already; discarding files it does not reference",
                 table.identifier, commit_user, identifier, done.id)
        discard_unreferenced(table, messages, done)
        return done.id
    try:
        sid = committer.commit(messages, identifier, overwrite=overwrite)
    except BaseException:
        if find_commit(table, commit_user, identifier, since) is None:
            committer.abort(messages)
        raise
    ctx = table.store
    if unaware_append(table) and not data_evolution_enabled(table.schema.options):
        # the tasks did not compact (see write_task): compact what they wrote, once. (Writers of a data-evolution
        # table never compact in passing, as Table.write: its compaction merges row ranges, a maintenance job.)
        return compact_written_append_partitions(ctx, table.new_commit, sid,
                                                 {m.partition for m in messages if m.new_files})
    # first-row and deletion-vector tables: what the tasks' compaction left on level 0 is invisible to batch reads
    return compact_invisible_level0(ctx, table.new_commit, sid, overwrite is not None, committer.dropped_compactions)


def unaware_append(table: Table) -> bool:
    """An append table with ``bucket`` = -1: every Spark task of a write writes bucket 0 of its partitions, so the
    tasks do not compact and the driver compacts once after the commit."""
    return table.store.bucket_mode is BucketMode.BUCKET_UNAWARE


def abort_uncommitted(table: Table, messages: Sequence[CommitMessage], commit_user: str, identifier: int) -> None:
    """Delete the files of ``messages`` unless (``commit_user``, ``identifier``) was committed (then keep those
    the snapshot references)."""
    done = find_commit(table, commit_user, identifier)
    if done is None:
        table.new_commit(commit_user).abort(messages)
    else:
        discard_unreferenced(table, messages, done)


def discard_unreferenced(table: Table, messages: Sequence[CommitMessage], snapshot: Snapshot) -> None:
    """Delete the files of ``messages`` that ``snapshot`` did not add."""
    added = _referenced_file_names(table, snapshot)
    orphans = []
    for m in messages:
        files = [f for f in m.new_files if f.file_name not in added]
        index = [i for i in m.new_index_files if i.file_name not in added]
        if files or index:
            orphans.append(replace(m, new_files=files, compact_before=[], compact_after=[], changelog_files=[],
                                   compact_changelog_files=[],
                                   new_index_files=index, deleted_index_files=[]))
    if orphans:
        table.new_commit(snapshot.commit_user).abort(orphans)


def check_bucket_owners(tasks: Iterable[TaskFiles]) -> None:
    """Dynamic bucket mode: no two tasks may have added keys to the same (partition, bucket).

    Each task assigns new keys to buckets from its own view of the HASH index; two tasks doing so for one bucket
    (or one key) would publish conflicting index files or the same key in two buckets. Routing rows by key hash,
    with each task owning its own buckets, rules this out; this check proves it for the job being committed.
    """
    owners: dict[tuple[bytes, int], int] = {}
    for t in tasks:
        for m in t.messages:
            if not m.new_index_files:
                continue
            other = owners.setdefault((m.partition, m.bucket), t.task)
            if other != t.task:
                raise DataError(
                    f"tasks {other} and {t.task} both added new keys to dynamic bucket {m.bucket} of one partition: "
                    "rows of a dynamic-bucket table must be routed by key so that one task owns each key "
                    "(use table_engine.spark.write_dataframe, or prepare_write() before df.write)")


def _referenced_file_names(table: Table, snapshot: Snapshot) -> set[str]:
    """Data files ``snapshot`` added and index files it references."""
    changes = snapshot_info.snapshot_changes(table.file_io, table.path, snapshot)
    return {*changes.added_files, *changes.index_files}
