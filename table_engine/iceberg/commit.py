"""Write the Iceberg metadata of one Paimon snapshot, as Paimon Java's commit callback does
(``IcebergCommitCallback``) with ``metadata.iceberg.storage`` = ``table-location`` (or ``hadoop-catalog``); a table
with the option gives its store context an :class:`IcebergCommitCallback`, called after every snapshot the engine
publishes (ADR 0046).

For snapshot N (:meth:`IcebergCommitter.commit`): if ``v<N>.metadata.json`` exists and names snapshot N's commit,
nothing (idempotent, as Java's retry); a ``v<N>`` of another timeline is replaced, versions above the latest
snapshot deleted, and a call that finds a newer version does nothing. If ``v<N-1>.metadata.json`` exists,
**incremental**: the snapshot's delta (its delta manifest list) is applied to the base's manifests -- added files go
to new manifests; a manifest holding a removed file is rewritten with that file DELETED and the rest EXISTING
(operation ``overwrite``, else ``append``); small manifests are merged past ``metadata.iceberg.compaction.*``;
snapshots past the ``snapshot.num-retained.*`` / ``snapshot.time-retained`` window (or below Paimon's earliest)
leave the metadata, with their manifest lists and the manifests no later list uses. A few missing versions below N
are caught up one by one first. Otherwise (first snapshot, or a long gap) a **full rewrite**: every visible live file
of snapshot N in new manifests, a new table uuid, and the lists and manifests of every older version deleted.
Snapshot 1 first deletes the whole metadata directory (a re-created table). Older ``v<k>.metadata.json`` go by
``metadata.iceberg.delete-after-commit.enabled`` / ``previous-versions-max``. ``v<N>`` is created only if absent:
of two committers the loser deletes its own files.

Refused (:class:`~table_engine.errors.UnsupportedError`): deletion vectors (Paimon 1.0 writes no Iceberg delete
files, so Iceberg readers would see deleted rows), data evolution (rows merged from column files), ``hive-catalog``
storage (needs a metastore client), and the types :mod:`table_engine.iceberg.types` refuses.

Differences from Java, kept on purpose (docs/iceberg.md): Avro with Iceberg's field ids (:mod:`.manifest`), a
``schema.name-mapping.default`` property (the engine's Parquet files carry no field ids), snapshot ``timestamp-ms``
= the Paimon snapshot's time (Java: the callback's clock), manifests not rolled at ``manifest.target-file-size``,
deflate by default (Java: snappy), and expiry keeps every snapshot the retention window keeps (Java's loop can
drop listed manifest lists when all but the newest snapshot expire).
"""

from __future__ import annotations

import json
import logging
import uuid as uuid_module
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from table_engine.clock import now_millis
from table_engine.core_options import CoreOptions
from table_engine.errors import CorruptMetadataError, SnapshotNotExistError, UnsupportedError
from table_engine.format.manifest import FileKind, ManifestEntry, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import (
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    read_snapshot,
    snapshot_path,
)
from table_engine.iceberg.files import FileConverter, visible_entries
from table_engine.iceberg.manifest import (
    ADDED,
    DELETED,
    EXISTING,
    IcebergManifestEntry,
    IcebergManifestFileMeta,
    ManifestCodec,
    manifest_entry_schema,
    manifest_file_metadata,
    spec_json,
)
from table_engine.iceberg.metadata import (
    APPEND,
    OVERWRITE,
    IcebergMetadata,
    IcebergPathFactory,
    IcebergSnapshot,
    metadata_version,
)
from table_engine.iceberg.options import IcebergOptions, StorageLocation, StorageType, iceberg_storage
from table_engine.iceberg.types import PARTITION_FIELD_ID_START, highest_field_id, iceberg_schema, name_mapping
from table_engine.io.file_io import FileIO
from table_engine.io.paths import MAIN_BRANCH, manifest_path
from table_engine.store.reading.scan import live_entries

if TYPE_CHECKING:
    from table_engine.table.table import Table

NAME_MAPPING = "schema.name-mapping.default"
MAX_CATCH_UP = 10
"""How many missing versions below ``v<N>`` a commit writes one by one (a concurrent committer's callback not run
yet; a callback that failed) before it rewrites the metadata in full instead."""

