"""``refresh_object_table`` on engine tables created through the catalog (without ``type``/``object-location``,
which the catalog does not take yet: the location is passed), on local disk and on the session's S3 server."""

from __future__ import annotations

import pathlib
import time
import uuid
from collections.abc import Iterator

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError, SchemaError, StorageError
from table_engine.io.file_io import FileIO, FileStatus, LocalFileIO
from table_engine.io.object_store import S3FileIO
from table_engine.object_table import ARROW_SCHEMA, refresh_object_table
from table_engine.options.storage import S3Settings
from table_engine.table import Table


def put(root: pathlib.Path, relative: str, data: bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def index(table: Table) -> dict[str, int]:
    rows = table.read(columns=["path", "length"])
    return dict(zip(rows.column("path").to_pylist(), rows.column("length").to_pylist(), strict=True))


@pytest.fixture
def objects(catalog: Catalog) -> Table:
    return catalog.create_table("db.objects", ARROW_SCHEMA)


def test_refresh_after_adding_removing_replacing(objects: Table, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    base = f"file:{loc}"
    put(loc, "a.txt", b"aaa")
    put(loc, "docs/b.pdf", b"bbbb")
    first = refresh_object_table(objects, location=str(loc))
    assert (first.file_number, first.total_bytes, first.location) == (2, 7, base)
    assert index(objects) == {f"{base}/a.txt": 3, f"{base}/docs/b.pdf": 4}
    snapshot = objects.latest_snapshot()
    assert snapshot is not None and snapshot.id == first.snapshot_id and snapshot.commit_kind == "OVERWRITE"

    put(loc, "docs/2024/c.csv", b"1,2,3\n")  # added, nested
    (loc / "a.txt").unlink()  # removed
    put(loc, "docs/b.pdf", b"replaced, longer")  # replaced
    second = refresh_object_table(objects, location=str(loc))
    assert (second.file_number, second.total_bytes) == (2, 22)
    assert index(objects) == {f"{base}/docs/2024/c.csv": 6, f"{base}/docs/b.pdf": 16}
    assert second.snapshot_id == (first.snapshot_id or 0) + 1  # one commit per refresh

    old = objects.read(columns=["name"], snapshot_id=first.snapshot_id)  # time travel: the earlier listing
    assert sorted(old.column("name").to_pylist()) == ["a.txt", "b.pdf"]


def test_every_refresh_replaces_the_whole_index(objects: Table, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "x", b"x")
    for _ in range(3):
        refresh_object_table(objects, location=str(loc))
    assert objects.read().num_rows == 1
    snapshot = objects.latest_snapshot()
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE"


def test_empty_location_empties_the_index(objects: Table, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "sub/x", b"x")
    refresh_object_table(objects, location=str(loc))
    (loc / "sub" / "x").unlink()
    result = refresh_object_table(objects, location=str(loc))
    assert (result.file_number, result.total_bytes) == (0, 0)
    assert objects.read().num_rows == 0


def test_missing_location_is_refused_and_the_table_unchanged(objects: Table, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "x", b"x")
    refresh_object_table(objects, location=str(loc))
    before = objects.latest_snapshot_id()
    missing = str(tmp_path / "gone")
    with pytest.raises(OptionError, match=f"^object-location '{missing}' does not exist"):
        refresh_object_table(objects, location=missing)
    assert objects.latest_snapshot_id() == before and objects.read().num_rows == 1


class FailingWalk(LocalFileIO):
    """Lists a few objects, then fails as a broken connection does."""

    def walk(self, path: str) -> Iterator[FileStatus]:
        iterator = super().walk(path)
        yield next(iterator)
        raise StorageError(f"listing {path} failed: connection reset")


def test_a_failing_listing_leaves_the_table_as_it_was(objects: Table, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    for i in range(3):
        put(loc, f"f{i}", b"x")
    refresh_object_table(objects, location=str(loc))
    before = (objects.latest_snapshot_id(), index(objects))
    put(loc, "f3", b"new")
    with pytest.raises(StorageError, match="connection reset"):
        refresh_object_table(objects, location=str(loc), file_io=FailingWalk())
    assert (objects.latest_snapshot_id(), index(objects)) == before
    assert not [p for p in pathlib.Path(objects.path).rglob("data-*")
                if p.name not in {pathlib.Path(f).name for f in _data_files(objects)}]  # no leftover data file


def _data_files(table: Table) -> list[str]:
    return [f.file_name for split in table.plan() for f in split.files]


def test_read_with_filters_and_projections(objects: Table, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "img/a.jpg", b"1" * 10)
    put(loc, "img/b.png", b"1" * 200)
    put(loc, "txt/c.txt", b"1" * 30)
    refresh_object_table(objects, location=str(loc))
    big = objects.read(columns=["name", "length"], filter=[("length", ">", 20)])
    assert sorted(big.to_pylist(), key=lambda r: r["name"]) == [{"name": "b.png", "length": 200},
                                                                {"name": "c.txt", "length": 30}]
    img = objects.read(columns=["name"], filter=[("parent_path", "=", f"file:{loc}/img")])
    assert sorted(img.column("name").to_pylist()) == ["a.jpg", "b.png"]
    one = objects.read(columns=["path"], filter=[("name", "in", ["c.txt"])])
    assert one.schema.names == ["path"] and one.column("path").to_pylist() == [f"file:{loc}/txt/c.txt"]


def test_tables_that_are_not_object_tables_are_refused(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "x", b"x")
    plain = catalog.create_table("db.plain", pa.schema([("path", pa.string())]))
    with pytest.raises(SchemaError, match="not an object table"):
        refresh_object_table(plain, location=str(loc))
    keyed = catalog.create_table("db.keyed", ARROW_SCHEMA, primary_keys=["path"])
    with pytest.raises(OptionError, match=r"primary keys \['path'\]: an object table has no primary key"):
        refresh_object_table(keyed, location=str(loc))
    parted = catalog.create_table("db.parted", ARROW_SCHEMA, partition_keys=["parent_path"])
    with pytest.raises(OptionError, match="an object table has no partition keys"):
        refresh_object_table(parted, location=str(loc))
    fixed = catalog.create_table("db.fixed", ARROW_SCHEMA, options={"bucket": "2", "bucket-key": "path"})
    with pytest.raises(OptionError, match="'bucket' = '2'.*'bucket-key'"):
        refresh_object_table(fixed, location=str(loc))
    other_type = catalog.create_table("db.typed", ARROW_SCHEMA, options={"type": "materialized-table"})
    with pytest.raises(OptionError, match="'type' = 'materialized-table', not 'object-table'"):
        refresh_object_table(other_type, location=str(loc))
    with pytest.raises(OptionError, match="Object table should have object-location option"):
        catalog.create_table("db.objects", ARROW_SCHEMA, options={"type": "object-table"})  # refused on create
    assert not catalog.table_exists("db.objects")
    for table in (plain, keyed, parted, fixed, other_type):
        assert table.latest_snapshot_id() is None


# ---- S3 ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def s3_location(s3_server: object, s3_options: dict[str, str]) -> tuple[S3FileIO, str]:
    """An object location in a second bucket of the session's S3 server."""
    bucket = s3_server.new_bucket()  # type: ignore[attr-defined]
    return S3FileIO(S3Settings.of(s3_options)), f"s3://{bucket}/{uuid.uuid4().hex}/objects"


def s3_put(fio: FileIO, location: str, objects: dict[str, bytes]) -> None:
    for relative, data in objects.items():
        fio.write_bytes(f"{location}/{relative}", data, overwrite=True)


def test_refresh_on_s3(s3_catalog: Catalog, s3_location: tuple[S3FileIO, str]) -> None:
    fio, location = s3_location
    table = s3_catalog.create_table("db.objects", ARROW_SCHEMA)
    start = int(time.time() * 1000)
    s3_put(fio, location, {"a.txt": b"aaa", "img/2024/b.jpg": b"b" * 50, "img/c.png": b""})
    end = int(time.time() * 1000)
    result = refresh_object_table(table, location=location)  # the table's S3 FileIO serves the other bucket
    assert (result.file_number, result.total_bytes, result.location) == (3, 53, location)
    rows = table.read(columns=["path", "parent_path", "name", "length", "mtime"]).sort_by("path")
    assert rows.column("path").to_pylist() == [f"{location}/a.txt", f"{location}/img/2024/b.jpg",
                                               f"{location}/img/c.png"]
    assert rows.column("parent_path").to_pylist() == [location, f"{location}/img/2024", f"{location}/img"]
    assert rows.column("name").to_pylist() == ["a.txt", "b.jpg", "c.png"]
    assert rows.column("length").to_pylist() == [3, 50, 0]
    for mtime in rows.column("mtime").cast(pa.int64()).to_pylist():
        assert start - 2000 <= mtime <= end + 2000  # S3's Last-Modified has whole seconds

    fio.delete(f"{location}/a.txt")
    s3_put(fio, location, {"img/c.png": b"now 12 bytes", "new/d": b"d"})
    second = refresh_object_table(table, location=location)
    assert (second.file_number, second.total_bytes) == (3, 63)
    assert index(table) == {f"{location}/img/2024/b.jpg": 50, f"{location}/img/c.png": 12, f"{location}/new/d": 1}


def test_s3_empty_and_missing_locations(s3_catalog: Catalog, s3_location: tuple[S3FileIO, str]) -> None:
    fio, location = s3_location
    table = s3_catalog.create_table("db.objects", ARROW_SCHEMA)
    with pytest.raises(OptionError, match="does not exist"):  # no key below the prefix: nothing there
        refresh_object_table(table, location=location)
    assert table.latest_snapshot_id() is None
    fio.mkdirs(f"{location}/empty")  # the engine's directory marker makes an empty location
    s3_put(fio, location, {"x": b"x"})
    refresh_object_table(table, location=location)
    assert index(table) == {f"{location}/x": 1}  # the marker of empty/ is not an object
    fio.delete(f"{location}/x")
    assert refresh_object_table(table, location=location).file_number == 0
    assert table.read().num_rows == 0


def test_local_warehouse_indexes_an_s3_location(objects: Table, s3_location: tuple[S3FileIO, str]) -> None:
    fio, location = s3_location
    s3_put(fio, location, {"k/v": b"12"})
    result = refresh_object_table(objects, location=location, file_io=fio)
    assert (result.file_number, index(objects)) == (1, {f"{location}/k/v": 2})
