"""A snapshot that references a missing file: every read and maintenance path raises ``MissingFileError`` (a
``TableEngineError``) naming the snapshot and the file, never a bare ``FileNotFoundError``.

One table (primary key, deletion vectors, lookup changelog, one bucket) with two writes: snapshots 1-4 (APPEND,
COMPACT, APPEND, COMPACT) and a tag of snapshot 4. For each kind of file, one file snapshot 4 references is deleted
and every entry point is called: it either does not need the file (expiry and tag bookkeeping tolerate files that
are gone, as Paimon's do) or raises the one error. The entry points: reads (latest, tag, older snapshot, batches,
incremental, system tables), write, compaction, snapshot expiry, tags, rollback, orphan cleanup, partition drop and
expiry, file-index rewrite and the changelog consumer; and, on a dynamic-bucket table, a write whose HASH index file
is gone.
"""

from __future__ import annotations

import glob
import os
import pathlib
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import MissingFileError, TableEngineError
from table_engine.format.manifest_list import read_manifest_list
from table_engine.io.paths import manifest_path
from table_engine.table import Table

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
OPTIONS = {"bucket": "1", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"}


def make(catalog: Catalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS)
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "dt": ["x"] * 3}))
    t.write(pa.table({"id": [1], "v": ["z"], "dt": ["x"]}))
    assert t.latest_snapshot_id() == 4
    t.create_tag("tg", 4)
    return t


def victim(t: Table, kind: str) -> str:
    """A file of ``kind`` that the latest snapshot (4) references."""
    snap = t.latest_snapshot()
    assert snap is not None and snap.base_manifest_list and snap.delta_manifest_list and snap.index_manifest
    if kind == "base manifest list":
        return manifest_path(t.path, snap.base_manifest_list)
    if kind == "delta manifest list":
        return manifest_path(t.path, snap.delta_manifest_list)
    if kind == "manifest":
        metas = read_manifest_list(t.file_io, manifest_path(t.path, snap.base_manifest_list))
        return manifest_path(t.path, metas[0].file_name)
    if kind == "index manifest":
        return manifest_path(t.path, snap.index_manifest)
    if kind == "data file":
        return sorted(glob.glob(f"{t.path}/dt=x/bucket-0/data-*"), key=os.path.getmtime)[-1]
    if kind == "changelog file":
        return sorted(glob.glob(f"{t.path}/dt=x/bucket-0/changelog-*"), key=os.path.getmtime)[0]
    assert kind == "deletion vector index file"
    (path,) = glob.glob(f"{t.path}/index/index-*")
    return path


ACTIONS: dict[str, Callable[[Catalog, Table], Any]] = {
    "read": lambda c, t: t.read(),
    "read tag": lambda c, t: t.read(tag="tg"),
    "read snapshot 2": lambda c, t: t.read(snapshot_id=2),
    "to_batches": lambda c, t: list(t.to_batches()),
    "write": lambda c, t: t.write(pa.table({"id": [2], "v": ["y"], "dt": ["x"]})),
    "compact": lambda c, t: t.maintenance.compact(full=True),
    "expire snapshots": lambda c, t: t.expire_snapshots(retain_max=1, retain_min=1),
    "incremental read": lambda c, t: t.copy({"incremental-between": "1,4"}).read(),
    "$files": lambda c, t: c.get_table("db.t$files").read(),
    "$audit_log": lambda c, t: c.get_table("db.t$audit_log").read(),
    "$snapshots": lambda c, t: c.get_table("db.t$snapshots").read(),
    "create tag": lambda c, t: t.create_tag("t2"),
    "delete tag": lambda c, t: t.delete_tag("tg"),
    "rollback": lambda c, t: t.rollback_to(2),
    "remove orphan files": lambda c, t: t.maintenance.remove_orphan_files(dry_run=True),
    "drop partitions": lambda c, t: t.maintenance.drop_partitions([{"dt": "x"}]),
    "expire partitions": lambda c, t: t.maintenance.expire_partitions(
        expiration_time="1 d", timestamp_formatter="yyyy-MM-dd", timestamp_pattern="2000-01-01"),
    "rewrite file index": lambda c, t: t.maintenance.rewrite_file_index(),
    "consume changelog": lambda c, t: _consume(c, t),
}


