"""Tags: named snapshots under ``tag/tag-<name>`` that pin their snapshot's files.

Semantics follow Paimon's ``TagManager``/``TagDeletion``/``TagTimeExpire``:

* A tag file is the snapshot JSON (plus ``tagCreateTime``/``tagTimeRetained`` when it has a retention, see
  :mod:`table_engine.format.tag_file`). Tags are created atomically (create-if-absent); ``replace`` overwrites.
* Snapshot expiry never deletes a file a tag uses, so reading a tag keeps working after its snapshot expired.
* Creation first holds its snapshot (:class:`~table_engine.store.pins.SnapshotHold`: a pin, then a wait for the
  expiry runs already under way), checks it is still there, and only then writes the tag: a tag is never visible
  while its snapshot's files are being deleted.
* Deleting a tag whose snapshot still exists only removes the tag file. Otherwise the tag was the last thing
  holding its snapshot's files: those not used by its neighbours -- the nearest older tag and the nearest newer
  tag/snapshot/changelog (by the contiguity invariant of :mod:`table_engine.store.lifecycle.file_refs` these hold
  everything any other tag or snapshot needs) -- nor by long-lived changelogs or branches, are deleted. Another tag on
  the same snapshot keeps everything.
* ``expire``: tags whose ``tagCreateTime + tagTimeRetained`` has passed are deleted; with ``older_than`` also
  tags created before it (tags without a create time use their file's modification time). With
  ``tag.num-retained-max`` the oldest automatic tags beyond it are deleted too.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from table_engine import clock
from table_engine.errors import (
    SnapshotNotExistError,
    TableEngineError,
    TagAlreadyExistError,
    TagError,
    TagNotExistError,
)
from table_engine.format.changelog_file import list_changelog_ids, read_changelog
from table_engine.format.snapshot import Snapshot, earliest_snapshot_id, read_snapshot, snapshot_path
from table_engine.format.tag_file import Tag, list_tag_names, read_tag, tag_path
from table_engine.io.file_io import FileIO
from table_engine.store.context import StoreContext
from table_engine.store.lifecycle.file_refs import FileRefs, ReferencedFiles
from table_engine.store.lifecycle.tag_period import TagPeriodHandler
from table_engine.store.pins import SnapshotHold

__all__ = ["Tag", "TagDeletion", "TagManager", "rollback_version"]

log = logging.getLogger(__name__)

_CACHE_LIMIT = 4096
_TAG_CACHE: dict[str, tuple[int, int, Tag]] = {}  # path -> (mtime, size, tag): tag files rarely change


@dataclass(frozen=True)
class TagDeletion:
    """What deleting tags did."""

    deleted_tags: list[str]
    deleted_files: int


class TagManager:
    """The tags of one table."""

    def __init__(self, ctx: StoreContext, period: TagPeriodHandler | None = None) -> None:
        self.ctx = ctx
        self.file_io = ctx.file_io
        self.table_path = ctx.table_path
        self.period = period

    @classmethod
    def of(cls, ctx: StoreContext) -> TagManager:
        """The tags of the table of ``ctx``, with the ``tag.automatic-creation`` period when tags are created by
        time (``process-time``, ``watermark``)."""
        auto = ctx.options.tag_automatic_creation().value in ("process-time", "watermark")
        return cls(ctx, TagPeriodHandler.from_options(ctx.options) if auto else None)

    # ---- reading -----------------------------------------------------------------------------------------------
    def path(self, name: str) -> str:
        return tag_path(self.table_path, name)

    def exists(self, name: str) -> bool:
        return self.file_io.exists(self.path(name))

    def get(self, name: str) -> Tag | None:
        _check_name(name)
        return read_tag(self.file_io, self.table_path, name)

    def get_or_raise(self, name: str) -> Tag:
        tag = self.get(name)
        if tag is None:
            raise TagNotExistError(f"tag {name!r} of table {self.table_path} does not exist")
        return tag

    def names(self) -> list[str]:
        return [n for n, _ in list_tag_names(self.file_io, self.table_path)]

    def all(self) -> list[Tag]:
        """Every tag, by name (tag files deleted meanwhile are skipped)."""
        out = []
        for st in self.file_io.list_status(f"{self.table_path}/tag"):
            base = st.path.rstrip("/").rsplit("/", 1)[-1]
            if st.is_dir or not base.startswith("tag-") or len(base) == 4:
                continue
            tag = self._cached(base[4:], st.path, st.mtime_millis, st.size)
            if tag is not None:
                out.append(tag)
        out.sort(key=lambda t: t.name)
        return out

    def tagged_snapshots(self) -> list[tuple[Snapshot, list[str]]]:
        """(snapshot, tag names) per tagged snapshot id, ascending."""
        by_id: dict[int, tuple[Snapshot, list[str]]] = {}
        for tag in self.all():
            hit = by_id.setdefault(tag.snapshot_id, (tag.snapshot, []))
            hit[1].append(tag.name)
        return [by_id[i] for i in sorted(by_id)]

    # ---- writing -----------------------------------------------------------------------------------------------
    def create(self, name: str, snapshot: Snapshot, time_retained_ms: int | None = None, *,
               ignore_if_exists: bool = False, now: datetime.datetime | None = None,
               creator: str | None = None) -> Tag:
        """Tag ``snapshot``; :class:`TagAlreadyExistError` if the name is taken (unless ``ignore_if_exists``).
        ``creator`` is recorded in the tag (:attr:`Tag.creator`)."""
        _check_name(name)
        self._check_not_auto_tagged(name, snapshot)
        tag = self._make(name, snapshot, time_retained_ms, now, creator)
        with SnapshotHold(self.file_io, self.table_path, snapshot.id) as hold:  # no expiry deletes it from here on
            if self.file_io.is_file(self.path(name)):
                if ignore_if_exists:
                    return self.get_or_raise(name)
                raise TagAlreadyExistError(f"tag {name!r} of table {self.table_path} exists already")
            self._check_held(name, snapshot)
            if not self.file_io.write_if_absent(self.path(name), tag.to_json().encode("utf-8")):
                if ignore_if_exists:
                    return self.get_or_raise(name)
                raise TagAlreadyExistError(f"tag {name!r} of table {self.table_path} exists already")
            if not hold.expiries_done:  # an expiry under way for too long may have missed the hold: verify
                self._check_still_there_after_writing(name, snapshot)
        log.info("created tag %s on snapshot %d of %s", name, snapshot.id, self.table_path)
        return tag

    def _check_still_there_after_writing(self, name: str, snapshot: Snapshot) -> None:
        """When the hold could not wait for every expiry under way: the tag is written, and its snapshot must still
        be there (expiry deletes snapshot files before it reads the tags, so a file seen now means every run that
        deletes it sees the tag), or be held by another tag; else the tag is withdrawn and
        :class:`~table_engine.errors.SnapshotNotExistError` raised."""
        try:
            self._check_held(name, snapshot)
        except SnapshotNotExistError:
            self.file_io.try_delete(self.path(name))
            raise

    def _check_held(self, name: str, snapshot: Snapshot) -> None:
        """Under the :class:`~table_engine.store.pins.SnapshotHold`, before the tag is written: its snapshot must
        still be there (then no expiry deletes it while the hold stands, and every later one sees the tag), or be
        held by another tag. A snapshot gone by then was expired before the hold:
        :class:`~table_engine.errors.SnapshotNotExistError`, nothing written (tag the newest snapshot again)."""
        if _still_there(self.file_io, self.table_path, snapshot):
            return
        if any(_same(s, snapshot) and set(names) - {name} for s, names in self.tagged_snapshots()):
            return  # an expired snapshot that another tag holds (its files were never candidates)
        raise SnapshotNotExistError(f"snapshot {snapshot.id} of {self.table_path} expired before tag {name!r} "
                                    "could hold it; the tag was not created")

    def replace(self, name: str, snapshot: Snapshot, time_retained_ms: int | None = None, *,
                now: datetime.datetime | None = None, creator: str | None = None) -> Tag:
        """Point an existing tag at ``snapshot`` (Paimon's ``replace_tag``)."""
        self.get_or_raise(name)
        tag = self._make(name, snapshot, time_retained_ms, now, creator)
        self.file_io.write_bytes(self.path(name), tag.to_json().encode("utf-8"), overwrite=True)
        return tag

    def rename(self, name: str, new_name: str) -> None:
        tag_text = self._read_text_or_raise(name)
        _check_name(new_name)
        if not self.file_io.write_if_absent(self.path(new_name), tag_text):
            raise TagAlreadyExistError(f"tag {new_name!r} of table {self.table_path} exists already")
        self.file_io.try_delete(self.path(name))

    def delete(self, name: str, ignore_if_not_exists: bool = False) -> TagDeletion:
        """Delete a tag and the files only it kept alive."""
        tag = self.get(name)
        if tag is None:
            if ignore_if_not_exists:
                return TagDeletion([], 0)
            raise TagNotExistError(f"tag {name!r} of table {self.table_path} does not exist")
        if self.file_io.exists(snapshot_path(self.table_path, tag.snapshot_id)):
            self.file_io.delete(self.path(name))
            return TagDeletion([name], 0)
        tagged = self.tagged_snapshots()  # read before deleting: tags are discovered by their files
        # the tag file goes first, and a failure stops here: a tag that stays must keep every file it references
        self.file_io.delete(self.path(name))
        same = next((names for s, names in tagged if s.id == tag.snapshot_id), [name])
        if len(same) > 1:
            return TagDeletion([name], 0)
        deleted = clean_unused_files_of(self.ctx, tag.snapshot, lambda: [s for s, _ in self.tagged_snapshots()])
        log.info("deleted tag %s of %s (snapshot %d expired): %d files removed", name, self.table_path,
                 tag.snapshot_id, deleted)
        return TagDeletion([name], deleted)

    def expire(self, older_than: datetime.datetime | None = None, now: datetime.datetime | None = None,
               num_retained_max: int | None = None) -> TagDeletion:
        """Delete tags past their retention (or created before ``older_than``), then surplus automatic tags."""
        now = now or clock.now_local()
        names: list[str] = []
        files = 0
        for tag in self.all():
            create = tag.create_time
            if create is None or tag.time_retained_ms is None:
                if older_than is None:
                    continue
                if create is None:
                    mtime = self._mtime(tag.name)
                    if mtime is None:
                        continue
                    create = datetime.datetime.fromtimestamp(mtime / 1000)
            expires = tag.expires_at()
            if (expires is not None and now > expires) or (older_than is not None and older_than > create):
                result = self.delete(tag.name, ignore_if_not_exists=True)
                names += result.deleted_tags
                files += result.deleted_files
        if num_retained_max is not None and self.period is not None:
            result = self.expire_auto_tags(num_retained_max)
            names += result.deleted_tags
            files += result.deleted_files
        if names:
            log.info("expired tags %s of %s", names, self.table_path)
        return TagDeletion(names, files)

    def expire_auto_tags(self, num_retained_max: int) -> TagDeletion:
        """Keep at most ``num_retained_max`` automatic tags: delete the oldest ones (by snapshot id)."""
        if self.period is None:
            return TagDeletion([], 0)
        auto = [(s, [n for n in names if self.period.is_auto_tag(n)]) for s, names in self.tagged_snapshots()]
        auto = [(s, names) for s, names in auto if names]
        surplus = sum(len(n) for _, n in auto) - num_retained_max
        names: list[str] = []
        files = 0
        for _, tag_names in auto:
            for n in sorted(tag_names):
                if surplus <= 0:
                    break
                result = self.delete(n, ignore_if_not_exists=True)
                names += result.deleted_tags
                files += result.deleted_files
                surplus -= 1
        return TagDeletion(names, files)

    # ---- internals ---------------------------------------------------------------------------------------------
    def _make(self, name: str, snapshot: Snapshot, time_retained_ms: int | None,
              now: datetime.datetime | None, creator: str | None = None) -> Tag:
        if time_retained_ms is not None and time_retained_ms <= 0:
            raise TagError(f"time retained of tag {name!r} must be positive, got {time_retained_ms} ms")
        trimmed = replace(snapshot, extra={k: v for k, v in snapshot.extra.items()
                                           if k not in ("tagCreateTime", "tagTimeRetained")})
        create = (now or clock.now_local()) if time_retained_ms is not None else None
        return Tag(name, trimmed, create, time_retained_ms, creator)

    def _check_not_auto_tagged(self, name: str, snapshot: Snapshot) -> None:
        if self.period is None or not self.period.is_auto_tag(name):
            return
        for s, names in self.tagged_snapshots():
            auto = [n for n in names if self.period.is_auto_tag(n)]
            if s.id == snapshot.id and auto:
                raise TagError(f"snapshot {snapshot.id} is already auto-tagged with {auto}")

    def _cached(self, name: str, path: str, mtime: int, size: int) -> Tag | None:
        hit = _TAG_CACHE.get(path)
        if hit is not None and hit[0] == mtime and hit[1] == size:
            return hit[2]
        tag = read_tag(self.file_io, self.table_path, name)
        if tag is not None:
            if len(_TAG_CACHE) >= _CACHE_LIMIT:
                _TAG_CACHE.clear()
            _TAG_CACHE[path] = (mtime, size, tag)
        return tag

    def _mtime(self, name: str) -> int | None:
        for n, mtime in list_tag_names(self.file_io, self.table_path):
            if n == name:
                return mtime
        return None

    def _read_text_or_raise(self, name: str) -> bytes:
        _check_name(name)
        try:
            return self.file_io.read_bytes(self.path(name))
        except FileNotFoundError:
            raise TagNotExistError(f"tag {name!r} of table {self.table_path} does not exist") from None


def clean_unused_files_of(ctx: StoreContext, gone: Snapshot, tagged: Callable[[], Sequence[Snapshot]]) -> int:
    """Delete the files of ``gone`` (a snapshot no tag or snapshot file refers to any more) that nothing else uses.

    ``tagged()`` reads the remaining tagged snapshots; it is called after the earliest snapshot was read. Why that
    order: a tag created concurrently is checked by its creator after it is written (:meth:`TagManager.create`), so
    its snapshot still existed after this read of the tags, and is therefore the earliest read here or newer; the
    files it shares with ``gone`` are then in that earliest snapshot or in a tag between (the neighbours kept).
    Reading the tags first lost them: a tag created on a snapshot that expired before the earliest was read had
    neither (simulation ``pk-partition-expire`` seed 898). A tag found then on the same snapshot (created after the
    deleted tag's file was read, held by it while it was checked) keeps everything. Returns the number of files
    deleted; if the neighbours cannot be read nothing is deleted (orphan cleaning can remove the files later).
    """
    refs = FileRefs(ctx)
    fio, tp = ctx.file_io, ctx.table_path
    changelog_ids = list_changelog_ids(fio, tp)
    changelog_anchors: list[Snapshot] = []
    try:
        earliest = earliest_snapshot_id(fio, tp)
        first = read_snapshot(fio, tp, earliest) if earliest is not None else None
        others = tagged()
        if any(_same(s, gone) for s in others):
            return 0  # a tag created meanwhile on the same snapshot holds all of it
        left = max((s for s in others if s.id < gone.id), key=lambda s: s.id, default=None)
        right_tag = min((s for s in others if s.id > gone.id), key=lambda s: s.id, default=None)
        anchors: list[Snapshot] = [s for s in (left, right_tag) if s is not None]
        if first is not None and (right_tag is None or first.id < right_tag.id):
            anchors.append(first)
        near = [i for i in changelog_ids if i >= gone.id][:2] + [i for i in changelog_ids if i < gone.id][-1:]
        for cid in near:
            c = read_changelog(fio, tp, cid)
            if c is not None:
                changelog_anchors.append(c)
        keep = ReferencedFiles(refs.live_union(anchors), refs.skip_names(anchors))
        keep.data |= refs.live_union(changelog_anchors, missing_ok=True)
        keep.meta |= refs.skip_names(changelog_anchors, missing_ok=True)
        for cid in changelog_ids:  # long-lived changelogs of APPEND commits read their delta files
            c = read_changelog(fio, tp, cid)
            if c is not None:
                keep.data |= refs.delta_added(c)
        keep.update(refs.branch_pins())
    except (OSError, ValueError, TableEngineError) as e:
        log.warning("not deleting the files of snapshot %d of %s: cannot read what else uses them: %s",
                    gone.id, tp, e)
        return 0
    data = [p for p in refs.live_paths(gone, missing_ok=True) if p not in keep.data]
    meta = [p for n, p in refs.meta_files(gone, changelog_list=False).items() if n not in keep.meta]
    return refs.delete(data) + refs.delete(meta)


def _still_there(file_io: FileIO, table_path: str, snapshot: Snapshot, attempts: int = 3) -> bool:
    """Whether ``snapshot`` is still in the table: ``snapshot-<id>`` is there and is this snapshot, not one that a
    writer published under the same id after a rollback freed it. Asked again when the request fails (a tag's
    verification must get an answer)."""
    for attempt in range(attempts):
        try:
            return _same(read_snapshot(file_io, table_path, snapshot.id), snapshot)
        except SnapshotNotExistError:
            return False
        except OSError:
            if attempt == attempts - 1:
                raise
    return False  # pragma: no cover


def _same(a: Snapshot, b: Snapshot) -> bool:
    """The same publication (manifest lists have unique names), not only the same id."""
    return a.id == b.id and a.base_manifest_list == b.base_manifest_list and \
        a.delta_manifest_list == b.delta_manifest_list


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise TagError("tag name must not be blank")
    if "/" in name or "\\" in name:
        raise TagError(f"tag name {name!r} must not contain path separators")


def rollback_version(version: str) -> tuple[int | None, str | None]:
    """A rollback target as Paimon's ``rollback`` procedure takes it, one text for both (``version``): all digits
    is a snapshot id, anything else a tag name; ``tag:<name>`` is the tag ``<name>`` whatever it looks like (the
    automatic tags of ``tag.period-formatter`` = ``without_dashes`` are all digits). ``(snapshot id, None)`` or
    ``(None, tag)``."""
    text = version.strip()
    if text.startswith("tag:"):
        text = text[len("tag:"):].strip()
        if not text:
            raise TagError(f"the version to roll back to, {version!r}, names no tag after 'tag:'")
        return None, text
    if not text:
        raise TagError("the version to roll back to is empty: give a snapshot id or a tag name")
    return (int(text), None) if text.isdigit() else (None, text)

