"""The wiring of Iceberg-compatible metadata into the engine's commits (ADR 0046): every path that publishes a snapshot
calls the table's post-commit callback, a failure there keeps the commit and the next commit heals it, a rollback
rewrites the metadata, late and stale metadata is told apart, tables shipped to tasks carry no callback, and the gate
refuses what is not written (pyiceberg reads the results: tests/interop/test_iceberg_pyiceberg_interop.py)."""

from __future__ import annotations

import json
import pathlib
import pickle
from typing import Any

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog
from table_engine.errors import UnsupportedError, UnsupportedTableFeatureError
from table_engine.iceberg import IcebergCommitter
from table_engine.iceberg.metadata import COMMIT_IDENTITY
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table

S = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.int64()), ("v", pa.string())])
ON = {"metadata.iceberg.storage": "table-location"}


def make(tmp_path: pathlib.Path, options: dict[str, str] | None = None, name: str = "db.t",
         primary_keys: list[str] | None = None, schema: pa.Schema = S) -> Table:
    return Catalog(str(tmp_path / "wh")).create_table(name, schema=schema, partition_keys=["dt"],
                                                      primary_keys=primary_keys or [],
                                                      options={**ON, **(options or {})})


def data(ids: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [str(i) for i in ids]}, schema=S)


def versions(t: Table) -> list[int]:
    d = pathlib.Path(t.path, "metadata")
    return sorted(int(p.name[1:-len(".metadata.json")]) for p in d.glob("v*.metadata.json")) if d.exists() else []


def current(t: Table) -> dict[str, Any]:
    latest = t.refresh().latest_snapshot_id()
    doc: dict[str, Any] = json.loads(pathlib.Path(t.path, "metadata", f"v{latest}.metadata.json").read_text())
    return doc


def assert_mirrored(t: Table) -> None:
    """The metadata directory holds exactly ``v<latest>`` and the hint names it."""
    latest = t.refresh().latest_snapshot_id()
    assert versions(t) == [latest]
    assert pathlib.Path(t.path, "metadata", "version-hint.text").read_text() == str(latest)
    assert current(t)["current-snapshot-id"] == latest


def state(t: Table) -> dict[str, bytes]:
    root = pathlib.Path(t.path)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_publishing_path_writes_the_metadata_of_its_snapshot(tmp_path: pathlib.Path) -> None:
    t = make(tmp_path, {"manifest.merge-min-count": "100"})
    steps = [lambda: t.write(data([1, 2])), lambda: t.write(data([3], "b")),
             lambda: t.write(data([4], "b"), overwrite=True), lambda: t.write(data([5])),
             lambda: t.maintenance.compact(full=True),
             lambda: t.maintenance.compact_manifest(), lambda: t.maintenance.drop_partitions([{"dt": "b"}])]
    for step in steps:
        before = t.refresh().latest_snapshot_id()
        step()
        assert t.refresh().latest_snapshot_id() != before, step
        assert_mirrored(t)
    # remove-unexisting-files: a data file lost on storage
    t = t.refresh()
    e = live_entries(t.file_io, t.path, t.latest_snapshot())[0]
    pathlib.Path(t.store.path_factory.data_file(e.partition, e.bucket, e.file)).unlink()
    assert t.maintenance.remove_unexisting_files(dry_run=False).snapshot_id == t.refresh().latest_snapshot_id()
    assert_mirrored(t)
    assert [s["snapshot-id"] for s in current(t)["snapshots"]] == [s.id for s in t.snapshots()]


def test_primary_key_compaction_and_commit_time_compaction(tmp_path: pathlib.Path) -> None:
    pk = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    ("v", pa.string())])
    t = make(tmp_path, {"bucket": "1", "num-sorted-run.compaction-trigger": "2"}, "db.pk", ["dt", "id"], pk)
    for i in range(4):  # the writer's own compaction publishes a second (COMPACT) snapshot per write
        t.write(data([i, i + 10]).cast(pk))
        assert_mirrored(t)
    t.maintenance.compact(full=True)
    assert_mirrored(t)
    assert [s["snapshot-id"] for s in current(t)["snapshots"]] == [s.id for s in t.snapshots()]


def test_rollback_and_fast_forward_rewrite_the_metadata(tmp_path: pathlib.Path) -> None:
    t = make(tmp_path)
    for i in range(3):
        t.write(data([i]))
    t.rollback_to(2)
    assert_mirrored(t)
    assert [s["snapshot-id"] for s in current(t)["snapshots"]] == [2]
    t.create_branch("b")
    b = t.branch_table("b")
    b.write(data([9]))  # a branch's commits write no Iceberg metadata (only the main branch has it)
    assert versions(t) == [2]
    want = sorted(b.read().column("id").to_pylist())
    t.fast_forward("b")
    assert_mirrored(t)
    assert sorted(t.read().column("id").to_pylist()) == want