def _consume(catalog: Catalog, t: Table) -> Any:
    from table_engine.ops import ConsumeChangelog
    from table_engine.ops.run import run_command

    out = pathlib.Path(t.path).parent.parent / "changes-out"
    return run_command(ConsumeChangelog(warehouse=catalog.warehouse, table="db.t", consumer_id="c",
                                        output=str(out), from_snapshot=1))

KINDS = ["base manifest list", "delta manifest list", "manifest", "index manifest", "data file", "changelog file",
         "deletion vector index file"]

# (kind, action) pairs that must fail: the entry point needs that file of snapshot N (named in the error; 0: any
# snapshot that references it)
MUST_FAIL: dict[tuple[str, str], int] = {
    **{(k, a): 4 for k in KINDS[:5] + KINDS[6:] for a in ("read", "read tag", "to_batches", "write", "compact",
                                                           "$audit_log")},
    **{(k, "$files"): 4 for k in KINDS[:3]},
    **{(k, "remove orphan files"): 0 for k in KINDS[:4]},
    ("manifest", "read snapshot 2"): 2,
    ("manifest", "rollback"): 2,
    ("changelog file", "incremental read"): 2,
    ("changelog file", "consume changelog"): 0,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("action", list(ACTIONS))
def test_a_missing_file_is_one_error_naming_the_snapshot_and_the_file(catalog: Catalog, kind: str,
                                                                      action: str) -> None:
    t = make(catalog)
    path = victim(t, kind)
    os.remove(path)
    expected = MUST_FAIL.get((kind, action))
    try:
        ACTIONS[action](catalog, t)
    except MissingFileError as e:
        assert isinstance(e, TableEngineError)
        assert e.path == path and path in str(e), str(e)
        assert e.snapshot_id is not None and f"snapshot {e.snapshot_id} references" in str(e), str(e)
        if expected:
            assert e.snapshot_id == expected, str(e)
        assert "\n" not in str(e)
    else:
        assert expected is None, f"{action} with a missing {kind} raised nothing"


def test_the_error_is_still_a_file_not_found_error_and_pickles(catalog: Catalog) -> None:
    """Code that tolerates files that are gone (``except FileNotFoundError``) keeps working; Spark ships it."""
    import pickle

    t = make(catalog)
    os.remove(victim(t, "data file"))
    with pytest.raises(FileNotFoundError) as info:
        t.read()
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, MissingFileError) and str(again) == str(info.value)


def test_a_failed_read_or_compaction_leaves_the_table_unchanged(catalog: Catalog) -> None:
    t = make(catalog)
    os.remove(victim(t, "data file"))

    def files() -> dict[str, bytes]:
        return {p: pathlib.Path(p).read_bytes() for p in glob.glob(f"{t.path}/**", recursive=True)
                if os.path.isfile(p)}

    before = files()
    for action in ("read", "compact", "write", "$audit_log"):
        with pytest.raises(MissingFileError):
            ACTIONS[action](catalog, t)
        assert files() == before, action


def test_a_missing_hash_index_file_is_one_error(catalog: Catalog) -> None:
    """Dynamic bucket (``bucket`` = -1): the next write reads the bucket's HASH index file; when it is gone the
    write raises the one error naming the snapshot and the file, and commits nothing."""
    t = catalog.create_table("db.h", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "-1"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "dt": ["x"] * 3}))
    (path,) = glob.glob(f"{t.path}/index/index-*")
    os.remove(path)
    with pytest.raises(MissingFileError) as info:
        t.write(pa.table({"id": [4], "v": ["d"], "dt": ["x"]}))
    assert info.value.path == path and "snapshot 1 references" in str(info.value), str(info.value)
    assert t.latest_snapshot_id() == 1
