"""Long-lived changelog metadata (``changelog/changelog-<id>``), Paimon's decoupled changelog lifecycle.

When ``changelog.*`` retention is longer than snapshot retention, snapshot expiry turns each expired snapshot
into a changelog file with the same JSON (Paimon's ``Changelog`` is a ``Snapshot``), so its changelog (changelog
files, or for ``changelog-producer = none`` the delta files of APPEND commits) outlives the snapshot.
``changelog/EARLIEST`` and ``changelog/LATEST`` are hints, verified like the snapshot hints.
"""

from __future__ import annotations

import re

from table_engine.format.snapshot import Snapshot
from table_engine.io.file_io import FileIO

__all__ = [
    "CHANGELOG_PREFIX",
    "changelog_dir",
    "changelog_path",
    "delete_changelog",
    "list_changelog_ids",
    "read_changelog",
    "write_changelog",
    "write_changelog_hint",
]

CHANGELOG_PREFIX = "changelog-"
_NAME = re.compile(r"changelog-(\d+)")


def changelog_dir(table_path: str) -> str:
    """``<table>/changelog``, the directory of long-lived changelogs and their hints."""
    return f"{table_path.rstrip('/')}/changelog"


def changelog_path(table_path: str, changelog_id: int) -> str:
    """``<table>/changelog/changelog-<id>``."""
    return f"{changelog_dir(table_path)}/{CHANGELOG_PREFIX}{changelog_id}"


def list_changelog_ids(file_io: FileIO, table_path: str) -> list[int]:
    """Ids of all long-lived changelogs, ascending (one listing; empty when the directory is absent)."""
    ids = []
    for st in file_io.list_status(changelog_dir(table_path)):
        m = _NAME.fullmatch(st.path.rstrip("/").rsplit("/", 1)[-1])
        if m and not st.is_dir:
            ids.append(int(m.group(1)))
    ids.sort()
    return ids


def read_changelog(file_io: FileIO, table_path: str, changelog_id: int) -> Snapshot | None:
    """The changelog metadata, or None if it does not exist."""
    p = changelog_path(table_path, changelog_id)
    data = file_io.read_if_exists(p)
    return None if data is None else Snapshot.from_json(data, p)


def write_changelog(file_io: FileIO, table_path: str, snapshot: Snapshot) -> None:
    """Write (or rewrite, as Paimon does) the changelog of ``snapshot`` and move the LATEST hint."""
    file_io.write_bytes(changelog_path(table_path, snapshot.id), snapshot.to_json().encode("utf-8"), overwrite=True)
    write_changelog_hint(file_io, table_path, "LATEST", snapshot.id)


def write_changelog_hint(file_io: FileIO, table_path: str, which: str, changelog_id: int) -> None:
    """Overwrite the changelog hint ``which`` (``EARLIEST`` or ``LATEST``) with ``changelog_id``."""
    file_io.overwrite_hint(f"{changelog_dir(table_path)}/{which}", str(changelog_id).encode("ascii"))


def delete_changelog(file_io: FileIO, table_path: str, changelog_id: int) -> None:
    """Delete ``changelog-<id>`` (a missing file is ignored)."""
    file_io.try_delete(changelog_path(table_path, changelog_id))