log = logging.getLogger(__name__)


def metadata_dir(table_path: str, storage: StorageType, location: StorageLocation | None = None) -> str:
    """Where a table's Iceberg metadata goes (Java's ``catalogTableMetadataPath``): ``<table>/metadata`` for the
    ``table-location`` storage location (the default of ``table-location`` storage), and
    ``<warehouse>/iceberg/<db>/<table>/metadata`` for ``catalog-location`` (the default of ``hadoop-catalog``; the
    table must sit in ``<warehouse>/<db>.db/``)."""
    if storage not in (StorageType.TABLE_LOCATION, StorageType.HADOOP_CATALOG):
        raise UnsupportedError(f"metadata.iceberg.storage={storage.value} is not written by this engine "
                               "(table-location and hadoop-catalog are)")
    if location is None:
        location = (StorageLocation.TABLE_LOCATION if storage == StorageType.TABLE_LOCATION
                    else StorageLocation.CATALOG_LOCATION)
    path = table_path.rstrip("/")
    if location == StorageLocation.TABLE_LOCATION:
        return f"{path}/metadata"
    db_path, _, table_name = path.rpartition("/")
    warehouse, _, db_dir = db_path.rpartition("/")
    if not db_dir.endswith(".db"):
        raise UnsupportedError(f"metadata.iceberg.storage={storage.value} with catalog-location metadata needs a "
                               f"table in a Paimon warehouse (<warehouse>/<db>.db/<table>), not {table_path}; set "
                               "metadata.iceberg.storage-location=table-location")
    return f"{warehouse}/iceberg/{db_dir[:-3]}/{table_name}/metadata"


def commit_identity(snapshot: Snapshot) -> str:
    """:data:`~table_engine.iceberg.metadata.COMMIT_IDENTITY` of a Paimon snapshot: its uuid, or for a snapshot
    without one ``<commit user>:<commit identifier>:<time>`` (as Paimon Java)."""
    if snapshot.uuid:
        return snapshot.uuid
    return f"{snapshot.commit_user}:{snapshot.commit_identifier}:{snapshot.time_millis}"


