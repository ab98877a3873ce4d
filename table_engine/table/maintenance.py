"""The maintenance surface of a table: compaction, snapshot and partition expiry, dropping partitions, marking
partitions done, orphan file removal, rollback and file-index rewrite (each a job of the command layer,
:mod:`table_engine.ops`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from table_engine.core_options import default_commit_user
from table_engine.errors import TableEngineError
from table_engine.table.base import mutating
from table_engine.table.writing import WriteSurface

if TYPE_CHECKING:
    from table_engine.store.committing.manifest_compact import ManifestCompactResult
    from table_engine.store.lifecycle.expire import ExpireResult
    from table_engine.store.lifecycle.mark_done import MarkDoneResult
    from table_engine.store.lifecycle.orphans import OrphanResult
    from table_engine.store.lifecycle.partition_expire import PartitionExpireResult
    from table_engine.store.lifecycle.repair import RepairResult
    from table_engine.store.lifecycle.rollback import RollbackResult
    from table_engine.store.lifecycle.unexisting import UnexistingResult
    from table_engine.store.partition_spec import PartitionSpecs


class MaintenanceSurface(WriteSurface):
    """Maintenance jobs; those that commit (compaction, file-index rewrite) take a committer from
    :meth:`~WriteSurface.new_commit`."""

    @mutating
    def compact(self, full: bool = False, partitions: PartitionSpecs | None = None,
                idle_partitions_older_than_ms: int | None = None, commit_user: str | None = None,
                properties: Mapping[str, str] | None = None,
                buckets: Collection[int] | str | None = None) -> int | None:
        """Dedicated compaction; the id of the COMPACT snapshot, None when nothing to do.

        Primary-key tables: ``full`` compacts every bucket into one sorted run at the max level (else Paimon's
        universal picker per bucket: a "minor" compaction). Append tables: small files of each bucket (of each
        partition with ``bucket`` = -1) are rewritten into files near ``target-file-size`` once
        ``compaction.min.file-num`` of them are there, deletion vectors applied (see
        :mod:`table_engine.store.compaction.append_pick`); ``full`` also takes the small files left over.
        ``partitions``: only partitions matching one of these ``{column: value}`` specs or ``k=v,..`` texts (typed
        against the partition columns; a spec that matches no partition is a PartitionSpecError).
        ``idle_partitions_older_than_ms``: only partitions without new files for that long (Paimon's
        ``partition_idle_time``). ``buckets``: only these buckets of a fixed-bucket table, numbers or Paimon's
        ``'0-99,200-299'`` text (a bucket outside ``[0, bucket)`` is a CommandError). With
        ``compaction.skip-expired-partitions`` partitions already expired by ``partition.expiration-time``
        (``values-time``) are left out (:mod:`table_engine.store.compaction.select`). Buckets are compacted
        concurrently; when a concurrent commit (and expiry) replaced an input file while it ran, the compaction is
        planned again on the newer snapshot, and after a few such attempts it raises CommitConflictError (retryable)
        and leaves the table as it was. ``properties``: a string map stored in the COMPACT snapshot's
        ``properties`` (Paimon 1.2).
        Postpone bucket tables (``bucket`` = -2): the postponed rows are assigned to buckets first, which
        makes them visible (:mod:`table_engine.store.writing.postpone_compact`).
        """
        from table_engine.store.compaction.compact import compact_table
        from table_engine.store.compaction.select import table_buckets
        from table_engine.store.writing.postpone_compact import compact_postpone_table, is_postpone_table

        wanted = table_buckets(self.store, buckets)  # only fixed-bucket tables have them: fails before any work
        if is_postpone_table(self.store):  # the compaction that assigns postponed rows to buckets publishes them
            return compact_postpone_table(self.store, self._committer(commit_user), full, partitions,
                                          idle_partitions_older_than_ms, properties)
        return compact_table(self.store, self._committer(commit_user), full, partitions, idle_partitions_older_than_ms,
                             properties, wanted)

    @mutating
    def expire_snapshots(self, /, **overrides: Any) -> ExpireResult:
        """Expire snapshots (then decoupled changelogs) by the table options; ``overrides``: retain_min,
        retain_max, time_retained (ms or '1 h'), older_than_millis, max_deletes, changelog_retain_min/max,
        changelog_time_retained."""
        from table_engine.store.lifecycle.expire import ExpireConfig, expire_snapshots

        return expire_snapshots(self.store, ExpireConfig.from_options(self.options, overrides))

    @mutating
    def expire_changelogs(self, retain_min: int | None = None, retain_max: int | None = None,
                          older_than_millis: int | None = None, max_deletes: int | None = None,
                          delete_all: bool = False) -> ExpireResult:
        """Paimon's ``expire_changelogs``: expire the long-lived changelogs (``changelog/changelog-<id>``, kept by a
        decoupled changelog lifecycle) by ``changelog.num-retained.min/max`` and ``changelog.time-retained``, each
        overridable here (``older_than_millis``: an absolute cut-off instead of the time retained; ``max_deletes``:
        at most this many in one run). ``delete_all``: every long-lived changelog goes (they are all older than the
        earliest snapshot). Consumers and tags protect what they need, as in snapshot expiry."""
        from table_engine import clock
        from table_engine.store.lifecycle.expire import ExpireConfig, ExpireResult, expire_changelogs

        overrides = {k: v for k, v in (("changelog_retain_min", retain_min), ("changelog_retain_max", retain_max),
                                       ("older_than_millis", older_than_millis), ("max_deletes", max_deletes))
                     if v is not None}
        result = ExpireResult()
        expire_changelogs(self.store, ExpireConfig.from_options(self.options, overrides), clock.now_millis(), result,
                          delete_all=delete_all)
        return result

    @mutating
    def compact_manifest(self, dry_run: bool = False, commit_user: str | None = None) -> ManifestCompactResult:
        """Paimon's ``compact_manifest``: the latest snapshot's data manifests rewritten into full ones (DELETE
        entries dropped, small manifests merged) in a COMPACT snapshot that changes no data; nothing when they are
        compact already. ``dry_run``: only say whether it is needed (see
        :mod:`table_engine.store.committing.manifest_compact`)."""
        from table_engine.store.committing.manifest_compact import compact_manifest

        return compact_manifest(self.store, default_commit_user(self.options, commit_user), dry_run)

    @mutating
    def remove_unexisting_files(self, dry_run: bool = True, commit_user: str | None = None) -> UnexistingResult:
        """Paimon's ``remove_unexisting_files``: the latest snapshot's data files that are missing on storage; unless
        ``dry_run`` (the default) their removal from the metadata is committed in one OVERWRITE snapshot (their rows
        leave the table; see :mod:`table_engine.store.lifecycle.unexisting`)."""
        from table_engine.store.lifecycle.unexisting import remove_unexisting_files

        return remove_unexisting_files(self.store, default_commit_user(self.options, commit_user), dry_run)

    @mutating
    def repair(self) -> RepairResult:
        """``repair`` for a filesystem warehouse: the snapshot and changelog hint files (``LATEST``, ``EARLIEST``)
        rewritten from the files present; hints that are right are left alone (see
        :mod:`table_engine.store.lifecycle.repair`)."""
        from table_engine.store.lifecycle.repair import repair_hints

        return repair_hints(self.store)

    @mutating
    def expire_partitions(self, /, **overrides: Any) -> PartitionExpireResult:
        """Drop expired partitions; ``overrides``: expiration_time, strategy, timestamp_formatter,
        timestamp_pattern, max_expires, dry_run."""
        from table_engine.store.lifecycle.partition_expire import expire_partitions

        return expire_partitions(self.store, **overrides)

    @mutating
    def drop_partitions(self, partitions: PartitionSpecs, ignore_if_missing: bool = False) -> int | None:
        """Drop partitions (specs may name some partition keys; values as text or typed) in one OVERWRITE commit;
        its snapshot id. A spec that matches no partition is a PartitionSpecError and nothing is dropped, unless
        ``ignore_if_missing`` (then only the partitions that exist are dropped; None if none does)."""
        from table_engine.store.lifecycle.partition_expire import drop_partitions

        return drop_partitions(self.store, partitions, ignore_if_missing)

    @mutating
    def mark_partitions_done(self, partitions: PartitionSpecs) -> MarkDoneResult:
        """Mark partitions (every partition key given) done by the table's ``partition.mark-done-action``
        (Paimon's ``mark_partition_done``; the engine does ``success-file`` and refuses the others before writing
        anything). No snapshot is committed; marking again converges."""
        from table_engine.store.lifecycle.mark_done import mark_partitions_done

        return mark_partitions_done(self.store, partitions)

    @mutating
    def rescale(self, bucket_num: int | None = None, partitions: PartitionSpecs | None = None,
                commit_user: str | None = None) -> int | None:
        """Paimon's ``rescale``: rewrite the data of the selected partitions (default all) into ``bucket_num``
        buckets in one OVERWRITE commit (strict mode: a compaction or rewrite committed meanwhile fails it); its
        snapshot id, None when there is nothing in real buckets to rewrite. Postpone bucket tables need
        ``bucket_num`` and keep their postponed rows; fixed-bucket tables rewrite into their own ``bucket`` (see
        :mod:`table_engine.store.writing.rescale`). A bad ``bucket_num``, a dynamic-bucket table or a spec that
        matches no partition fails with a one-line error and changes nothing."""
        from table_engine.store.compaction.compact import compact_invisible_level0
        from table_engine.store.writing.rescale import rescale

        self.refresh()
        user = default_commit_user(self.options, commit_user)
        sid = rescale(self.store, user, bucket_num, partitions, new_user=commit_user is None)
        return compact_invisible_level0(self.store, self.new_commit, sid, overwritten=True)

    @mutating
    def remove_orphan_files(self, older_than_millis: int | None = None, dry_run: bool = False) -> OrphanResult:
        """Delete files nothing references that are older than ``older_than_millis`` (default: one day ago)."""
        from table_engine.store.lifecycle.orphans import remove_orphan_files

        return remove_orphan_files(self.store, older_than_millis, dry_run)

    @mutating
    def rollback_to(self, version: int | str) -> RollbackResult:
        """Roll back to a snapshot id (int) or a tag (str): newer snapshots and tags and their files are removed."""
        from table_engine.store.lifecycle.rollback import rollback_to

        if isinstance(version, bool) or not isinstance(version, (int, str)):
            raise TableEngineError(f"rollback needs a snapshot id or a tag name, got {version!r}")
        result = rollback_to(self.store, snapshot_id=version) if isinstance(version, int) \
            else rollback_to(self.store, tag=version)
        return result

    # ---- file indexes (issue 3: file-index helper adds methods below this line) --------------------------------

    @mutating
    def rewrite_file_index(self, partitions: PartitionSpecs | None = None,
                           commit_user: str | None = None) -> int | None:
        """(Re)build the file indexes of existing data files per the current ``file-index.*`` options (Paimon's
        ``sys.rewrite_file_index``), e.g. after ``SetOption('file-index.bloom-filter.columns', ...)``.

        ``partitions``: only files of these partitions (a list of ``{partition key: value}``; default all). Each
        changed file is replaced by itself with the new index in one COMPACT commit; returns its snapshot id, or
        None when no file changed.
        """
        from table_engine.store.lifecycle.file_index_rewrite import rewrite_file_index

        self.refresh()
        return rewrite_file_index(self.store, self._committer(commit_user), partitions)
