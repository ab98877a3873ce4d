"""The committer: turns commit messages into one snapshot (phase two of the two-phase commit).

Optimistic concurrency, safe across processes: each attempt reads the latest snapshot, builds the new base
manifest list on top of it and publishes ``snapshot-(latest+1)`` with the FileIO's atomic create-if-absent. A
taken id means another committer won: clean up this attempt's metadata and retry (``commit.max-retries``, with
backoff between ``commit.min-retry-wait`` and ``commit.max-retry-wait``, bounded by ``commit.timeout``). A file
this commit deletes that is no longer live is a conflict that no retry can fix: CommitConflictError.
Commits are idempotent on (``commitUser``, ``commitIdentifier``).
The entries a commit's messages make (``entry_changes``), the conflict checks (``conflicts``), what an overwrite
replaces (``overwrite``) and the partitions a catalog is told (``partitions``) are decided in their own modules.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from table_engine import clock
from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import CommitUser
from table_engine.errors import CommitConflictError, CommitError, CommitOutcomeUnknownError, SnapshotNotExistError
from table_engine.features import Op, require
from table_engine.format.bucket import BucketMode
from table_engine.format.feature_detection import snapshot_features
from table_engine.format.index_manifest import (
    IndexManifestEntry,
    combine_index_entries,
    write_index_manifest,
)
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.format.manifest_list import ManifestFileMeta, read_manifest_list, write_manifest_list
from table_engine.format.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    CommitKind,
    Snapshot,
    read_snapshot,
    snapshot_properties,
)
from table_engine.io.paths import new_index_manifest_name, new_manifest_list_name
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.committing.conflicts import (
    check_deletes,
    check_dv_index,
    check_live,
    check_lsm,
    check_vectors_of_deleted,
)
from table_engine.store.committing.entry_changes import (
    Changelog,
    added_file_names,
    changelog_entries,
    compaction_part,
    data_part,
    file_entries,
    index_file_entries,
)
from table_engine.store.committing.idempotence import EXPIRED, UserCommits
from table_engine.store.committing.manifests import merge_manifests, write_manifest_files
from table_engine.store.committing.overwrite import Overwrite as Overwrite  # re-exported: callers import it here
from table_engine.store.committing.overwrite import overwrite_deletes, overwritten_index
from table_engine.store.committing.partitions import PartitionKeys, changed_partitions, partition_deltas
from table_engine.store.committing.row_tracking import assign_row_tracking, next_row_id_start
from table_engine.store.committing.scoped_properties import scoped_properties
from table_engine.store.committing.strict_mode import check_strict_mode
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpec
from table_engine.store.pins import BasePin, PartitionDelta
from table_engine.store.reading.scan import live_entries

log = logging.getLogger(__name__)

WRITER_VERSION = "table-engine-0.1.0"


@dataclass(frozen=True)
class _Attempt:
    """What every attempt of one commit publishes (the same for each retry): its manifests and entries, its kind,
    identifier and overwrite, the messages and properties. Each attempt adds what it reads from the snapshot it
    commits on (its base, row ids, the manifest lists it writes)."""

    delta: list[ManifestFileMeta]
    """The delta manifests, written once (empty with row tracking: each attempt writes its own, ids assigned)."""
    entries: list[ManifestEntry]
    index_changes: list[IndexManifestEntry]
    kind: CommitKind
    identifier: int
    overwrite: Overwrite | None
    messages: Sequence[CommitMessage]
    properties: Mapping[str, str] | None
    changelog: Changelog
    must_be_live: frozenset[str] = frozenset()
    """Data files (by name) a row-level change marked in deletion vectors: still live in the snapshot it commits on,
    or the change conflicts (a concurrent compaction rewrote them, and the marks would be lost)."""


class FileStoreCommit:
    """Commits messages of one commit user (:class:`~table_engine.core_options.CommitUser`).

    A :attr:`generated <table_engine.core_options.CommitUser.generated>` user was made up for this committer (a
    fresh UUID), so no snapshot of it can exist but the ones this committer published: the exactly-once check looks
    only at those, instead of walking back through every snapshot of the table (a constant number of requests per
    commit on an object store). Another user's check walks back once, then reads only snapshots published since
    (:class:`UserCommits`): reuse one committer for the commits of a job."""

    def __init__(self, ctx: StoreContext, user: CommitUser) -> None:
        self.ctx = ctx
        self.user = user
        self.commit_user = user.name
        self._user_commits = UserCommits(ctx, user)
        """What this committer knows of its user's snapshots (the exactly-once check)."""
        self.opts = ctx.options
        self.part_types = [f.type for f in ctx.schema.partition_fields()]
        self.partitions = PartitionKeys(ctx.schema.partition_fields(), self.opts.partition_default_name(),
                                        ctx.table_path)
        self.lost_races = 0
        """Attempts that found their snapshot id taken by another committer (each was retried)."""
        self.outcome_unknown = False
        """A publication of this committer may or may not have happened: :meth:`abort` deletes nothing any more."""
        self.dropped_compactions: set[tuple[bytes, int]] = set()
        """(partition, bucket) of the last :meth:`commit` whose writers' compaction was not committed."""
        self.published_files: set[str] = set()
        """Names of the files (data, changelog, index) that the last :meth:`commit` published: a caller that
        aborts its writer after a failure keeps these (``TableWrite.abort(keep=...)``)."""
        self._added: set[bytes] = set()
        self._dropped: set[bytes] = set()
        self._published: list[int] = []
        """Snapshots the current :meth:`commit` published (or found published), for the post-commit callback."""
        """Partitions the current :meth:`commit` added files to / dropped, collected only when the context has a
        partition callback, told once the commit returns (:meth:`_tell_partitions`)."""

    # ---- public ------------------------------------------------------------------------------------------------
    def commit(
        self,
        messages: Sequence[CommitMessage],
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
        overwrite: Overwrite | None = None,
        properties: Mapping[str, str] | None = None,
        allow_empty: bool = False,
    ) -> int | None:
        """Publish ``messages``; returns the id of the new snapshot (None when there is nothing to commit).

        New files and compaction changes of the same commit become two snapshots, as in Paimon: APPEND with the new
        data, then COMPACT with the compaction (so that the APPEND delta holds exactly the new records). A
        compaction that already conflicts with the latest snapshot fails the whole commit before anything is
        published; one that a concurrent commit invalidates in between is dropped (its new files deleted) and the
        APPEND snapshot stands. An overwrite drops compaction changes: it replaces the files they would touch.
        Append tables: a writer's compaction that already conflicts is dropped too (concurrent append writers
        compact the same small files), and the new data is committed.

        Once it returns, the context's ``partitions_added`` / ``partitions_dropped`` (a metastore catalog's, when
        set) are told the partitions its snapshots added files to / dropped: a failure there is raised with every
        snapshot published and nothing of it deleted; sending the same commit again tells them again. Then the
        context's post-commit callback (:meth:`StoreContext.published`: the Iceberg metadata) is called with each
        snapshot this call published, or found published already (a commit sent again), in order: its failure too
        is raised with the snapshots published; if the commit itself fails after publishing one, the callback
        still runs for it and its failure is only logged.
        """
        self._added, self._dropped, self._published = set(), set(), []
        try:
            sid = self._commit(messages, commit_identifier, overwrite, properties, allow_empty)
        except BaseException:
            self._tell_published(quiet=True)
            raise
        try:
            self._tell_partitions()
        finally:
            self._tell_published()
        return sid

    def commit_row_level(self, messages: Sequence[CommitMessage], must_be_live: Collection[str] = (),
                         commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
                         properties: Mapping[str, str] | None = None) -> int | None:
        """Publish a row-level change (DELETE / UPDATE / MERGE of an append table) as ONE snapshot: its new files,
        the files it rewrote (``compact_before``: deleted) and its deletion-vector index changes together. The kind
        is OVERWRITE, as Paimon's ``ConflictDetection.shouldBeOverwriteCommit`` makes a data change that deletes files
        or deletion vectors (streaming readers skip it by default: the rows it rewrote are not new). It conflicts when
        a file it deletes, or a file of ``must_be_live`` (the files it marked in deletion vectors), is no longer live,
        or the deletion vectors it replaces changed: the caller plans the change again on the newer snapshot.
        Partitions and the post-commit callback are told as by :meth:`commit`."""
        self._added, self._dropped, self._published = set(), set(), []
        self.dropped_compactions, self.published_files = set(), set()
        try:
            properties = scoped_properties(properties)
            sid = self._commit_one(messages, commit_identifier, None, properties, False, CommitKind.OVERWRITE,
                                   frozenset(must_be_live))
        except BaseException:
            self._tell_published(quiet=True)
            raise
        try:
            self._tell_partitions()
        finally:
            self._tell_published()
        return sid

    def _tell_published(self, quiet: bool = False) -> None:
        published, self._published = self._published, []
        if not published:
            return
        try:
            self.ctx.published(*published)
        except Exception:
            if not quiet:
                raise  # logged by the context

    def _commit(self, messages: Sequence[CommitMessage], commit_identifier: int, overwrite: Overwrite | None,
                properties: Mapping[str, str] | None, allow_empty: bool) -> int | None:
        properties = scoped_properties(properties)  # bad properties fail before anything is written
        if overwrite is not None and overwrite.static_partition:  # a bad spec fails before anything is written
            PartitionSpec.of(overwrite.static_partition, self.ctx.schema.partition_fields(),
                             self.opts.partition_default_name(), self.ctx.table_path)
        self.dropped_compactions = set()
        self.published_files = set()
        done = self._already_committed(commit_identifier)
        if done == EXPIRED:
            return None  # committed in a snapshot that expired since (a restarted job re-sent it)
        if done is not None:
            log.info("commit %s/%s already in snapshot %d: skipped", self.commit_user, commit_identifier, done)
            self._tell_again(messages)
            self._published.append(done)  # its callback may have failed: run it again (Java's retry)
            return done
        compaction = [c for c in map(compaction_part, messages) if not c.is_empty()]
        if compaction and (overwrite is not None or any(not data_part(m).is_empty() for m in messages)):
            data = [d for d in map(data_part, messages) if not d.is_empty()]
            if overwrite is not None:
                self.abort(compaction)
                return self._commit_one(data, commit_identifier, overwrite, properties, allow_empty)
            compaction = self._one_compaction_per_bucket(compaction)
            if not compaction:
                return self._commit_one(data, commit_identifier, None, properties, allow_empty)
            try:
                live = live_entries(self.ctx.file_io, self.ctx.table_path, self.ctx.latest_snapshot())
                check_deletes(self.ctx.table_path, file_entries(compaction), [*live, *file_entries(data)])
            except (CommitConflictError, FileNotFoundError) as e:
                # a concurrent compaction (and an expiry: the metadata read vanished) changed the files this
                # writer compacted: the data stands on its own, unless the compaction makes its changelog
                if not self._compaction_optional():
                    raise CommitConflictError(f"commit to {self.ctx.table_path}: the writer's compaction conflicts "
                                              f"with a concurrent commit ({e}); write again") from None
                log.warning("writer's compaction dropped, committing the new data only: %s", e)
                self.dropped_compactions.update((m.partition, m.bucket) for m in compaction)
                self.abort(compaction)
                return self._commit_one(data, commit_identifier, None, properties, allow_empty)
            appended = self._commit_one(data, commit_identifier, None, properties, allow_empty)
            try:
                return self._commit_one(compaction, commit_identifier, None, properties, False) or appended
            except Exception as e:  # the data is published: its compaction is optional, its failure is not the write's
                log.warning("compaction dropped, the new data is committed in snapshot %s: %s", appended, e)
                self.dropped_compactions.update((m.partition, m.bucket) for m in compaction)
                self.abort(compaction)  # deletes nothing if the compaction's publication may have happened
                return appended
        return self._commit_one(messages, commit_identifier, overwrite, properties, allow_empty)

    def _compaction_optional(self) -> bool:
        """Whether a writer's compaction may be dropped and its data committed alone: always for append tables;
        for primary-key tables unless the compaction produces the changelog (``lookup``, ``full-compaction``),
        which consumers would then miss (the write is planned again instead, see ``Table.write``)."""
        if not self.ctx.schema.primary_keys:
            return True
        return self.opts.changelog_producer() in (ChangelogProducer.NONE, ChangelogProducer.INPUT)

    def _one_compaction_per_bucket(self, compaction: list[CommitMessage]) -> list[CommitMessage]:
        """Writers that compacted the same bucket each assumed they own it: none of their compactions is kept."""
        writers = Counter((m.partition, m.bucket) for m in compaction)
        shared = [m for m in compaction if writers[(m.partition, m.bucket)] > 1]
        if shared:
            log.warning("several writers compacted bucket(s) %s of %s in one commit: their compactions are dropped "
                        "(write a bucket from one task, or use write-only writers)",
                        sorted({m.bucket for m in shared}), self.ctx.table_path)
            self.dropped_compactions.update((m.partition, m.bucket) for m in shared)
            self.abort(shared)
        return [m for m in compaction if writers[(m.partition, m.bucket)] == 1]

    def _commit_one(self, messages: Sequence[CommitMessage], commit_identifier: int, overwrite: Overwrite | None,
                    properties: Mapping[str, str] | None, allow_empty: bool, kind: CommitKind | None = None,
                    must_be_live: frozenset[str] = frozenset()) -> int | None:
        entries = file_entries(messages)
        index_changes = index_file_entries(messages)
        changelog = changelog_entries(messages)
        if not entries and not index_changes and not changelog and overwrite is None and not allow_empty:
            return None
        if kind is not None:
            pass  # a row-level change: OVERWRITE
        elif overwrite is not None:
            kind = CommitKind.OVERWRITE
        elif entries and not any(m.new_files for m in messages):
            kind = CommitKind.COMPACT
        else:
            kind = CommitKind.APPEND
        # with row tracking, the delta manifests hold ids assigned per attempt (on the attempt's latest snapshot)
        delta = [] if self.opts.row_tracking_enabled() else write_manifest_files(
            self.ctx.file_io, self.ctx.table_path, entries, self.ctx.schema.id, self.part_types,
            self.opts.manifest_target_file_size())
        changelog_manifests = write_manifest_files(
            self.ctx.file_io, self.ctx.table_path, changelog, self.ctx.schema.id, self.part_types,
            self.opts.manifest_target_file_size(), kind="changelog")
        try:
            return self._commit_loop(_Attempt(delta, entries, index_changes, kind, commit_identifier, overwrite,
                                              messages, properties, Changelog(changelog_manifests, changelog),
                                              must_be_live))
        except CommitOutcomeUnknownError:
            raise
        except BaseException:
            for m in (*delta, *changelog_manifests):
                self.ctx.file_io.try_delete(self.ctx.path_factory.manifest(m.file_name))
            raise

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the files of messages that will never be committed (an upgraded file is kept: it is live).
        Nothing is deleted after a publication whose outcome is unknown (the snapshot may reference the files)."""
        if self.outcome_unknown:
            log.warning("files of %d message(s) kept: a commit of %s to %s may have been published", len(messages),
                        self.commit_user, self.ctx.table_path)
            return
        fio = self.ctx.file_io
        for m in messages:
            upgraded = {f.file_name for f in m.compact_before}
            for f in (*m.new_files, *m.compact_after, *m.changelog_files, *m.compact_changelog_files):
                if f.file_name not in upgraded:
                    fio.try_delete(self.ctx.path_factory.data_file(m.partition, m.bucket, f))
            for idx in m.new_index_files:
                fio.try_delete(self.ctx.path_factory.index_file(idx))

    # ---- attempt loop ------------------------------------------------------------------------------------------
    def _commit_loop(self, a: _Attempt) -> int:
        retries = self.opts.commit_max_retries()
        timeout_ms = self.opts.commit_timeout()
        started = time.monotonic()
        attempt = 0
        while True:
            written: list[str] = []
            try:
                # the pin before the base is read: see pins.py
                with BasePin(self.ctx.file_io, self.ctx.table_path, self.ctx.commit_lock,
                             self.ctx.snapshot_commit) as pin:
                    sid = self._try_once(pin, a, written)
            except CommitOutcomeUnknownError:
                raise
            except BaseException:
                self._delete_manifests(written)
                raise
            if sid is not None:
                self.published_files.update(added_file_names(a.messages))
                self._published.append(sid)
                return sid
            self._delete_manifests(written)
            done = self._already_committed(a.identifier, a.kind)
            if done == EXPIRED:  # meanwhile the same user committed a newer identifier (another process)
                raise CommitError(f"commit {self.commit_user}/{a.identifier} to {self.ctx.table_path}: the same commit "
                                  "user committed a newer identifier meanwhile")
            if done is not None:
                self._tell_again(a.messages)
                self._published.append(done)
                return done
            attempt += 1
            elapsed_ms = (time.monotonic() - started) * 1000
            if attempt > retries or (timeout_ms is not None and elapsed_ms > timeout_ms):
                raise CommitConflictError(
                    f"commit to {self.ctx.table_path} gave up after {attempt} attempts: other committers kept "
                    f"taking the next snapshot id (commit.max-retries = {retries})")
            self._backoff(attempt)

    def _try_once(self, pin: BasePin, a: _Attempt, written: list[str]) -> int | None:
        latest = pin.latest()  # the id to publish must follow the real newest snapshot, held by the pin
        if latest is not None:  # the capability gate on the snapshot this commit carries forward
            require(self.ctx.table_path, snapshot_features(latest),
                    Op.MAINTAIN if a.kind == CommitKind.COMPACT else Op.WRITE)
        try:
            return self._try_on(pin, latest, a, written)
        except FileNotFoundError as e:
            now = self.ctx.latest_snapshot()
            if latest is None or now is None or now.id == latest.id:
                raise
            # snapshot latest.id expired under us (a concurrent expiry deleted its metadata): the table moved on
            log.info("metadata of snapshot %d of %s vanished while committing (%s); retrying on snapshot %d",
                     latest.id, self.ctx.table_path, e, now.id)
            return None

    def _try_on(self, pin: BasePin, latest: Snapshot | None, a: _Attempt, written: list[str]) -> int | None:
        fio, tp = self.ctx.file_io, self.ctx.table_path
        entries, index_changes, kind, overwrite, messages = a.entries, a.index_changes, a.kind, a.overwrite, a.messages
        check_strict_mode(self.ctx, self.commit_user, latest)
        new_id = 1 if latest is None else latest.id + 1
        base: list[ManifestFileMeta] = []
        if latest is not None:
            for name in (latest.base_manifest_list, latest.delta_manifest_list):
                base.extend(read_manifest_list(fio, self.ctx.path_factory.manifest(name)))
        this_delta = list(a.delta)
        all_entries = list(entries)
        next_row_id = latest.next_row_id if latest is not None else None
        if self.opts.row_tracking_enabled():
            all_entries, next_row_id = assign_row_tracking(
                new_id, next_row_id_start(latest), entries, self.opts.row_tracking_partition_group_on_commit())
            this_delta = write_manifest_files(fio, tp, all_entries, self.ctx.schema.id, self.part_types,
                                              self.opts.manifest_target_file_size())
            written.extend(m.file_name for m in this_delta)
        check_dv_index(tp, index_changes, lambda: self.ctx.index_entries(latest))
        if overwrite is not None or a.must_be_live or any(e.kind == FileKind.DELETE for e in entries):
            live = live_entries(fio, tp, latest)
            check_deletes(tp, entries, live)
            check_live(tp, a.must_be_live, live)
            if kind == CommitKind.COMPACT and self.ctx.schema.primary_keys:  # append files have no key range
                check_lsm(tp, entries, live, [f.type for f in self.ctx.schema.key_fields()])
            if kind == CommitKind.COMPACT and self.opts.deletion_vectors_enabled() and latest is not None:
                check_vectors_of_deleted(tp, entries, index_changes, self.ctx.index_entries(latest))
            if overwrite is not None:
                deletes = overwrite_deletes(overwrite, messages, live, self.partitions,
                                            self.ctx.bucket_mode is BucketMode.POSTPONE_MODE)
                extra = write_manifest_files(fio, tp, deletes, self.ctx.schema.id, self.part_types,
                                             self.opts.manifest_target_file_size())
                written.extend(m.file_name for m in extra)
                this_delta = extra + this_delta
                all_entries = deletes + all_entries
        base, merged_names = merge_manifests(fio, tp, base, self.ctx.schema.id, self.part_types,
                                             self.opts.manifest_target_file_size(),
                                             self.opts.manifest_merge_min_count(),
                                             self.opts.manifest_full_compaction_threshold_size())
        written.extend(merged_names)
        list_uuid = str(uuid.uuid4())
        base_name = new_manifest_list_name(list_uuid, "0")
        delta_name = new_manifest_list_name(list_uuid, "1")
        base_size = write_manifest_list(fio, self.ctx.path_factory.manifest(base_name), base)
        written.append(base_name)
        delta_size = write_manifest_list(fio, self.ctx.path_factory.manifest(delta_name), this_delta)
        written.append(delta_name)
        changelog_name = changelog_size = changelog_rows = None
        changelog = a.changelog
        if changelog.manifests:
            changelog_name = new_manifest_list_name(list_uuid, "changelog")
            changelog_size = write_manifest_list(fio, self.ctx.path_factory.manifest(changelog_name),
                                                 changelog.manifests)
            written.append(changelog_name)
            changelog_rows = changelog.record_count()
        index_manifest = latest.index_manifest if latest is not None else None
        if index_changes or (overwrite is not None and index_manifest):
            index_manifest = self._write_index_manifest(latest, index_changes, overwrite, messages, written)
        added = sum(e.file.row_count for e in all_entries if e.kind == FileKind.ADD)
        removed = sum(e.file.row_count for e in all_entries if e.kind == FileKind.DELETE)
        prev_total = (latest.total_record_count or 0) if latest is not None else 0
        snapshot = Snapshot(
            id=new_id, schema_id=self.ctx.schema.id, base_manifest_list=base_name, delta_manifest_list=delta_name,
            index_manifest=index_manifest, commit_user=self.commit_user, commit_identifier=a.identifier,
            commit_kind=kind, time_millis=clock.now_millis(), total_record_count=prev_total + added - removed,
            delta_record_count=added - removed, base_manifest_list_size=base_size,
            delta_manifest_list_size=delta_size, properties=snapshot_properties(a.properties),
            changelog_manifest_list=changelog_name, changelog_manifest_list_size=changelog_size,
            changelog_record_count=changelog_rows,
            writer_version=WRITER_VERSION, next_row_id=next_row_id,
        )
        statistics = partition_deltas(all_entries, self.partitions) if pin.commits_through_catalog else []
        if self._publish(pin, snapshot, statistics):
            log.info("committed snapshot %d (%s, +%d/-%d rows) to %s", new_id, kind, added, removed, tp)
            if self.ctx.partitions_added is not None or self.ctx.partitions_dropped is not None:
                self._collect_partitions(all_entries, overwrite)
            self._user_commits.published(new_id, a.identifier, kind)
            return new_id
        self.lost_races += 1
        log.info("snapshot id %d of %s was taken by another committer; retrying (lost race %d)", new_id, tp,
                 self.lost_races)
        return None

    def _publish(self, pin: BasePin, snapshot: Snapshot, statistics: Sequence[PartitionDelta] = ()) -> bool:
        """:meth:`BasePin.publish` (an atomic create, within the pin's budget); when the request fails (the store's
        retries exhausted), its outcome is found out by reading ``snapshot-<id>`` back: ours (same manifest list, a
        fresh UUID) means published, another committer's means a lost race, none means not published (the error is
        raised). If even that read fails, the outcome is unknown: :class:`CommitOutcomeUnknownError`, and nothing
        of this commit may be deleted."""
        fio, tp = self.ctx.file_io, self.ctx.table_path
        try:
            return pin.publish(snapshot, statistics)
        except CommitOutcomeUnknownError:  # a catalog's commit (SnapshotCommit) could not find it out either
            self.outcome_unknown = True
            raise
        except OSError as e:
            try:
                found = read_snapshot(fio, tp, snapshot.id)
            except SnapshotNotExistError:
                raise e from None
            except Exception:
                self.outcome_unknown = True
                raise CommitOutcomeUnknownError(
                    f"commit to {tp}: publishing snapshot {snapshot.id} failed and its outcome is unknown ({e}); "
                    "its files are kept") from None
            if found.base_manifest_list != snapshot.base_manifest_list:
                return False
            log.info("snapshot %d of %s was published although the request failed (%s)", snapshot.id, tp, e)
            return True

    # ---- partitions told to a catalog ---------------------------------------------------------------------------
    def _collect_partitions(self, entries: Sequence[ManifestEntry], overwrite: Overwrite | None) -> None:
        """A snapshot was published: its ADD entries' partitions are added (Paimon's
        ``AddPartitionCommitCallback.call``); a partition drop's DELETE entries' partitions are dropped."""
        added, dropped = changed_partitions(entries, overwrite is not None and bool(overwrite.drop_partitions))
        self._added.update(added)
        self._dropped.update(dropped)

    def _tell_again(self, messages: Sequence[CommitMessage]) -> None:
        """A commit found committed already (sent again): its partitions are told again, in case the first telling
        failed (Paimon's ``AddPartitionCommitCallback.retry``)."""
        if self.ctx.partitions_added is not None:
            self._added.update(m.partition for m in messages if m.new_files or m.compact_after)

    def _tell_partitions(self) -> None:
        """Tell the context's callbacks the partitions :meth:`commit` collected (partitioned tables only)."""
        added, self._added = self._added, set()
        dropped, self._dropped = self._dropped, set()
        if not self.partitions.fields:
            return
        if added and self.ctx.partitions_added is not None:
            self.ctx.partitions_added(self.partitions.values(added))
        if dropped and self.ctx.partitions_dropped is not None:
            self.ctx.partitions_dropped(self.partitions.values(dropped))

    # ---- pieces ------------------------------------------------------------------------------------------------
    def _write_index_manifest(self, latest: Snapshot | None, changes: list[IndexManifestEntry],
                              overwrite: Overwrite | None, messages: Sequence[CommitMessage],
                              written: list[str]) -> str | None:
        previous = self.ctx.index_entries(latest)
        if overwrite is not None:  # overwritten partitions lose their old index files
            previous, changes = overwritten_index(overwrite, previous, changes, messages, self.partitions)
        merged = combine_index_entries(previous, changes)
        if not merged:
            return None
        name = new_index_manifest_name()
        write_index_manifest(self.ctx.file_io, self.ctx.path_factory.manifest(name), merged)
        written.append(name)
        return name

    def _already_committed(self, identifier: int, kind: CommitKind | None = None) -> int | None:
        """Snapshot id holding (commit_user, identifier[, kind]), None or :data:`EXPIRED` (:meth:`UserCommits.find`)."""
        return self._user_commits.find(identifier, kind)

    def _backoff(self, attempt: int) -> None:
        lo = self.opts.commit_min_retry_wait()
        hi = self.opts.commit_max_retry_wait()
        wait = min(hi, lo * (2 ** min(attempt, 16)))
        time.sleep(random.uniform(lo, max(lo, wait)) / 1000.0)

    def _delete_manifests(self, names: Sequence[str]) -> None:
        for n in names:
            self.ctx.file_io.try_delete(self.ctx.path_factory.manifest(n))

