"""manifest_file_names: the data file names of a manifest, read record by record (orphan cleaning, issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from table_engine.errors import CorruptMetadataError, MissingFileError
from table_engine.format.manifest import FileKind, manifest_file_names, read_manifest, write_manifest
from table_engine.io.file_io import LocalFileIO
from tests.table_engine.format.test_avro_metadata import APP, DYN, _entry, _file


def test_names_of_adds_deletes_and_extra_files(tmp_path: Path) -> None:
    fio = LocalFileIO()
    path = str(tmp_path / "manifest-x-0")
    entries = [_entry(FileKind.ADD, f"data-{i}-0.parquet", bucket=i % 3) for i in range(2_000)]
    entries.append(_entry(FileKind.DELETE, "data-gone-0.parquet"))
    extra = _entry(FileKind.ADD, "data-extra-0.parquet")
    entries.append(type(extra)(extra.kind, extra.partition, extra.bucket, extra.total_buckets,
                               _file("data-extra-0.parquet", extra_files=["data-extra-0.parquet.index"])))
    write_manifest(fio, path, entries)
    expected = {e.file.file_name for e in read_manifest(fio, path)} | {"data-extra-0.parquet.index"}
    assert manifest_file_names(fio, path) == expected
    assert len(expected) == 2_003


PYPAIMON_MANIFESTS = [p for d in (DYN, APP) for p in sorted(d.glob("manifest-*-0"))
                      if not p.name.startswith("manifest-list-")]


@pytest.mark.parametrize("manifest", PYPAIMON_MANIFESTS, ids=lambda p: p.name)
def test_names_of_pypaimon_manifests(manifest: Path) -> None:
    fio = LocalFileIO()
    expected = {n for e in read_manifest(fio, str(manifest)) for n in (e.file.file_name, *e.file.extra_files)}
    assert manifest_file_names(fio, str(manifest)) == expected


def test_missing_and_corrupt_manifests(tmp_path: Path) -> None:
    fio = LocalFileIO()
    with pytest.raises(MissingFileError, match="manifest-none"):
        manifest_file_names(fio, str(tmp_path / "manifest-none"))
    (tmp_path / "manifest-bad").write_bytes(b"garbage")
    with pytest.raises(CorruptMetadataError, match="manifest-bad"):
        manifest_file_names(fio, str(tmp_path / "manifest-bad"))