def test_a_failing_callback_keeps_the_commit_and_the_next_commit_heals(tmp_path: pathlib.Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    t = make(tmp_path)
    t.write(data([1]))
    real = IcebergCommitter.commit

    def broken(self: IcebergCommitter, snapshot_id: int) -> str | None:
        raise OSError("metadata store unavailable")

    monkeypatch.setattr(IcebergCommitter, "commit", broken)
    with pytest.raises(OSError, match="metadata store unavailable"):
        t.write(data([2]))
    assert t.refresh().latest_snapshot_id() == 2 and sorted(t.read().column("id").to_pylist()) == [1, 2]
    assert versions(t) == [1]
    monkeypatch.setattr(IcebergCommitter, "commit", real)
    t.write(data([3]))
    assert_mirrored(t)
    assert [s["snapshot-id"] for s in current(t)["snapshots"]] == [1, 2, 3]  # v2 caught up, not a full rewrite


def test_late_and_stale_metadata(tmp_path: pathlib.Path) -> None:
    t = make(tmp_path)
    t.write(data([1]))
    t.write(data([2]))
    assert IcebergCommitter(t).commit(1) is None  # late: v2 is there; nothing moves back
    assert_mirrored(t)
    stale = pathlib.Path(t.path, "metadata", "v2.metadata.json").read_bytes()
    t.rollback_to(1)
    pathlib.Path(t.path, "metadata", "v2.metadata.json").write_bytes(stale)  # left by a callback of the old line
    t.write(data([3]))
    assert_mirrored(t)
    doc = current(t)
    assert doc["snapshots"][-1]["summary"][COMMIT_IDENTITY] == t.snapshot(2).uuid  # replaced, not taken as done


def test_a_shipped_table_carries_no_callback(tmp_path: pathlib.Path) -> None:
    t = make(tmp_path)
    assert t.store.snapshot_published is not None and t.store.history_rewriting is not None
    copy = pickle.loads(pickle.dumps(t))
    assert copy.store.snapshot_published is None and copy.store.history_rewriting is None
    assert t.store.snapshot_published is not None
    assert t.branch_table("main").store.snapshot_published is not None


def test_iceberg_table_options(tmp_path: pathlib.Path) -> None:
    t = make(tmp_path, {"metadata.iceberg.table-properties.write.format.default": "parquet",
                        "metadata.iceberg.previous-versions-max": "2"})
    for i in range(4):
        t.write(data([i]))
    assert current(t)["properties"]["write.format.default"] == "parquet"
    assert versions(t) == [2, 3, 4]
    keep = make(tmp_path, {"metadata.iceberg.delete-after-commit.enabled": "false"}, "db.keep")
    for i in range(3):
        keep.write(data([i]))
    assert versions(keep) == [1, 2, 3]


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"metadata.iceberg.storage": "hive-catalog"}, UnsupportedTableFeatureError,
     "metadata.iceberg.storage = hive-catalog / rest-catalog"),
    ({"metadata.iceberg.storage": "rest-catalog"}, UnsupportedTableFeatureError, "rest-catalog"),
    ({"deletion-vectors.enabled": "true", "bucket": "1"}, UnsupportedTableFeatureError,
     "Iceberg metadata with deletion vectors"),
    ({"metadata.iceberg.format-version": "3"}, UnsupportedTableFeatureError, "metadata.iceberg.format-version"),
    ({"metadata.iceberg.manifest-compression": "snappy"}, UnsupportedTableFeatureError, "snappy"),
], ids=["hive-catalog", "rest-catalog", "deletion-vectors", "format-3", "snappy"])
def test_what_is_not_written_is_refused_before_anything_changes(tmp_path: pathlib.Path, options: dict[str, str],
                                                                 error: type[Exception], match: str) -> None:
    primary = ["dt", "id"] if "deletion-vectors.enabled" in options else None
    schema = S if primary is None else pa.schema([pa.field("dt", pa.string(), nullable=False),
                                                  pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    t = make(tmp_path, options, primary_keys=primary, schema=schema)
    before = state(t)
    with pytest.raises(error, match=match):
        t.write(data([1]).cast(schema))
    assert state(t) == before
    assert t.read().num_rows == 0  # reads stay allowed


def test_a_type_iceberg_cannot_hold_is_refused_before_anything_changes(tmp_path: pathlib.Path) -> None:
    schema = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.int8())])
    t = make(tmp_path, schema=schema)
    before = state(t)
    with pytest.raises(UnsupportedError, match="writes Iceberg metadata .*TINYINT.*nothing was written"):
        t.write(pa.table({"dt": ["a"], "id": [1]}, schema=schema))
    assert state(t) == before
