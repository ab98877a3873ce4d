"""The tag surface of a table: create (from a snapshot, a time, or automatically), replace, rename, delete, expire
and list tags (``tag/tag-<name>``); the tag manager."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from table_engine.errors import HistoryRewrittenError, SnapshotNotExistError
from table_engine.features import Op
from table_engine.format.snapshot import Snapshot
from table_engine.table.base import mutating
from table_engine.table.metadata import MetadataSurface

_TAG_ATTEMPTS = 5
"""How often tagging the newest snapshot looks again when that snapshot expired while it was tagged."""

if TYPE_CHECKING:
    from table_engine.format.tag_file import Tag
    from table_engine.store.lifecycle.tags import TagDeletion, TagManager


class TagSurface(MetadataSurface):
    """Tags; a tag holds a snapshot (and its files) alive after the snapshot expired."""

    @mutating(Op.MAINTAIN)
    def create_tag(self, name: str, snapshot_id: int | None = None, time_retained_ms: int | None = None, *,
                   creator: str | None = None) -> Snapshot:
        """Tag a snapshot (latest by default; also an expired one a tag still holds): ``tag/tag-<name>``.

        ``time_retained_ms`` (default ``tag.default-time-retained``): the tag expires that long after creation.
        ``creator`` is recorded in the tag (:attr:`~table_engine.format.tag_file.Tag.creator`).
        """
        return self._create_tag(name, snapshot_id, time_retained_ms, creator)

    def tag_snapshot(self, name: str) -> Snapshot:
        """The snapshot of tag ``name`` (TagNotExistError, a SnapshotNotExistError, if there is none)."""
        return self._tag_manager().get_or_raise(name).snapshot

    def list_tags(self) -> list[str]:
        """Tag names, sorted."""
        return self._tag_manager().names()

    @mutating(Op.MAINTAIN)
    def tag_manager(self) -> TagManager:
        """The tag manager (creates, replaces, deletes and expires tags)."""
        return self._tag_manager()

    def _tag_manager(self) -> TagManager:
        from table_engine.store.lifecycle.tag_period import TagPeriodHandler
        from table_engine.store.lifecycle.tags import TagManager

        auto = self.options.tag_automatic_creation().value in ("process-time", "watermark")
        return TagManager(self.store, TagPeriodHandler.from_options(self.options) if auto else None)

    def tags(self) -> list[Tag]:
        """Every tag (with its snapshot, create time and retention), by name."""
        return self._tag_manager().all()

    def _create_tag(self, name: str, snapshot_id: int | None, time_retained_ms: int | None,
                    creator: str | None = None) -> Snapshot:
        retained = time_retained_ms if time_retained_ms is not None else self.options.tag_default_time_retained()
        for attempt in range(_TAG_ATTEMPTS):
            snap = self._find_snapshot(snapshot_id)
            try:
                return self.tag_manager().create(name, snap, retained, creator=creator).snapshot
            except HistoryRewrittenError:  # a rollback ran meanwhile: its snapshot may be gone, or be there again
                if attempt == _TAG_ATTEMPTS - 1:
                    raise
            except SnapshotNotExistError:  # the snapshot expired under the tag (see TagManager.create)
                if snapshot_id is not None or attempt == _TAG_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _find_snapshot(self, snapshot_id: int | None) -> Snapshot:
        if snapshot_id is None:
            latest = self.latest_snapshot()
            if latest is None:
                raise SnapshotNotExistError(f"table {self.identifier} has no snapshot")
            return latest
        try:
            return self.snapshot(snapshot_id)
        except SnapshotNotExistError:
            for snap, _ in self._tag_manager().tagged_snapshots():  # expired, but a tag still holds it
                if snap.id == snapshot_id:
                    return snap
            raise


    @mutating(Op.MAINTAIN)
    def replace_tag(self, name: str, snapshot_id: int | None = None, time_retained_ms: int | None = None, *,
                    creator: str | None = None) -> Snapshot:
        """Point existing tag ``name`` at another snapshot (latest by default)."""
        return self.tag_manager().replace(name, self._find_snapshot(snapshot_id), time_retained_ms,
                                          creator=creator).snapshot

    @mutating(Op.MAINTAIN)
    def rename_tag(self, name: str, new_name: str) -> None:
        self.tag_manager().rename(name, new_name)

    @mutating(Op.MAINTAIN)
    def delete_tag(self, name: str | Sequence[str], ignore_if_not_exists: bool = False) -> TagDeletion:
        """Delete tags (a name, a list, or comma-separated names) and the files only they kept alive."""
        from table_engine.store.lifecycle.tags import TagDeletion

        names = [n.strip() for n in name.split(",")] if isinstance(name, str) else list(name)
        tags = self.tag_manager()
        deleted: list[str] = []
        files = 0
        for n in names:
            result = tags.delete(n, ignore_if_not_exists)
            deleted += result.deleted_tags
            files += result.deleted_files
        return TagDeletion(deleted, files)



    def _tag_snapshot_or_none(self, name: str) -> Snapshot | None:
        tag = self._tag_manager().get(name)
        return None if tag is None else tag.snapshot
