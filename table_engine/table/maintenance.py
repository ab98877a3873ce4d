"""Maintenance of a table (snapshot expiry and rollback are on the table, as on Java's ``Table``): in the
:attr:`Table.maintenance <table_engine.table.Table.maintenance>` namespace (:class:`TableMaintenance`), Paimon's
maintenance procedures: compaction, changelog, partition and tag expiry, dropping and marking partitions, orphan and
unexisting file removal, repair, rescale, file-index rewrite, consumer upkeep, automatic tags and health
(docs/adr/0043-table-shape.md). Each is a job of the store layer; the command layer (:mod:`table_engine.ops`)
runs them by name."""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from table_engine import clock
from table_engine.core_options import default_commit_user
from table_engine.errors import CommandError, SnapshotNotExistError
from table_engine.features import Op
from table_engine.format.schema_file import clustering_columns
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.committing.manifest_compact import ManifestCompactResult, compact_manifest
from table_engine.store.compaction.compact import compact_invisible_level0, compact_table
from table_engine.store.compaction.select import table_buckets
from table_engine.store.compaction.sort_compact import SortOrder
from table_engine.store.lifecycle.expire import ExpireConfig, ExpireResult, expire_changelogs
from table_engine.store.lifecycle.file_index_rewrite import rewrite_file_index
from table_engine.store.lifecycle.health import DEFAULT_MAX_ORPHAN_FILES, TableHealth, table_health
from table_engine.store.lifecycle.maintenance import MaintenanceReport, run_commit_maintenance
from table_engine.store.lifecycle.mark_done import MarkDoneResult, mark_partitions_done
from table_engine.store.lifecycle.orphans import OrphanResult, remove_orphan_files
from table_engine.store.lifecycle.overlap import ColumnOverlap, column_overlap
from table_engine.store.lifecycle.partition_expire import PartitionExpireResult, drop_partitions, expire_partitions
from table_engine.store.lifecycle.repair import RepairResult, repair_hints
from table_engine.store.lifecycle.tag_creation import TagAutoCreation, create_batch_tag
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.lifecycle.unexisting import UnexistingResult, remove_unexisting_files
from table_engine.store.partition_spec import PartitionSpecs, partition_specs
from table_engine.store.writing.postpone_compact import compact_postpone_table, is_postpone_table
from table_engine.store.writing.rescale import rescale
from table_engine.table.guards import mutating
from table_engine.table.writing import committer

if TYPE_CHECKING:
    from table_engine.table import Table