@dataclass
class IcebergCommitter:
    """Writes Iceberg metadata for snapshots of one table. ``storage`` overrides the table's option (tests write
    metadata for tables that do not set it)."""

    table: Table
    storage: StorageType | None = None
    clock: Callable[[], int] = now_millis
    options: IcebergOptions = field(init=False)
    schema: TableSchema = field(init=False)

    def __post_init__(self) -> None:
        self.schema = self.table.schema
        self.options = IcebergOptions.of(self.schema.options)
        storage = self.storage or self.options.storage
        if storage == StorageType.DISABLED:
            raise UnsupportedError(f"{self.table.identifier}: metadata.iceberg.storage is disabled")
        core = CoreOptions(self.schema.options)
        if core.deletion_vectors_enabled():
            raise UnsupportedError("Iceberg compatibility with deletion vectors: Paimon 1.0 writes no Iceberg "
                                   "delete files, Iceberg readers would see deleted rows")
        if core.data_evolution_enabled():
            raise UnsupportedError("Iceberg compatibility with data-evolution.enabled: rows are merged from column "
                                   "files, which Iceberg readers cannot do")
        self.file_io: FileIO = self.table.file_io
        self.dir = metadata_dir(self.table.path, storage, self.options.storage_location)
        self.core = core
        self.converter = FileConverter(self.file_io, self.table.path, self.schema, core.num_levels() - 1)
        self.partition_fields = tuple(self.schema.partition_fields())

    def check(self) -> None:
        """Raise :class:`UnsupportedError` if the table's schema cannot be written as Iceberg metadata (a type or a
        partition key Java refuses), before a commit publishes anything."""
        iceberg_schema(self.schema)
        manifest_entry_schema(self.partition_fields)

    # ---- entry points --------------------------------------------------------------------------------------------
    def commit(self, snapshot_id: int) -> str | None:
        """Write the metadata of Paimon snapshot ``snapshot_id``; returns the path of its ``v<N>.metadata.json``, or
        None when there is nothing to do (the snapshot is gone: a rollback, or it expired; or metadata of a newer
        snapshot is there already: this call is late).

        ``v<N>`` already there and of this snapshot (:func:`commit_identity`): the hint is repaired, nothing else.
        ``v<N>`` of another timeline (a rollback or a re-created table reused the id): replaced. Versions above the
        latest snapshot (left by a rollback) are deleted. With ``v<k>`` of this timeline for a ``k`` shortly below
        N, the snapshots ``k+1..N`` are written incrementally one after the other (a concurrent committer's
        callback that has not written ``v<N-1>`` yet is caught up, not raced with a full rewrite); otherwise a full
        rewrite. ``v<N>`` is created only if absent: a committer that loses it to another deletes its own files."""
        fio = self.file_io
        try:
            snapshot = read_snapshot(fio, self.table.path, snapshot_id)
        except SnapshotNotExistError:
            log.info("Iceberg metadata of %s: snapshot %d is gone (rolled back or expired): nothing to write",
                     self.table.path, snapshot_id)
            return None
        versions = self._versions()
        # the latest after the listing: every version listed is of a snapshot published before it was read, so a
        # version above it was left by a rollback, never written by a commit that raced this one
        latest = latest_snapshot_id(fio, self.table.path) or snapshot_id
        if any(snapshot_id < v <= latest for v in versions):
            return None  # a newer snapshot's metadata is there: this call is late, and must not move the hint back
        paths = IcebergPathFactory(self.dir)
        if snapshot_id == 1:
            fio.delete(self.dir, recursive=True)  # a re-created table (Java: its old metadata may be elsewhere)
            versions = set()
        for v in sorted(v for v in versions if v > latest):  # left by a rollback (or an abandoned timeline)
            fio.delete(paths.metadata_file(v))
        versions = {v for v in versions if v <= latest}
        target = paths.metadata_file(snapshot_id)
        if snapshot_id in versions:
            if self._of_this_timeline(snapshot_id, snapshot):
                if latest == snapshot_id:
                    self._write_hint(paths, snapshot_id)
                    self._delete_old_versions(paths, snapshot_id, versions)
                return target
            fio.delete(target)
            versions.discard(snapshot_id)
        return self._write(paths, snapshot, versions)

    def _write(self, paths: IcebergPathFactory, snapshot: Snapshot, versions: set[int]) -> str | None:
        """Write ``v<N>``: incrementally through the versions missing below it, or in full."""
        fio, snapshot_id = self.file_io, snapshot.id
        target = paths.metadata_file(snapshot_id)
        below = [v for v in versions if v < snapshot_id]
        start = max(below) if below else None
        if start is not None and snapshot_id - start <= MAX_CATCH_UP and self._of_this_timeline(start):
            for k in range(start + 1, snapshot_id + 1):
                if not self._incremental(k, snapshot if k == snapshot_id else None):
                    break
            else:
                self._delete_old_versions(paths, snapshot_id, versions | set(range(start, snapshot_id)))
                return target
        full = IcebergPathFactory(self.dir)
        try:
            self._without_base(full, snapshot)
        except (FileNotFoundError, SnapshotNotExistError):
            self._discard(full)
            if fio.exists(snapshot_path(self.table.path, snapshot_id)):
                raise
            # an expiry removed the snapshot while it was read: a newer one is the latest, and its call writes
            log.info("Iceberg metadata of %s: snapshot %d expired while it was written; left to a newer one",
                     self.table.path, snapshot_id)
            return None
        self._delete_old_versions(paths, snapshot_id, versions)
        return target

    def forget(self) -> None:
        """Delete the table's Iceberg metadata (before a rollback or fast-forward rewrites the history: the next
        :meth:`commit` writes it afresh), so Iceberg readers never see snapshots whose files are being deleted."""
        self.file_io.delete(self.dir, recursive=True)

    # ---- versions ------------------------------------------------------------------------------------------------
    def _versions(self) -> set[int]:
        if not self.file_io.exists(self.dir):
            return set()
        out = set()
        for status in self.file_io.list_status(self.dir):
            v = metadata_version(status.path.rsplit("/", 1)[-1])
            if v is not None:
                out.add(v)
        return out

    def _read(self, version: int) -> IcebergMetadata | None:
        path = IcebergPathFactory(self.dir).metadata_file(version)
        try:
            return IcebergMetadata.from_json(self.file_io.read_bytes(path).decode(), path)
        except FileNotFoundError:
            return None

    def _of_this_timeline(self, version: int, snapshot: Snapshot | None = None) -> bool:
        """Whether ``v<version>`` describes Paimon snapshot ``version`` as it is now: its identity is the
        snapshot's, or unknown (metadata without it; a snapshot that expired since)."""
        try:
            metadata = self._read(version)
        except CorruptMetadataError:
            return False
        if metadata is None or metadata.current_snapshot_id != version:
            return False
        identity = metadata.current_snapshot().identity
        if identity is None:
            return True
        if snapshot is None:
            try:
                snapshot = read_snapshot(self.file_io, self.table.path, version)
            except SnapshotNotExistError:
                return True
        return identity == commit_identity(snapshot)

    def _write_hint(self, paths: IcebergPathFactory, snapshot_id: int) -> None:
        hint = paths.version_hint()
        try:
            if self.file_io.read_bytes(hint).decode().strip() == str(snapshot_id):
                return
        except FileNotFoundError:
            pass
        self.file_io.write_bytes(hint, str(snapshot_id).encode(), overwrite=True)

    def _delete_old_versions(self, paths: IcebergPathFactory, snapshot_id: int, versions: set[int]) -> None:
        """``metadata.iceberg.delete-after-commit.enabled``: the ``v<k>.metadata.json`` older than the newest
        ``metadata.iceberg.previous-versions-max`` before ``v<N>`` go (Java's ``deleteApplicableMetadataFiles``)."""
        if not self.options.delete_after_commit:
            return
        keep_from = snapshot_id - self.options.previous_versions_max
        for v in sorted(versions | {snapshot_id - 1}):
            if v < keep_from:
                self.file_io.delete(paths.metadata_file(v))

    def _incremental(self, snapshot_id: int, snapshot: Snapshot | None) -> bool:
        """Write ``v<N>`` from ``v<N-1>``; False when that is not possible (the snapshot or the base is gone)."""
        paths = IcebergPathFactory(self.dir)
        if self.file_io.exists(paths.metadata_file(snapshot_id)):
            return True  # a concurrent committer wrote it
        try:
            if snapshot is None:
                snapshot = read_snapshot(self.file_io, self.table.path, snapshot_id)
            self._with_base(paths, snapshot, paths.metadata_file(snapshot_id - 1))
        except (FileNotFoundError, SnapshotNotExistError):
            self._discard(paths)
            return self.file_io.exists(paths.metadata_file(snapshot_id))  # the base went: written by another?
        return True

    def _discard(self, paths: IcebergPathFactory) -> None:
        """Delete the manifests and lists of a commit that did not publish its ``v<N>``."""
        if paths.published:
            return
        for path in paths.written:
            self.file_io.delete(path)

    def _codec(self, schema: TableSchema) -> ManifestCodec:
        return ManifestCodec(self.file_io, self.partition_fields, self.options.codec,
                             self.options.legacy_manifest_list,
                             manifest_file_metadata(iceberg_schema(schema), self.partition_fields))

    def _list_metadata(self, snapshot_id: int, parent: int | None) -> dict[str, str]:
        out = {"snapshot-id": str(snapshot_id), "sequence-number": str(snapshot_id), "format-version": "2"}
        if parent is not None:
            out["parent-snapshot-id"] = str(parent)
        return out

    def _properties(self, schema_ids: Sequence[int]) -> dict[str, str]:
        schemas = [self.converter.schemas.get(i) for i in schema_ids]
        return {**self.options.table_properties, NAME_MAPPING: json.dumps(name_mapping(schemas))}

    def _publish(self, paths: IcebergPathFactory, snapshot_id: int, metadata: IcebergMetadata) -> bool:
        """Create ``v<N>`` if absent (False: another committer did; this commit's files are deleted), then the hint
        unless a newer version is there already."""
        if not self.file_io.write_if_absent(paths.metadata_file(snapshot_id), metadata.to_json().encode()):
            log.info("Iceberg metadata v%d of %s was written by another committer", snapshot_id, self.table.path)
            self._discard(paths)
            return False
        paths.published = True
        if not self.file_io.exists(paths.metadata_file(snapshot_id + 1)):
            self._write_hint(paths, snapshot_id)
        return True

    # ---- full rewrite --------------------------------------------------------------------------------------------
    def _without_base(self, paths: IcebergPathFactory, snapshot: Snapshot) -> None:
        n = snapshot.id
        schema = self.converter.schemas.get(snapshot.schema_id)
        codec = self._codec(schema)
        entries = visible_entries(self.converter, live_entries(self.file_io, self.table.path, snapshot))
        new = [IcebergManifestEntry(ADDED, n, n, n, self.converter.data_file(e)) for e in entries]
        metas = [codec.write_manifest(paths.new_manifest(), new, n)] if new else []
        list_path = paths.new_manifest_list()
        codec.write_manifest_list(list_path, metas, self._list_metadata(n, None))
        spec = spec_json(self.partition_fields)
        metadata = IcebergMetadata(
            str(uuid_module.uuid4()), self.table.path, n, self.clock(), highest_field_id(schema),
            [iceberg_schema(schema)], schema.id, [{"spec-id": 0, "fields": spec}],
            max((f["field-id"] for f in spec), default=PARTITION_FIELD_ID_START - 1),
            [IcebergSnapshot(n, n, snapshot.time_millis, APPEND, list_path, schema.id, commit_identity(snapshot))], n,
            self._properties([schema.id]))
        if self._publish(paths, n, metadata):
            self._expire_all_before(codec, n)

    def _expire_all_before(self, codec: ManifestCodec, snapshot_id: int) -> None:
        """Delete the manifest lists and manifests of every ``v<k>.metadata.json`` (k < N); the files themselves go
        by :meth:`_delete_old_versions` (Java's ``expireAllBefore``). Files a newer version uses are kept: a
        concurrent committer may have built ``v<N+1>`` on a ``v<N>`` of its own, from these very files, and had
        it deleted before this ``v<N>`` was created (the simulation's ``append-iceberg``)."""
        if not self.file_io.exists(self.dir):
            return
        older: list[IcebergMetadata] = []
        newer: list[IcebergMetadata] = []
        for status in self.file_io.list_status(self.dir):
            version = metadata_version(status.path.rsplit("/", 1)[-1])
            if version is None or version == snapshot_id:
                continue
            try:
                metadata = IcebergMetadata.from_json(self.file_io.read_bytes(status.path).decode(), status.path)
            except FileNotFoundError:
                continue  # deleted meanwhile (an old version's cleanup)
            (older if version < snapshot_id else newer).append(metadata)
        in_use = self._files_of(codec, newer, delete=False)
        self._files_of(codec, older, delete=True, keep=in_use)

    def _files_of(self, codec: ManifestCodec, versions: Sequence[IcebergMetadata], delete: bool,
                  keep: frozenset[str] = frozenset()) -> frozenset[str]:
        """The manifest lists and manifests the snapshots of ``versions`` use; with ``delete``, deleted (but those in
        ``keep``)."""
        seen: set[str] = set()
        for metadata in versions:
            for s in metadata.snapshots:
                if s.manifest_list in seen:
                    continue
                seen.add(s.manifest_list)
                try:
                    metas = codec.read_manifest_list(s.manifest_list)
                except FileNotFoundError:
                    continue
                for m in metas:
                    if m.manifest_path not in seen:
                        seen.add(m.manifest_path)
                        if delete and m.manifest_path not in keep:
                            self.file_io.delete(m.manifest_path)
                if delete and s.manifest_list not in keep:
                    self.file_io.delete(s.manifest_list)
        return frozenset(seen)

    # ---- incremental ---------------------------------------------------------------------------------------------
    def _delta(self, snapshot: Snapshot) -> tuple[bool, dict[str, ManifestEntry], dict[str, bytes]]:
        """Java's ``collectFileChanges`` over the snapshot's delta: (add only, added path -> entry, removed path ->
        partition)."""
        added: dict[str, ManifestEntry] = {}
        removed: dict[str, bytes] = {}
        add_only = True
        for meta in read_manifest_list(self.file_io, manifest_path(self.table.path, snapshot.delta_manifest_list)):
            for e in read_manifest(self.file_io, manifest_path(self.table.path, meta.file_name)):
                path = self.converter.path(e)
                if e.kind == FileKind.ADD:
                    if self.converter.visible(e.file):
                        removed.pop(path, None)
                        added[path] = e
                else:
                    add_only = False
                    added.pop(path, None)
                    removed[path] = e.partition
        return add_only, added, removed

    def _with_base(self, paths: IcebergPathFactory, snapshot: Snapshot, base_path: str) -> None:
        n = snapshot.id
        base = IcebergMetadata.from_json(self.file_io.read_bytes(base_path).decode(), base_path)
        schema = self.converter.schemas.get(snapshot.schema_id)
        codec = self._codec(schema)
        base_metas = codec.read_manifest_list(base.current_snapshot().manifest_list)
        add_only, added, removed = self._delta(snapshot)
        operation = APPEND
        metas: list[IcebergManifestFileMeta] = []
        if add_only:
            metas.extend(base_metas)
        else:
            for meta in base_metas:
                entries = codec.read_manifest(meta.manifest_path)
                reusable = True
                for e in entries:
                    if e.is_live:
                        if e.file.file_path in added:
                            added.pop(e.file.file_path)  # a level change: already listed
                        elif e.file.file_path in removed:
                            reusable = False
                if reusable:
                    metas.append(meta)
                    continue
                operation = OVERWRITE
                rewritten = [e.with_status(DELETED if e.file.file_path in removed else EXISTING)
                             for e in entries if e.is_live]
                metas.append(codec.write_manifest(paths.new_manifest(), rewritten, n))
        if added:
            new = [IcebergManifestEntry(ADDED, n, n, n, self.converter.data_file(e)) for e in added.values()]
            metas.append(codec.write_manifest(paths.new_manifest(), new, n))
        metas = self._compact(codec, paths, metas, n)
        list_path = paths.new_manifest_list()
        codec.write_manifest_list(list_path, metas, self._list_metadata(n, base.current_snapshot_id))

        schemas = list(base.schemas)
        if base.current_schema_id != schema.id:
            schemas.append(iceberg_schema(schema))
        snapshots = [*base.snapshots, IcebergSnapshot(n, n, snapshot.time_millis, operation, list_path, schema.id,
                                                      commit_identity(snapshot))]
        keep_from = self._first_retained(snapshots, n)
        expired, snapshots = snapshots[:keep_from], snapshots[keep_from:]
        metadata = IcebergMetadata(
            base.table_uuid, base.location, n, self.clock(), highest_field_id(schema), schemas, schema.id,
            base.partition_specs, base.last_partition_id, snapshots, n,
            {**base.properties, **self._properties([int(s["schema-id"]) for s in schemas])})
        if not self._publish(paths, n, metadata):
            return
        for old, following in zip(expired, [*expired[1:], snapshots[0]], strict=False):
            self._expire_manifest_list(codec, old.manifest_list, following.manifest_list)

    def _first_retained(self, snapshots: Sequence[IcebergSnapshot], current: int) -> int:
        """Index of the oldest snapshot kept: Java's ``shouldExpire`` (min retained, max retained, time retained
        against now) applied oldest first until one is kept; the newest is always kept. A snapshot older than
        Paimon's earliest goes whatever the window (an expiry with other retention settings deleted it, and maybe
        its files)."""
        min_keep = self.core.snapshot_num_retained_min()
        max_keep = self.core.snapshot_num_retained_max()
        horizon = self.clock() - self.core.snapshot_time_retained()
        earliest = earliest_snapshot_id(self.file_io, self.table.path) or current
        for i, s in enumerate(snapshots[:-1]):
            if s.snapshot_id < earliest:
                continue  # Paimon expired it (its files may be gone): it leaves the Iceberg metadata too
            if s.snapshot_id > current - min_keep:
                return i
            if s.snapshot_id > current - max_keep and s.timestamp_ms >= horizon:
                return i
        return len(snapshots) - 1

    def _expire_manifest_list(self, codec: ManifestCodec, to_expire: str, following: str) -> None:
        """Java's ``expireManifestList``: the list of an expired snapshot goes, with its manifests the next kept
        snapshot's list does not use. Lists already gone (expired by a concurrent committer of a newer version)
        are skipped."""
        try:
            in_use = {m.manifest_path for m in codec.read_manifest_list(following)}
            expired = codec.read_manifest_list(to_expire)
        except FileNotFoundError:
            return
        for m in expired:
            if m.manifest_path not in in_use:
                self.file_io.delete(m.manifest_path)
        self.file_io.delete(to_expire)

    # ---- manifest compaction -------------------------------------------------------------------------------------
    def _compact(self, codec: ManifestCodec, paths: IcebergPathFactory, metas: list[IcebergManifestFileMeta],
                 n: int) -> list[IcebergManifestFileMeta]:
        """Java's ``compactMetadataIfNeeded``: manifests under 2/3 of ``manifest.target-file-size`` are merged
        into one when there are at least ``compaction.min.file-num`` of them and either ``compaction.max.file-num``
        or the target size is reached; entries of older snapshots become EXISTING, their DELETED entries go."""
        target = self.core.manifest_target_file_size()
        small = [m for m in metas if m.manifest_length < target * 2 // 3]
        total = sum(m.manifest_length for m in small)
        if len(small) < self.options.compaction_min_file_num:
            return metas
        if len(small) < self.options.compaction_max_file_num and total < target:
            return metas
        entries: list[IcebergManifestEntry] = []
        for m in small:
            for e in codec.read_manifest(m.manifest_path):
                if e.file_sequence_number == n or e.status == EXISTING:
                    entries.append(e)
                elif e.status == ADDED:
                    entries.append(e.with_status(EXISTING))
            if m.sequence_number == n:
                self.file_io.delete(m.manifest_path)  # written by this commit, listed nowhere
        kept = [m for m in metas if m.manifest_length >= target * 2 // 3]
        return [*kept, codec.write_manifest(paths.new_manifest(), entries, n)]


def write_iceberg_metadata(table: Table, snapshot_id: int, storage: StorageType | None = None) -> str | None:
    """Write the Iceberg metadata of ``snapshot_id`` of ``table``; returns its ``v<N>.metadata.json`` path (None:
    nothing to write, see :meth:`IcebergCommitter.commit`)."""
    return IcebergCommitter(table, storage).commit(snapshot_id)


def writes_iceberg_metadata(table: Table) -> bool:
    """Whether commits to ``table`` write Iceberg metadata: its main branch, with ``metadata.iceberg.storage`` (or
    Paimon 0.9's ``metadata.iceberg-compatible``) naming a storage this engine writes (the capability gate refuses
    writes to tables that name another)."""
    return (table.source is None and table.view is None and table.branch == MAIN_BRANCH
            and iceberg_storage(table.schema.options) in (StorageType.TABLE_LOCATION, StorageType.HADOOP_CATALOG))


@dataclass(frozen=True)
class IcebergCommitCallback:
    """The post-commit callbacks a table with Iceberg compatibility gives its store context
    (:attr:`~table_engine.store.context.StoreContext.snapshot_published`, ``history_rewriting``): Paimon Java's
    ``IcebergCommitCallback``. A committer is made per call, from the table's schema at that time."""

    table: Table

    def published(self, snapshot_id: int) -> None:
        """Write the Iceberg metadata of snapshot ``snapshot_id`` (:meth:`IcebergCommitter.commit`)."""
        IcebergCommitter(self.table).commit(snapshot_id)

    def rewriting(self, target: int) -> None:
        """A rollback or fast-forward to ``target`` is about to delete snapshots: drop the Iceberg metadata first
        (:meth:`IcebergCommitter.forget`; :meth:`published` of the new latest writes it afresh)."""
        del target
        IcebergCommitter(self.table).forget()
