"""Clone (Paimon's ``clone``): schemas and the chosen snapshot's data files copied, one COMPACT snapshot committed by
the target's commit path; a re-run copies only the files the target lacks; refusals change nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import SnapshotNotExistError, TableAlreadyExistError, UnsupportedError
from table_engine.table.clone import CLONE_USER, CloneResult, clone_table
from table_engine.table.table import Table
from tests.table_engine.test_bad_input import warehouse_state

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])


def rows(lo: int, hi: int, tag: str) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table({"id": ids, "dt": [f"d{i % 2}" for i in ids], "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def pk_table(catalog: Catalog, name: str = "db.src") -> Table:
    t = catalog.create_table(name, SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "2"})
    t.write(rows(0, 20, "a"))
    t.write(rows(10, 30, "b"))
    t.create_tag("t2")
    t.write(rows(25, 40, "c"))
    return t


def clone(source: Table, target_catalog: Catalog, target: str, **kw: object) -> CloneResult:
    db = target.split(".")[0]
    target_catalog.create_database(db, ignore_if_exists=True)
    path = target_catalog.table_path(target)
    return clone_table(source, target_catalog.file_io, path, target, lambda _: target_catalog.get_table(target),
                       **kw)  # type: ignore[arg-type]


def sorted_rows(t: pa.Table) -> list[dict[str, object]]:
    return sorted(t.to_pylist(), key=lambda r: (r["id"], r["dt"]))


def test_clone_then_incremental(catalog: Catalog, tmp_path: object) -> None:
    src = pk_table(catalog)
    other = Catalog(str(tmp_path) + "/other")  # type: ignore[operator]
    r1 = clone(src, other, "db.dst", tag="t2")
    dst = other.get_table("db.dst")
    assert r1.source_snapshot_id == 2 and r1.files_copied == r1.files_total > 0 and r1.schemas_copied == 1
    assert sorted_rows(dst.read()) == sorted_rows(src.read(tag="t2"))
    snap = dst.latest_snapshot()
    assert snap is not None and snap.commit_user == CLONE_USER and snap.commit_identifier == 2

    r2 = clone(src, other, "db.dst")  # latest: only snapshot 3's new files are copied
    assert r2.source_snapshot_id == 3 and r2.files_copied == r2.files_total - r1.files_total > 0
    assert r2.files_removed == 0
    assert sorted_rows(other.get_table("db.dst").read()) == sorted_rows(src.read())

    src.maintenance.compact(full=True)  # the source's files are rewritten: the clone drops the old ones
    r3 = clone(src, other, "db.dst")
    assert r3.files_removed == r2.files_total and r3.files_copied == r3.files_total
    assert sorted_rows(other.get_table("db.dst").read()) == sorted_rows(src.read())

    r4 = clone(src, other, "db.dst")  # the same snapshot again: nothing copied, nothing committed
    assert r4.files_copied == 0 and r4.snapshot_id == r3.snapshot_id
    assert other.get_table("db.dst").latest_snapshot_id() == r3.snapshot_id


def test_clone_by_snapshot_id_and_schema_evolution(catalog: Catalog, tmp_path: object) -> None:
    from table_engine.schema_change import AddColumn

    src = pk_table(catalog)
    src.alter(AddColumn("extra", pa.int32()))
    src.write(pa.table({"id": [100], "dt": ["d0"], "v": ["x"], "extra": [7]},
                       schema=src.arrow_schema))
    other = Catalog(str(tmp_path) + "/other")  # type: ignore[operator]
    r = clone(src, other, "db.dst", snapshot_id=1)
    assert r.source_snapshot_id == 1 and r.schemas_copied == 1
    r = clone(src, other, "db.dst")
    assert r.schemas_copied == 1
    dst = other.get_table("db.dst")
    assert dst.arrow_schema == src.arrow_schema
    assert sorted_rows(dst.read()) == sorted_rows(src.read())


def test_refusals_change_nothing(catalog: Catalog, tmp_path: object) -> None:
    src = pk_table(catalog)
    other = Catalog(str(tmp_path) + "/other")  # type: ignore[operator]
    own = other.create_table("db.mine", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "2"})
    own.write(rows(0, 3, "z"))
    before = warehouse_state(str(tmp_path) + "/other")  # type: ignore[operator]
    with pytest.raises(TableAlreadyExistError, match="db.mine: the target has data a clone did not write"):
        clone(src, other, "db.mine")
    with pytest.raises(SnapshotNotExistError, match="snapshot 99 does not exist"):
        clone(src, other, "db.dst", snapshot_id=99)
    assert warehouse_state(str(tmp_path) + "/other") == before  # type: ignore[operator]

    ext = catalog.create_table("db.ext", SCHEMA, options={"bucket": "-1", "deletion-vectors.enabled": "true"})
    ext.write(rows(0, 3, "a"))
    r = clone(ext, other, "db.ext_copy")  # an append table without index files yet: clonable
    assert sorted_rows(other.get_table("db.ext_copy").read()) == sorted_rows(ext.read()) and r.files_copied == 1

    far = catalog.create_table("db.far", SCHEMA, options={
        "bucket": "-1", "data-file.external-paths": f"file://{tmp_path}/ext",
        "data-file.external-paths.strategy": "round-robin"})
    far.write(rows(0, 3, "a"))
    before = warehouse_state(str(tmp_path) + "/other")  # type: ignore[operator]
    with pytest.raises(UnsupportedError, match="db.far .*is at an external path"):
        clone(far, other, "db.far")
    assert warehouse_state(str(tmp_path) + "/other") == before  # type: ignore[operator]


def test_clones_deletion_vectors(catalog: Catalog, tmp_path: object) -> None:
    t = catalog.create_table("db.dv", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "1", "deletion-vectors.enabled": "true"})
    t.write(rows(0, 10, "a"))
    t.maintenance.compact(full=True)
    t.write(rows(0, 5, "b"))
    t.maintenance.compact()
    snap = t.latest_snapshot()
    assert snap is not None and snap.index_manifest and t.store.index_entries(snap)
    other = Catalog(str(tmp_path) + "/other")  # type: ignore[operator]
    r = clone(t, other, "db.dv")
    dst = other.get_table("db.dv")
    assert r.files_copied == r.files_total + len(t.store.index_entries(snap))
    assert sorted_rows(dst.read()) == sorted_rows(t.read())
    t.write(rows(3, 8, "c"))  # new vectors replace the old ones in the copy
    t.maintenance.compact()
    clone(t, other, "db.dv")
    dst = other.get_table("db.dv")
    assert sorted_rows(dst.read()) == sorted_rows(t.read())
    assert {e.index_file.file_name for e in dst.store.index_entries(dst.latest_snapshot())} == {
        e.index_file.file_name for e in t.store.index_entries(t.latest_snapshot())}


class FailingCopy:
    """Wraps a FileIO: the n-th output stream opened fails when written (a crash half-way through the copy)."""

    def __init__(self, inner: object, fail_at: int) -> None:
        self._inner, self.fail_at, self.opened = inner, fail_at, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def open_output(self, path: str) -> object:
        self.opened += 1
        if self.opened == self.fail_at:
            raise OSError(f"injected failure writing {path}")
        return self._inner.open_output(path)  # type: ignore[attr-defined]


def test_a_copy_that_fails_half_way_publishes_nothing_and_the_rerun_finishes(catalog: Catalog,
                                                                           tmp_path: object) -> None:
    src = pk_table(catalog)
    other = Catalog(str(tmp_path) + "/other")  # type: ignore[operator]
    first = clone(src, other, "db.dst", snapshot_id=1)
    src.maintenance.compact(full=True)
    path = other.table_path("db.dst")
    failing = FailingCopy(other.file_io, fail_at=2)
    with pytest.raises(OSError, match="injected failure"):
        clone_table(src, failing, path, "db.dst", lambda _: other.get_table("db.dst"))  # type: ignore[arg-type]
    dst = other.get_table("db.dst")
    assert dst.latest_snapshot_id() == first.snapshot_id  # readers still see the first clone, whole
    assert sorted_rows(dst.read()) == sorted_rows(src.read(snapshot_id=1))
    again = clone(src, other, "db.dst")
    assert again.files_copied == again.files_total - 1  # the file copied before the failure is not copied again
    assert sorted_rows(other.get_table("db.dst").read()) == sorted_rows(src.read())
