"""Reading a table's changelog straight from its snapshots (independent of the incremental readers), and a dict
model that applies it."""

from __future__ import annotations

from typing import Any

from table_engine.format.formats import read_file
from table_engine.format.manifest import FileKind, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.snapshot import Snapshot
from table_engine.io.paths import manifest_dir
from table_engine.lsm.key_value import VALUE_KIND
from table_engine.table import Table

KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}
Change = tuple[Any, ...]


def changelog_of(t: Table, snap: Snapshot) -> list[Change]:
    """(kind, *table columns) of the changelog files of ``snap``: files in manifest order, rows in file order."""
    if not snap.changelog_manifest_list:
        return []
    names = [f.name for f in t.schema.fields]
    out: list[Change] = []
    mdir = manifest_dir(t.path)
    for meta in read_manifest_list(t.file_io, f"{mdir}/{snap.changelog_manifest_list}"):
        for e in read_manifest(t.file_io, f"{mdir}/{meta.file_name}"):
            assert e.kind == FileKind.ADD
            data = read_file(t.file_io, t.store.path_factory.data_file(e.partition, e.bucket, e.file))
            kinds = data.column(VALUE_KIND).to_pylist()
            cols = [data.column(n).to_pylist() for n in names]
            out += [(KINDS[k], *vals) for k, *vals in zip(kinds, *cols)]
    return out


def changelogs(t: Table) -> dict[int, list[Change]]:
    """Changelog of every snapshot that has one, by snapshot id."""
    return {s.id: changelog_of(t, s) for s in t.snapshots() if s.changelog_manifest_list}


def all_changes(t: Table) -> list[Change]:
    return [c for _, cs in sorted(changelogs(t).items()) for c in cs]


def changelog_file_metas(t: Table, snap: Snapshot) -> list[Any]:
    mdir = manifest_dir(t.path)
    assert snap.changelog_manifest_list
    return [e for meta in read_manifest_list(t.file_io, f"{mdir}/{snap.changelog_manifest_list}")
            for e in read_manifest(t.file_io, f"{mdir}/{meta.file_name}")]


def apply_changes(changes: list[Change], key_width: int = 1, strict: bool = True) -> dict[Any, Change]:
    """Apply +I/-U/+U/-D rows to an empty table keyed by the first ``key_width`` columns. ``strict``: a retraction
    must name exactly the current row, an insert must not overwrite one."""
    state: dict[Any, Change] = {}
    for kind, *vals in changes:
        key = tuple(vals[:key_width])
        row = tuple(vals)
        if kind in ("-U", "-D"):
            if strict:
                assert state.get(key) == row, f"{kind} {row} but the current row is {state.get(key)}"
            state.pop(key, None)
        else:
            if strict and kind == "+I":
                assert key not in state, f"+I {row} over {state[key]}"
            state[key] = row
    return state


def table_rows(t: Table, key_width: int = 1) -> dict[Any, Change]:
    return {tuple(r.values())[:key_width]: tuple(r.values()) for r in t.read().to_pylist()}

