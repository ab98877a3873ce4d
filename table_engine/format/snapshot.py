"""Snapshots (``snapshot/snapshot-<id>`` JSON) and the LATEST/EARLIEST hint files.

Publishing a snapshot is an atomic create-if-absent of ``snapshot-<id>``; the hints are best-effort caches that
readers verify: LATEST is probed forward (``snapshot-<LATEST+1>``, ...) until an id is absent, EARLIEST is trusted
only if its snapshot exists; the snapshot directory is listed only when a hint is missing or names an expired
snapshot, so finding the newest snapshot costs a constant number of requests on an object store.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import time
import uuid as uuid_module
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ParamSpec, TypeVar

from table_engine.errors import CorruptMetadataError, DataError, SnapshotNotExistError, naming_snapshot
from table_engine.io.file_io import FileIO

__all__ = [
    "BATCH_COMMIT_IDENTIFIER",
    "FIRST_SNAPSHOT_ID",
    "SNAPSHOT_VERSION",
    "CommitKind",
    "Snapshot",
    "earliest_snapshot_id",
    "find_latest_snapshot",
    "latest_hint",
    "latest_snapshot",
    "latest_snapshot_id",
    "list_snapshot_ids",
    "names_snapshot",
    "read_snapshot",
    "snapshot_at_or_before_time",
    "snapshot_dir",
    "snapshot_path",
    "try_publish_snapshot",
]

_log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 3
FIRST_SNAPSHOT_ID = 1
BATCH_COMMIT_IDENTIFIER = 2**63 - 1
"""``commitIdentifier`` of batch (non-streaming) commits: Long.MAX_VALUE."""

_SNAPSHOT_NAME = re.compile(r"snapshot-(\d+)")
_EMPTY_READ_RETRIES = 5
_LATEST_READ_RETRIES = 10
"""How often :func:`latest_snapshot` looks again when the snapshot it found expired before it was read."""


class CommitKind(StrEnum):
    """Kind of change a snapshot records (``commitKind``)."""

    APPEND = "APPEND"
    COMPACT = "COMPACT"
    OVERWRITE = "OVERWRITE"
    ANALYZE = "ANALYZE"


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """One snapshot file. Manifest-list and index-manifest fields are bare file names under ``manifest/``.

    Unknown JSON keys (from newer writers) are kept in ``extra`` and written back after the known ones.
    """

    version: int = SNAPSHOT_VERSION
    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    changelog_manifest_list: str | None = None
    index_manifest: str | None = None
    commit_user: str
    commit_identifier: int
    commit_kind: CommitKind
    time_millis: int
    log_offsets: dict[int, int] | None = None
    total_record_count: int | None
    delta_record_count: int | None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list_size: int | None = None
    properties: dict[str, str] | None = None
    next_row_id: int | None = None
    uuid: str | None = field(default_factory=lambda: str(uuid_module.uuid4()))
    writer_version: str | None = None
    operation: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """2-space indented JSON, keys in pypaimon's order, null fields omitted, no trailing newline."""
        out: dict[str, Any] = {}
        for attr, key in _JSON_FIELDS:
            value = getattr(self, attr)
            if value is not None:
                out[key] = str(value) if attr == "commit_kind" else value
        for key, value in self.extra.items():
            if value is not None and key not in out:
                out[key] = value
        return json.dumps(out, indent=2, ensure_ascii=False)

    @staticmethod
    def from_json(text: str | bytes, path: str) -> Snapshot:
        """Parse snapshot JSON; anything malformed is a :class:`CorruptMetadataError` naming ``path``."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("top level is not a JSON object")
            values: dict[str, Any] = {}
            for attr, key in _JSON_FIELDS:
                value = data.get(key)
                if value is None:
                    if attr in _REQUIRED:
                        raise ValueError(f"missing field {key!r}")
                    continue
                if not isinstance(value, _JSON_TYPES[attr]) or isinstance(value, bool):
                    raise ValueError(f"field {key!r} has unexpected value {value!r}")
                values[attr] = value
            values["commit_kind"] = CommitKind(values["commit_kind"])
            props = values.get("properties")
            if props is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
                raise ValueError(f"field 'properties' is not a map of strings: {props!r}")
            offsets = values.get("log_offsets")
            if offsets is not None:
                values["log_offsets"] = {int(k): int(v) for k, v in offsets.items()}
            values.setdefault("uuid", None)
            values.setdefault("total_record_count", None)
            values.setdefault("delta_record_count", None)
            extra = {k: v for k, v in data.items() if k not in _KNOWN_KEYS}
            return Snapshot(**values, extra=extra)
        except (ValueError, TypeError, UnicodeDecodeError) as e:
            raise CorruptMetadataError(f"cannot parse snapshot file {path}: {e}") from e


def snapshot_properties(properties: Mapping[str, str] | None) -> dict[str, str] | None:
    """``properties`` as a snapshot's ``properties`` field (Paimon 1.2: a string map, omitted when null or empty);
    a :class:`DataError` naming the first key or value that is not a string."""
    if not properties:
        return None
    for k, v in properties.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise DataError(f"snapshot properties map strings to strings, got {k!r}: {v!r}")
    return dict(properties)


# (attribute, JSON key) in the order pypaimon 2.1.0 writes them; Java-only keys go before uuid/writerVersion.
_JSON_FIELDS: tuple[tuple[str, str], ...] = (
    ("version", "version"),
    ("id", "id"),
    ("schema_id", "schemaId"),
    ("base_manifest_list", "baseManifestList"),
    ("delta_manifest_list", "deltaManifestList"),
    ("total_record_count", "totalRecordCount"),
    ("delta_record_count", "deltaRecordCount"),
    ("commit_user", "commitUser"),
    ("commit_identifier", "commitIdentifier"),
    ("commit_kind", "commitKind"),
    ("time_millis", "timeMillis"),
    ("base_manifest_list_size", "baseManifestListSize"),
    ("delta_manifest_list_size", "deltaManifestListSize"),
    ("changelog_manifest_list", "changelogManifestList"),
    ("changelog_manifest_list_size", "changelogManifestListSize"),
    ("index_manifest", "indexManifest"),
    ("changelog_record_count", "changelogRecordCount"),
    ("watermark", "watermark"),
    ("statistics", "statistics"),
    ("next_row_id", "nextRowId"),
    ("properties", "properties"),
    ("log_offsets", "logOffsets"),
    ("operation", "operation"),
    ("uuid", "uuid"),
    ("writer_version", "writerVersion"),
)
_KNOWN_KEYS = frozenset(key for _, key in _JSON_FIELDS)
_REQUIRED = frozenset({"version", "id", "schema_id", "base_manifest_list", "delta_manifest_list", "commit_user",
                       "commit_identifier", "commit_kind", "time_millis"})
_STR_ATTRS = frozenset({"base_manifest_list", "delta_manifest_list", "changelog_manifest_list", "index_manifest",
                        "commit_user", "commit_kind", "statistics", "uuid", "writer_version", "operation"})
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    attr: str if attr in _STR_ATTRS else dict if attr in ("properties", "log_offsets") else int
    for attr, _ in _JSON_FIELDS
}


# ---------------------------------------------------------------------------------------------- paths and hints


_P = ParamSpec("_P")
_R = TypeVar("_R")


def names_snapshot(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator of functions that read what a snapshot references: a :class:`MissingFileError` they raise names
    the first :class:`Snapshot` argument (see :func:`table_engine.errors.naming_snapshot`)."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        snap = next((a for a in (*args, *kwargs.values()) if isinstance(a, Snapshot)), None)
        with naming_snapshot(None if snap is None else snap.id):
            return fn(*args, **kwargs)

    return wrapper


def snapshot_dir(table_path: str) -> str:
    """``<table>/snapshot``, the directory of snapshots and the ``EARLIEST`` / ``LATEST`` hints."""
    return f"{table_path.rstrip('/')}/snapshot"


def snapshot_path(table_path: str, snapshot_id: int) -> str:
    """``<table>/snapshot/snapshot-<id>``."""
    return f"{snapshot_dir(table_path)}/snapshot-{snapshot_id}"


def latest_hint(file_io: FileIO, table_path: str) -> int | None:
    """The id the ``LATEST`` hint names (one GET; None when absent or unreadable): a cache, possibly behind the
    newest snapshot, never ahead of a published one."""
    return _read_hint(file_io, f"{snapshot_dir(table_path)}/LATEST")


def _read_hint(file_io: FileIO, path: str) -> int | None:
    try:
        text = file_io.read_bytes(path).decode("ascii").strip()
        return int(text) if text else None
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return None


def _write_hint(file_io: FileIO, path: str, snapshot_id: int) -> None:
    try:
        file_io.overwrite_hint(path, str(snapshot_id).encode("ascii"))
    except OSError as e:  # the snapshot is published; a stale hint is only slower to resolve
        _log.warning("could not update snapshot hint %s to %d: %s", path, snapshot_id, e)


def list_snapshot_ids(file_io: FileIO, table_path: str) -> list[int]:
    """Ids of all ``snapshot-<id>`` files, ascending (one directory listing)."""
    ids = []
    for status in file_io.list_status(snapshot_dir(table_path)):
        m = _SNAPSHOT_NAME.fullmatch(status.path.rstrip("/").rsplit("/", 1)[-1])
        if m and not status.is_dir:
            ids.append(int(m.group(1)))
    ids.sort()
    return ids


def _probe_latest(file_io: FileIO, table_path: str, hint: int | None = None) -> int | None:
    """Id of the newest snapshot from the LATEST hint, in a constant number of requests: read the hint, then probe
    ``snapshot-<hint+1>``, ``<hint+2>``... (a stale hint only costs one probe per missing step) until one is absent.
    None if there is no hint or the hint's snapshot is gone (expired): the caller lists the directory.

    The returned id ``n`` was seen *after* ``snapshot-<n+1>`` was seen absent (the caller checks it again when it
    reads it); since committers publish ids contiguously and expiry deletes snapshots in ascending order, ``n``
    present after ``n+1`` absent means ``n`` was the newest snapshot at that moment. ``snapshot-<n+2>`` is probed
    too: if it exists, ``n`` is a leftover below a gap (its deletion failed, or an expiry deleted out of order) and
    a commit on it would publish ``n+1`` again outside the table's history; the directory is listed then.
    ``hint``: the hint's value when the caller has just read it (a committer's pin did)."""
    if hint is None:
        hint = _read_hint(file_io, f"{snapshot_dir(table_path)}/LATEST")
    if hint is None or hint <= 0:
        return None
    sid = hint
    while file_io.is_file(snapshot_path(table_path, sid + 1)):
        sid += 1
    if file_io.is_file(snapshot_path(table_path, sid + 2)):
        return None  # a gap: sid is a leftover below snapshots whose predecessor is gone (list instead)
    return sid


def latest_snapshot_id(file_io: FileIO, table_path: str, exact: bool = False) -> int | None:
    """Id of the newest snapshot, or ``None`` for a table without snapshots.

    From the LATEST hint probed forward (:func:`_probe_latest`: constant requests, whatever the number of
    snapshots), verified to exist after its successor was seen absent; from the listing of the snapshot directory
    when the hint is missing or names an expired snapshot (the listing is exact because expiry never deletes the
    newest snapshot). ``exact`` is kept for callers that need the newest snapshot, not a recent one (committers):
    both ways give it."""
    del exact  # the probe is exact (see _probe_latest): readers and committers share it
    sid = _probe_latest(file_io, table_path)
    if sid is not None and file_io.is_file(snapshot_path(table_path, sid)):
        return sid
    ids = list_snapshot_ids(file_io, table_path)
    return ids[-1] if ids else None


def find_latest_snapshot(file_io: FileIO, table_path: str, hint: int | None = None) -> Snapshot | None:
    """The newest snapshot, read in a constant number of requests (GET LATEST, HEAD of the next two ids, GET of the
    snapshot, which also verifies it after its successor was seen absent; see :func:`_probe_latest`). Committers
    use it to choose the id they publish; object stores bill per request. ``hint``: the ``LATEST`` hint's value
    if the caller has just read it (saves its GET)."""
    sid = _probe_latest(file_io, table_path, hint)
    if sid is not None:
        try:
            return read_snapshot(file_io, table_path, sid)
        except SnapshotNotExistError:
            pass  # the hint names an expired snapshot: list
    ids = list_snapshot_ids(file_io, table_path)
    return read_snapshot(file_io, table_path, ids[-1]) if ids else None


def earliest_snapshot_id(file_io: FileIO, table_path: str) -> int | None:
    """Id of the oldest snapshot still present, or ``None`` for a table without snapshots."""
    hint = _read_hint(file_io, f"{snapshot_dir(table_path)}/EARLIEST")
    if hint is not None and hint > 0 and file_io.is_file(snapshot_path(table_path, hint)):
        return hint
    ids = list_snapshot_ids(file_io, table_path)
    return ids[0] if ids else None


# ---------------------------------------------------------------------------------------------- read / publish


def read_snapshot(file_io: FileIO, table_path: str, snapshot_id: int) -> Snapshot:
    """Read ``snapshot-<id>``: :class:`SnapshotNotExistError` if absent, :class:`CorruptMetadataError` if garbled."""
    path = snapshot_path(table_path, snapshot_id)
    for attempt in range(_EMPTY_READ_RETRIES):
        try:
            data = file_io.read_bytes(path)
        except FileNotFoundError:
            raise SnapshotNotExistError(f"snapshot {snapshot_id} of table {table_path} does not exist") from None
        if data.strip() or attempt == _EMPTY_READ_RETRIES - 1:
            break
        time.sleep(0.01 * 2**attempt)  # a writer without atomic create may not have filled the file yet
    return Snapshot.from_json(data, path)


def latest_snapshot(file_io: FileIO, table_path: str) -> Snapshot | None:
    """The newest snapshot, or ``None`` for a table without snapshots. A snapshot found as the newest can be
    expired before it is read, once newer ones were published (expiry keeps only the newest): then the newest is
    looked for again."""
    for attempt in range(_LATEST_READ_RETRIES):
        try:
            return find_latest_snapshot(file_io, table_path)
        except SnapshotNotExistError:
            if attempt == _LATEST_READ_RETRIES - 1:
                raise
    return None  # pragma: no cover (the loop returns or raises)


def try_publish_snapshot(file_io: FileIO, table_path: str, snapshot: Snapshot) -> bool:
    """Atomically create ``snapshot-<id>``; ``False`` if that id is taken (nothing is overwritten).

    On success the LATEST hint is updated (and EARLIEST for the first snapshot); hint failures are only logged.
    """
    if not file_io.write_if_absent(snapshot_path(table_path, snapshot.id), snapshot.to_json().encode("utf-8")):
        return False
    directory = snapshot_dir(table_path)
    _advance_latest_hint(file_io, table_path, snapshot.id)
    if snapshot.id == FIRST_SNAPSHOT_ID:
        _write_hint(file_io, f"{directory}/EARLIEST", snapshot.id)
    return True


def _advance_latest_hint(file_io: FileIO, table_path: str, snapshot_id: int) -> None:
    """Point the ``LATEST`` hint at ``snapshot_id``, just published, and keep it from staying behind: without a
    compare-and-set, this write can land after the write of a committer that published a newer snapshot in the
    meantime; a committer that finds its successor published after its write therefore puts the newest id back.
    So the hint moves back only for the moment between such a write and its repair, and only to an id that was
    the newest when it was published (never to a stray: ids are never reused, see
    :mod:`table_engine.store.pins`); readers probe forward from it either way."""
    path = f"{snapshot_dir(table_path)}/LATEST"
    _write_hint(file_io, path, snapshot_id)
    if file_io.is_file(snapshot_path(table_path, snapshot_id + 1)):
        newest = latest_snapshot_id(file_io, table_path)
        if newest is not None and newest > snapshot_id:
            _write_hint(file_io, path, newest)


def snapshot_at_or_before_time(file_io: FileIO, table_path: str, millis: int) -> Snapshot | None:
    """The newest snapshot with ``time_millis <= millis`` (binary search over ids), or ``None``."""
    latest = latest_snapshot_id(file_io, table_path)
    earliest = earliest_snapshot_id(file_io, table_path)
    if latest is None or earliest is None:
        return None
    lo, hi = earliest, latest
    best: Snapshot | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        try:
            snap = read_snapshot(file_io, table_path, mid)
        except SnapshotNotExistError:  # expired while we search: everything up to mid is gone
            lo = mid + 1
            continue
        if snap.time_millis <= millis:
            best = snap
            lo = mid + 1
        else:
            hi = mid - 1
    return best
