"""``list_objects``: the index rows of a location's objects, on local disk (an object store's listing through a
fake FileIO here; the real S3 server in test_refresh.py)."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
from collections.abc import Iterator

import pyarrow as pa
import pytest

from table_engine.errors import OptionError, StorageError
from table_engine.io.file_io import FileStatus, LocalFileIO
from table_engine.object_table import ARROW_SCHEMA, VIRTUAL_ARROW_SCHEMA, list_objects, qualified_location, virtual_rows
from table_engine.object_table.listing import DIR_MARKER

#: modification times at exact milliseconds (x.125 s, x.5 s)
EXACT_MTIMES_NS = (1_700_000_000_125_000_000, 1_700_000_100_500_000_000, 1_700_000_200_000_000_000)


def put(root: pathlib.Path, relative: str, data: bytes, mtime_ns: int | None = None) -> pathlib.Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def utc_millis(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)


def test_nested_objects_as_paimon_records_them(tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "b.txt", b"hello", EXACT_MTIMES_NS[0])
    put(loc, "img/a.jpg", b"\xff\xd8" * 10, EXACT_MTIMES_NS[1])
    put(loc, "img/2024/01/deep.bin", b"", EXACT_MTIMES_NS[2])
    (loc / "empty-dir").mkdir()
    rows = list_objects(LocalFileIO(), str(loc))
    assert rows.schema == ARROW_SCHEMA
    base = f"file:{loc}"
    assert rows.select(["path", "parent_path", "name", "length", "mtime"]).to_pylist() == [
        {"path": f"{base}/b.txt", "parent_path": base, "name": "b.txt", "length": 5,
         "mtime": utc_millis(EXACT_MTIMES_NS[0] // 1_000_000)},
        {"path": f"{base}/img/2024/01/deep.bin", "parent_path": f"{base}/img/2024/01", "name": "deep.bin",
         "length": 0, "mtime": utc_millis(EXACT_MTIMES_NS[2] // 1_000_000)},
        {"path": f"{base}/img/a.jpg", "parent_path": f"{base}/img", "name": "a.jpg", "length": 20,
         "mtime": utc_millis(EXACT_MTIMES_NS[1] // 1_000_000)},
    ]
    assert set(rows.column("atime").to_pylist()) == {utc_millis(0)}  # Paimon: getAccessTime() defaults to 0
    for column in ("owner", "generation", "content_type", "storage_class", "md5_hash", "metadata_mtime", "metadata"):
        assert rows.column(column).null_count == 3


def test_mtime_of_any_file_is_its_millisecond(tmp_path: pathlib.Path) -> None:
    """Any mtime (not only exact floats): LocalFileIO's is Java's ``File.lastModified()`` (``st_mtime_ns // 1e6``,
    the nanoseconds truncated; a float ``st_mtime * 1000`` could fall 1 ms below it)."""
    loc = tmp_path / "objects"
    paths = [put(loc, f"f{i}", b"x" * i) for i in range(20)]
    rows = list_objects(LocalFileIO(), str(loc))
    got = dict(zip(rows.column("name").to_pylist(), rows.column("mtime").cast(pa.int64()).to_pylist(), strict=True))
    for p in paths:
        java = p.stat().st_mtime_ns // 1_000_000
        assert got[p.name] == java


@pytest.mark.parametrize("spelling", ["plain", "trailing-slash", "file-uri", "file-colon", "relative"])
def test_location_spellings_give_the_same_rows(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                               spelling: str) -> None:
    loc = tmp_path / "objects"
    put(loc, "d/x", b"abc")
    monkeypatch.chdir(tmp_path)
    location = {"plain": str(loc), "trailing-slash": f"{loc}/", "file-uri": f"file://{loc}",
                "file-colon": f"file:{loc}", "relative": "objects"}[spelling]
    rows = list_objects(LocalFileIO(), location)
    assert rows.column("path").to_pylist() == [f"file:{loc}/d/x"]
    assert qualified_location(location) == f"file:{loc}"


def test_empty_location(tmp_path: pathlib.Path) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    rows = list_objects(LocalFileIO(), str(tmp_path / "empty"))
    assert rows.num_rows == 0 and rows.schema == ARROW_SCHEMA


def test_missing_location_and_file_location_are_refused_by_name(tmp_path: pathlib.Path) -> None:
    missing = str(tmp_path / "nope")
    with pytest.raises(OptionError, match=f"object-location '{missing}' does not exist"):
        list_objects(LocalFileIO(), missing)
    file = put(tmp_path, "a-file", b"x")
    with pytest.raises(OptionError, match="is a file, not a directory"):
        list_objects(LocalFileIO(), str(file))


class FakeObjectStore(LocalFileIO):
    """An object store's listing: no directories, a flat walk that also yields markers the engine and other tools
    leave (``<dir>/.keep``, ``folder/``)."""

    has_directories = False

    def __init__(self, statuses: list[FileStatus]) -> None:
        super().__init__()
        self.statuses = statuses

    def exists(self, path: str) -> bool:
        return True

    def is_file(self, path: str) -> bool:
        return False

    def walk(self, path: str) -> Iterator[FileStatus]:
        yield from self.statuses


def test_object_store_markers_are_not_objects() -> None:
    base = "s3://bucket/loc"
    fio = FakeObjectStore([FileStatus(f"{base}/a/{DIR_MARKER}", 0, False, 1),
                           FileStatus(f"{base}/folder/", 0, False, 2),
                           FileStatus(f"{base}/a/photo.png", 7, False, 1_700_000_000_000),
                           FileStatus(f"{base}/z", 1, False, 5)])
    rows = list_objects(fio, base + "/")
    assert rows.column("path").to_pylist() == [f"{base}/a/photo.png", f"{base}/z"]
    assert rows.column("parent_path").to_pylist() == [f"{base}/a", base]
    assert rows.column("length").to_pylist() == [7, 1]


def test_dir_marker_is_the_object_stores() -> None:
    from table_engine.io.object_store import DIR_MARKER as ENGINE_MARKER

    assert DIR_MARKER == ENGINE_MARKER


def test_a_listing_outside_the_location_is_an_error() -> None:
    fio = FakeObjectStore([FileStatus("s3://bucket/elsewhere/x", 1, False, 1)])
    with pytest.raises(StorageError, match="outside"):
        list_objects(fio, "s3://bucket/loc")


def test_virtual_rows_are_paimon_1_3s_shape(tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    put(loc, "img/a.jpg", b"12345", EXACT_MTIMES_NS[0])
    rows = list_objects(LocalFileIO(), str(loc))
    virtual = virtual_rows(rows, qualified_location(str(loc)))
    assert virtual.schema == VIRTUAL_ARROW_SCHEMA
    assert virtual.to_pylist() == [{"path": "img/a.jpg", "name": "a.jpg", "length": 5,
                                    "mtime": EXACT_MTIMES_NS[0] // 1_000_000, "atime": 0, "owner": None}]