class TableMaintenance:
    """Paimon's maintenance procedures on one table (``table.maintenance.compact()``...). Each that changes the
    table goes through the table's guard (:func:`~table_engine.table.guards.mutating`: read-only tables refuse, the
    capability gate checks maintenance); those that commit take a committer from the table."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def _guarded_table(self) -> Table:
        return self.table

    def __repr__(self) -> str:
        return f"TableMaintenance({self.table.identifier!r})"

    @mutating(Op.MAINTAIN)
    def compact(self, full: bool = False, partitions: PartitionSpecs | None = None,
                idle_partitions_older_than_ms: int | None = None, commit_user: str | None = None,
                properties: Mapping[str, str] | None = None,
                buckets: Collection[int] | str | None = None, order_strategy: str | None = None,
                order_by: str | Sequence[str] | None = None) -> int | None:
        """Dedicated compaction; the id of the COMPACT snapshot, None when nothing to do.

        ``order_strategy`` (``order``, ``zorder``, ``hilbert``) with ``order_by`` (columns, a list or ``'a,b'``):
        a sort compaction of an append table with ``bucket`` = -1 (Paimon's procedure arguments): the rows of each
        selected partition sorted together into new files, so that filters on those columns skip files
        (:mod:`table_engine.store.compaction.sort_compact`, docs/layout.md).

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
        order = SortOrder.parse(order_strategy, order_by)  # a bad order fails before any work
        if order is not None:
            return compact_table(self.table.store, committer(self.table, commit_user), full, partitions,
                                 idle_partitions_older_than_ms, properties, buckets, order)
        wanted = table_buckets(self.table.store, buckets)  # only fixed-bucket tables have them: fails before any work
        if is_postpone_table(self.table.store):  # the compaction that assigns postponed rows to buckets publishes them
            return compact_postpone_table(self.table.store, committer(self.table, commit_user), full, partitions,
                                          idle_partitions_older_than_ms, properties)
        return compact_table(self.table.store, committer(self.table, commit_user), full, partitions,
                             idle_partitions_older_than_ms, properties, wanted)

    @mutating(Op.MAINTAIN)
    def expire_changelogs(self, retain_min: int | None = None, retain_max: int | None = None,
                          older_than_millis: int | None = None, max_deletes: int | None = None,
                          delete_all: bool = False) -> ExpireResult:
        """Paimon's ``expire_changelogs``: expire the long-lived changelogs (``changelog/changelog-<id>``, kept by a
        decoupled changelog lifecycle) by ``changelog.num-retained.min/max`` and ``changelog.time-retained``, each
        overridable here (``older_than_millis``: an absolute cut-off instead of the time retained; ``max_deletes``:
        at most this many in one run). ``delete_all``: every long-lived changelog goes (they are all older than the
        earliest snapshot). Consumers and tags protect what they need, as in snapshot expiry."""
        overrides = {k: v for k, v in (("changelog_retain_min", retain_min), ("changelog_retain_max", retain_max),
                                       ("older_than_millis", older_than_millis), ("max_deletes", max_deletes))
                     if v is not None}
        result = ExpireResult()
        config = ExpireConfig.from_options(self.table.options, overrides)
        expire_changelogs(self.table.store, config, clock.now_millis(), result, delete_all=delete_all)
        return result

    @mutating(Op.MAINTAIN)
    def compact_manifest(self, dry_run: bool = False, commit_user: str | None = None) -> ManifestCompactResult:
        """Paimon's ``compact_manifest``: the latest snapshot's data manifests rewritten into full ones (DELETE
        entries dropped, small manifests merged) in a COMPACT snapshot that changes no data; nothing when they are
        compact already. ``dry_run``: only say whether it is needed (see
        :mod:`table_engine.store.committing.manifest_compact`)."""
        return compact_manifest(self.table.store, default_commit_user(self.table.options, commit_user).name, dry_run)

    @mutating(Op.MAINTAIN)
    def remove_unexisting_files(self, dry_run: bool = True, commit_user: str | None = None) -> UnexistingResult:
        """Paimon's ``remove_unexisting_files``: the latest snapshot's data files that are missing on storage; unless
        ``dry_run`` (the default) their removal from the metadata is committed in one OVERWRITE snapshot (their rows
        leave the table; see :mod:`table_engine.store.lifecycle.unexisting`)."""
        return remove_unexisting_files(self.table.store, default_commit_user(self.table.options, commit_user).name,
                                       dry_run)

    @mutating(Op.MAINTAIN)
    def repair(self) -> RepairResult:
        """``repair`` for a filesystem warehouse: the snapshot and changelog hint files (``LATEST``, ``EARLIEST``)
        rewritten from the files present; hints that are right are left alone (see
        :mod:`table_engine.store.lifecycle.repair`)."""
        return repair_hints(self.table.store)

    @mutating(Op.MAINTAIN)
    def expire_partitions(self, /, **overrides: Any) -> PartitionExpireResult:
        """Drop expired partitions; ``overrides``: expiration_time, strategy, timestamp_formatter,
        timestamp_pattern, max_expires, dry_run."""
        return expire_partitions(self.table.store, **overrides)

    @mutating(Op.MAINTAIN)
    def drop_partitions(self, partitions: PartitionSpecs, ignore_if_missing: bool = False) -> int | None:
        """Drop partitions (specs may name some partition keys; values as text or typed) in one OVERWRITE commit;
        its snapshot id. A spec that matches no partition is a PartitionSpecError and nothing is dropped, unless
        ``ignore_if_missing`` (then only the partitions that exist are dropped; None if none does)."""
        return drop_partitions(self.table.store, partitions, ignore_if_missing)

    @mutating(Op.MAINTAIN)
    def mark_partitions_done(self, partitions: PartitionSpecs) -> MarkDoneResult:
        """Mark partitions (every partition key given) done by the table's ``partition.mark-done-action``
        (Paimon's ``mark_partition_done``; the engine does ``success-file`` and refuses the others before writing
        anything). No snapshot is committed; marking again converges."""
        return mark_partitions_done(self.table.store, partitions)

    @mutating(Op.MAINTAIN)
    def rescale(self, bucket_num: int | None = None, partitions: PartitionSpecs | None = None,
                commit_user: str | None = None) -> int | None:
        """Paimon's ``rescale``: rewrite the data of the selected partitions (default all) into ``bucket_num``
        buckets in one OVERWRITE commit (strict mode: a compaction or rewrite committed meanwhile fails it); its
        snapshot id, None when there is nothing in real buckets to rewrite. Postpone bucket tables need
        ``bucket_num`` and keep their postponed rows; fixed-bucket tables rewrite into their own ``bucket`` (see
        :mod:`table_engine.store.writing.rescale`). A bad ``bucket_num``, a dynamic-bucket table or a spec that
        matches no partition fails with a one-line error and changes nothing."""
        self.table.refresh()
        user = default_commit_user(self.table.options, commit_user)
        sid = rescale(self.table.store, user, bucket_num, partitions)
        return compact_invisible_level0(self.table.store, self.table.new_commit, sid, overwritten=True)

    @mutating(Op.MAINTAIN)
    def remove_orphan_files(self, older_than_millis: int | None = None, dry_run: bool = False) -> OrphanResult:
        """Delete files nothing references that are older than ``older_than_millis`` (default: one day ago)."""
        return remove_orphan_files(self.table.store, older_than_millis, dry_run)

    @mutating(Op.MAINTAIN)
    def rewrite_file_index(self, partitions: PartitionSpecs | None = None,
                           commit_user: str | None = None) -> int | None:
        """(Re)build the file indexes of existing data files per the current ``file-index.*`` options (Paimon's
        ``sys.rewrite_file_index``), e.g. after ``SetOption('file-index.bloom-filter.columns', ...)``.

        ``partitions``: only files of these partitions (a list of ``{partition key: value}``; default all). Each
        changed file is replaced by itself with the new index in one COMPACT commit; returns its snapshot id, or
        None when no file changed.
        """
        self.table.refresh()
        return rewrite_file_index(self.table.store, committer(self.table, commit_user), partitions)


    def health(self, partitions: PartitionSpecs | None = None, *, orphans: bool = False,
               max_orphan_files: int | None = None, orphans_older_than_millis: int | None = None) -> TableHealth:
        """The table's health from metadata only (no data file read, nothing written; docs/health.md): per bucket
        and partition of the latest snapshot (of ``partitions`` if given) its files, level-0 files, sorted runs,
        small files, deletion-vector ratio and postpone backlog; snapshots and changelogs against their retention,
        consumers and their lag, tags, branches, the last compaction, tag and expiry; with ``orphans`` the orphan
        candidates older than ``orphans_older_than_millis`` (default: one day ago), ``max_orphan_files`` files
        listed at most."""
        t = self.table
        specs = partition_specs(partitions, t.schema.partition_fields(), t.store.options.partition_default_name(),
                                t.identifier) or []
        return table_health(self.table.store, self.table.identifier, partitions=specs, orphans=orphans,
                            max_orphan_files=DEFAULT_MAX_ORPHAN_FILES if max_orphan_files is None else max_orphan_files,
                            orphans_older_than_millis=orphans_older_than_millis)

    def overlap(self, column: str | None = None, snapshot_id: int | None = None) -> list[ColumnOverlap]:
        """How many files a filter on ``column`` (default: the first of ``clustering.columns``) reads per partition
        of the latest snapshot (or ``snapshot_id``), from the files' statistics only: the layout a sort compaction
        or clustering improves (:mod:`table_engine.store.lifecycle.overlap`, docs/layout.md)."""
        t = self.table
        if column is None:
            columns = clustering_columns(t.schema)
            if not columns:
                raise CommandError(f"{t.identifier}: name a column (the table has no clustering.columns)")
            column = columns[0]
        snapshot = t.latest_snapshot() if snapshot_id is None else t.snapshot(snapshot_id)
        return column_overlap(t.store, snapshot, column)

    @mutating(Op.MAINTAIN)
    def reset_consumer(self, consumer_id: str, next_snapshot_id: int | None = None) -> None:
        """Set a consumer's next snapshot, or delete the consumer when ``next_snapshot_id`` is None."""
        ConsumerManager.of(self.table.store).reset(consumer_id, next_snapshot_id)

    @mutating(Op.MAINTAIN)
    def clear_consumers(self, including: str = ".*", excluding: str | None = None,
                        dry_run: bool = False) -> list[str]:
        """Delete consumers whose id fully matches regex ``including`` and not ``excluding`` (``dry_run``: only list
        them)."""
        return ConsumerManager.of(self.table.store).clear(including, excluding, dry_run)


    @mutating(Op.MAINTAIN)
    def create_tag_from_timestamp(self, name: str, timestamp_millis: int,
                                  time_retained_ms: int | None = None) -> Snapshot:
        """Tag the first snapshot (or tagged snapshot) committed at or after ``timestamp_millis``."""
        found: Snapshot | None = None
        for snap in self.table.snapshots():
            if snap.time_millis >= timestamp_millis:
                found = snap
                break
        for snap, _ in TagManager.of(self.table.store).tagged_snapshots():
            if timestamp_millis <= snap.time_millis:
                if found is None or snap.time_millis < found.time_millis:
                    found = snap
                break
        if found is None:
            raise SnapshotNotExistError(
                f"table {self.table.identifier} has no snapshot committed at or after {timestamp_millis} ms")
        retained = time_retained_ms if time_retained_ms is not None else self.table.options.tag_default_time_retained()
        return TagManager.of(self.table.store).create(name, found, retained).snapshot

    @mutating(Op.MAINTAIN)
    def expire_tags(self, older_than_millis: int | None = None) -> list[str]:
        """Delete tags past their retention, or created before ``older_than_millis``, and automatic tags beyond
        ``tag.num-retained-max``; returns the deleted names."""
        older = None if older_than_millis is None else datetime.datetime.fromtimestamp(older_than_millis / 1000)
        retained_max = self.table.options.tag_num_retained_max()
        return TagManager.of(self.table.store).expire(older, num_retained_max=retained_max).deleted_tags

    @mutating(Op.MAINTAIN)
    def create_auto_tags(self) -> list[str]:
        """Create the automatic tags that are due (``tag.automatic-creation``; Paimon's
        ``trigger_tag_automatic_creation``)."""
        if self.table.options.tag_automatic_creation().value == "batch":
            name = create_batch_tag(self.table.store)
            return [name] if name else []
        return TagAutoCreation(self.table.store).run()

    @mutating(Op.MAINTAIN)
    def after_commit(self, commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> MaintenanceReport:
        """Run commit-time maintenance now (what writers do after a commit); nothing with ``write-only``."""
        return run_commit_maintenance(self.table.store, commit_identifier)
