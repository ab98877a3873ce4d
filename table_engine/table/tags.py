"""Tags of a table, as :class:`~table_engine.table.Table` creates them: the snapshot a tag names (latest by default,
also an expired one that another tag still holds), tagging again when that snapshot expired or was rolled back while
it was tagged, and deleting several tags at once (``tag/tag-<name>``; :class:`~table_engine.store.lifecycle.tags
.TagManager` does the rest)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from table_engine.errors import HistoryRewrittenError, SnapshotNotExistError
from table_engine.format.snapshot import Snapshot, read_snapshot
from table_engine.store.lifecycle.tags import TagDeletion, TagManager

if TYPE_CHECKING:
    from table_engine.table import Table

_TAG_ATTEMPTS = 5
"""How often tagging the newest snapshot looks again when that snapshot expired while it was tagged."""


def create_tag(table: Table, name: str, snapshot_id: int | None, time_retained_ms: int | None,
               creator: str | None = None) -> Snapshot:
    """Tag ``snapshot_id`` (latest by default) as ``name``; looks again when the latest snapshot expired or was
    rolled back while it was tagged (an explicit ``snapshot_id`` is not replaced by another)."""
    retained = time_retained_ms if time_retained_ms is not None else table.options.tag_default_time_retained()
    for attempt in range(_TAG_ATTEMPTS):
        snap = find_snapshot(table, snapshot_id)
        try:
            return TagManager.of(table.store).create(name, snap, retained, creator=creator).snapshot
        except HistoryRewrittenError:  # a rollback ran meanwhile: its snapshot may be gone, or be there again
            if attempt == _TAG_ATTEMPTS - 1:
                raise
        except SnapshotNotExistError:  # the snapshot expired under the tag (see TagManager.create)
            if snapshot_id is not None or attempt == _TAG_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def find_snapshot(table: Table, snapshot_id: int | None) -> Snapshot:
    """Snapshot ``snapshot_id`` (the latest when None), also when it expired but a tag still holds it."""
    if snapshot_id is None:
        latest = table.store.latest_snapshot()
        if latest is None:
            raise SnapshotNotExistError(f"table {table.identifier} has no snapshot")
        return latest
    try:
        return read_snapshot(table.file_io, table.path, snapshot_id)
    except SnapshotNotExistError:
        for snap, _ in TagManager.of(table.store).tagged_snapshots():  # expired, but a tag still holds it
            if snap.id == snapshot_id:
                return snap
        raise


def delete_tags(table: Table, name: str | Sequence[str], ignore_if_not_exists: bool) -> TagDeletion:
    """Delete tags (a name, a list, or comma-separated names) and the files only they kept alive."""
    names = [n.strip() for n in name.split(",")] if isinstance(name, str) else list(name)
    tags = TagManager.of(table.store)
    deleted: list[str] = []
    files = 0
    for n in names:
        result = tags.delete(n, ignore_if_not_exists)
        deleted += result.deleted_tags
        files += result.deleted_files
    return TagDeletion(deleted, files)


def tag_snapshot_or_none(table: Table, name: str) -> Snapshot | None:
    """The snapshot of tag ``name``, None when there is no such tag."""
    tag = TagManager.of(table.store).get(name)
    return None if tag is None else tag.snapshot
