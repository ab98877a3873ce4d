"""Helpers of the lifecycle tests: an independent referenced-files oracle and snapshot content capture.

The oracle deliberately does not use ``table_engine.store.lifecycle.file_refs``: it walks snapshots, tags and changelogs
with the format readers and merges manifests itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pyarrow as pa

from table_engine.format.changelog_file import list_changelog_ids, read_changelog
from table_engine.format.index_manifest import read_index_manifest
from table_engine.format.manifest import FileKind, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.snapshot import Snapshot, list_snapshot_ids, read_snapshot
from table_engine.table import Table

METADATA_DIRS = ("schema", "snapshot", "tag", "consumer", "changelog")


def disk_files(table: Table) -> set[str]:
    """Data, changelog, manifest and index files on disk (not snapshot/tag/schema/consumer JSON), listed through the
    table's FileIO (a local directory tree or an S3 prefix alike)."""
    out = set()
    root = table.path.rstrip("/")
    for st in table.file_io.walk(root):
        rel = st.path[len(root) + 1:].split("/")
        if rel[0] in METADATA_DIRS or rel[-1].startswith("."):
            continue
        out.add(st.path)
    return out


def _manifest_path(table: Table, name: str) -> str:
    return f"{table.path}/manifest/{name}"


def _live(table: Table, snap: Snapshot, lists: Iterable[str | None]) -> set[str]:
    state: dict[tuple[bytes, int, int, str], tuple[bytes, int, object]] = {}
    for list_name in lists:
        if not list_name:
            continue
        for meta in read_manifest_list(table.file_io, _manifest_path(table, list_name)):
            for e in read_manifest(table.file_io, _manifest_path(table, meta.file_name)):
                key = (e.partition, e.bucket, e.file.level, e.file.file_name)
                if e.kind == FileKind.ADD:
                    state[key] = (e.partition, e.bucket, e.file)
                else:
                    state.pop(key, None)
    out = set()
    for part, bucket, f in state.values():
        path = table.store.path_factory.data_file(part, bucket, f)  # type: ignore[arg-type]
        out.add(path)
        for extra in f.extra_files:  # type: ignore[attr-defined]
            out.add(os.path.join(os.path.dirname(path), extra))
    return out


def snapshot_references(table: Table, snap: Snapshot, with_changelog: bool = True) -> set[str]:
    """Every file ``snap`` needs: live data files, (changelog files,) manifests, lists, index files."""
    out = _live(table, snap, [snap.base_manifest_list, snap.delta_manifest_list])
    lists = [snap.base_manifest_list, snap.delta_manifest_list]
    if with_changelog and snap.changelog_manifest_list:
        lists.append(snap.changelog_manifest_list)
        out |= _live(table, snap, [snap.changelog_manifest_list])
    for list_name in lists:
        out.add(_manifest_path(table, list_name))
        for meta in read_manifest_list(table.file_io, _manifest_path(table, list_name)):
            out.add(_manifest_path(table, meta.file_name))
    if snap.index_manifest:
        out.add(_manifest_path(table, snap.index_manifest))
        for ie in read_index_manifest(table.file_io, _manifest_path(table, snap.index_manifest)):
            out.add(f"{table.path}/index/{ie.index_file.file_name}")
    return out


def retained_snapshots(table: Table) -> list[Snapshot]:
    return [read_snapshot(table.file_io, table.path, i) for i in list_snapshot_ids(table.file_io, table.path)]


def referenced_files(table: Table) -> set[str]:
    """What retained snapshots, tags (their snapshot's data, not its changelog) and changelogs reference."""
    out: set[str] = set()
    for snap in retained_snapshots(table):
        out |= snapshot_references(table, snap)
    for tag in table.tags():
        out |= snapshot_references(table, tag.snapshot, with_changelog=False)
    for cid in list_changelog_ids(table.file_io, table.path):
        c = read_changelog(table.file_io, table.path, cid)
        assert c is not None
        if c.changelog_manifest_list:
            lists = [c.changelog_manifest_list]
            out |= _live(table, c, lists)
        else:  # changelog-producer none: the changelog of an APPEND commit is what its delta added
            lists = [c.base_manifest_list, c.delta_manifest_list]
            if str(c.commit_kind) == "APPEND":
                out |= _live(table, c, [c.delta_manifest_list])
        for list_name in lists:
            out.add(_manifest_path(table, list_name))
            for meta in read_manifest_list(table.file_io, _manifest_path(table, list_name)):
                out.add(_manifest_path(table, meta.file_name))
    return out


def assert_exact_files(table: Table) -> None:
    """Nothing referenced is missing, and nothing unreferenced is left on disk."""
    disk = disk_files(table)
    ref = referenced_files(table)
    missing = sorted(ref - disk)
    extra = sorted(disk - ref)
    assert not missing, f"referenced files are missing: {missing[:5]}"
    assert not extra, f"unreferenced files were left behind: {extra[:5]}"


def assert_nothing_missing(table: Table) -> None:
    missing = sorted(referenced_files(table) - disk_files(table))
    assert not missing, f"referenced files are missing: {missing[:5]}"


def rows(t: pa.Table) -> list[tuple[object, ...]]:
    """Order-independent content of a read."""
    return sorted(tuple(r.values()) for r in t.to_pylist())


def capture(table: Table, contents: dict[int, list[tuple[object, ...]]]) -> None:
    """Record the content of every snapshot not recorded yet."""
    for sid in list_snapshot_ids(table.file_io, table.path):
        if sid not in contents:
            contents[sid] = rows(table.read(snapshot_id=sid))
