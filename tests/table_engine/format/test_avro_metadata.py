"""Avro metadata files: manifests, manifest lists, index manifests (schemas, pypaimon interop, round trips)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError
from table_engine.format.avro import datetime_to_millis, read_avro, write_avro
from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, FileSource, SimpleStats
from table_engine.format.index_manifest import (
    DELETION_VECTORS_INDEX,
    HASH_INDEX,
    INDEX_MANIFEST_ENTRY_SCHEMA,
    DeletionVectorMeta,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    combine_index_entries,
    merge_index_entries,
    read_index_manifest,
    write_index_manifest,
)
from table_engine.format.manifest import (
    MANIFEST_ENTRY_SCHEMA,
    FileKind,
    ManifestEntry,
    added_files,
    merge_entries,
    read_manifest,
    write_manifest,
)
from table_engine.format.manifest_list import (
    MANIFEST_FILE_META_SCHEMA,
    ManifestFileMeta,
    read_manifest_list,
    write_manifest_list,
)
from table_engine.io.file_io import LocalFileIO
from tests.budget import examples

FIXTURES = Path(__file__).parent / "fixtures" / "pypaimon"
DYN = FIXTURES / "dyn" / "manifest"
APP = FIXTURES / "app" / "manifest"
ALLTYPES = FIXTURES / "alltypes" / "manifest"

# Writer schemas of pypaimon 2.1.0 files, as fastavro reports them (json.dumps with compact separators).
PYPAIMON_MANIFEST_SCHEMA = (
    '{"type":"record","name":"ManifestEntry","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","'
    'type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BU'
    'CKETS","type":"int"},{"name":"_FILE","type":{"type":"record","name":"DataFileMeta","fields":[{"name"'
    ':"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long'
    '"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type"'
    ':{"type":"record","name":"record_KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":'
    '"_MAX_VALUES","type":"bytes"},{"default":null,"name":"_NULL_COUNTS","type":["null",{"type":"array","'
    'items":["null","long"]}]}]}},{"name":"_VALUE_STATS","type":{"type":"record","name":"record_VALUE_STA'
    'TS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"default"'
    ':null,"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}]}]}},{"name":"_M'
    'IN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID'
    '","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items'
    '":"string"}},{"default":null,"name":"_CREATION_TIME","type":["null",{"logicalType":"timestamp-millis'
    '","type":"long"}]},{"default":null,"name":"_DELETE_ROW_COUNT","type":["null","long"]},{"default":nul'
    'l,"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"]},{"default":null,"name":"_FILE_SOURCE","type'
    '":["null","int"]},{"default":null,"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":'
    '"string"}]},{"default":null,"name":"_EXTERNAL_PATH","type":["null","string"]},{"default":null,"name"'
    ':"_FIRST_ROW_ID","type":["null","long"]},{"default":null,"name":"_WRITE_COLS","type":["null",{"type"'
    ':"array","items":"string"}]},{"default":null,"name":"_WRITE_COLS_SEQUENCES","type":["null",{"type":"'
    'array","items":"long"}]}]}}]}'
)

PYPAIMON_MANIFEST_LIST_SCHEMA = (
    '{"type":"record","name":"ManifestFileMeta","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE'
    '_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"'
    '},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":{"type":"record","na'
    'me":"record_PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","'
    'type":"bytes"},{"default":null,"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null",'
    '"long"]}]}]}},{"name":"_SCHEMA_ID","type":"long"},{"default":null,"name":"_MIN_BUCKET","type":["null'
    '","int"]},{"default":null,"name":"_MAX_BUCKET","type":["null","int"]},{"default":null,"name":"_MIN_L'
    'EVEL","type":["null","int"]},{"default":null,"name":"_MAX_LEVEL","type":["null","int"]},{"default":n'
    'ull,"name":"_MIN_ROW_ID","type":["null","long"]},{"default":null,"name":"_MAX_ROW_ID","type":["null"'
    ',"long"]},{"default":null,"name":"_TOTAL_BUCKETS","type":["null","int"]},{"default":null,"name":"_EX'
    'TRA_FILES","type":["null",{"type":"array","items":"string"}]}]}'
)

PYPAIMON_INDEX_MANIFEST_SCHEMA = (
    '{"type":"record","name":"IndexManifestEntry","fields":[{"name":"_VERSION","type":"int"},{"name":"_KI'
    'ND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_IND'
    'EX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},'
    '{"name":"_ROW_COUNT","type":"long"},{"default":null,"name":"_DELETIONS_VECTORS_RANGES","type":["null'
    '",{"type":"array","items":{"type":"record","name":"DeletionVectorMeta","fields":[{"name":"f0","type"'
    ':"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},{"default":null,"name":"_CARDINALIT'
    'Y","type":["null","long"]}]}}]},{"default":null,"name":"_EXTERNAL_PATH","type":["null","string"]},{"'
    'default":null,"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"GlobalIndexMeta","field'
    's":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDE'
    'X_FIELD_ID","type":"int"},{"default":null,"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","'
    'items":"int"}]},{"default":null,"name":"_INDEX_META","type":["null","bytes"]},{"default":null,"name"'
    ':"_SOURCE_META","type":["null","bytes"]}]}]}]}'
)


def _records(path: Path) -> list[Any]:
    return list(fastavro.reader(io.BytesIO(path.read_bytes())))


def _writer_schema_json(data: bytes) -> str:
    return json.dumps(fastavro.reader(io.BytesIO(data)).writer_schema, separators=(",", ":"))


@pytest.fixture
def fio() -> LocalFileIO:
    return LocalFileIO()


KEY1 = b"\x00\x00\x00\x01" + b"\x00" * 8 + (1).to_bytes(8, "little")
KEY3 = b"\x00\x00\x00\x01" + b"\x00" * 8 + (3).to_bytes(8, "little")


def _file(name: str = "data-a-0.parquet", level: int = 0, **kw: object) -> DataFileMeta:
    args: dict[str, object] = {
        "file_name": name, "file_size": 100, "row_count": 3, "min_key": KEY1, "max_key": KEY3,
        "key_stats": SimpleStats(KEY1, KEY3, [0]), "value_stats": SimpleStats.EMPTY,
        "min_sequence_number": 0, "max_sequence_number": 2, "schema_id": 0, "level": level,
    }
    args.update(kw)
    return DataFileMeta(**args)  # type: ignore[arg-type]


def _entry(kind: FileKind, name: str = "data-a-0.parquet", bucket: int = 0, level: int = 0,
           partition: bytes = EMPTY_ROW) -> ManifestEntry:
    return ManifestEntry(kind, partition, bucket, 2, _file(name, level))


# ------------------------------------------------------------------------------------------------ writer schemas


@pytest.mark.parametrize(
    ("schema", "expected", "fixture"),
    [
        (MANIFEST_ENTRY_SCHEMA, PYPAIMON_MANIFEST_SCHEMA, DYN / "manifest-3a53bce2-350b-46ab-8580-e63b771c7ad3-0"),
        (MANIFEST_FILE_META_SCHEMA, PYPAIMON_MANIFEST_LIST_SCHEMA,
         DYN / "manifest-list-209f4d23-af6c-4171-8ff7-4f8cb5762f44-0"),
        (INDEX_MANIFEST_ENTRY_SCHEMA, PYPAIMON_INDEX_MANIFEST_SCHEMA,
         DYN / "index-manifest-0aaeb2aa-b920-4483-8868-e769c209fe0a"),
    ],
    ids=["manifest", "manifest-list", "index-manifest"],
)
def test_writer_schema_equals_pypaimon(schema: dict[str, object], expected: str, fixture: Path) -> None:
    ours = write_avro([], schema)
    assert _writer_schema_json(ours) == expected
    assert _writer_schema_json(fixture.read_bytes()) == expected  # the fixture really is what we think it is
    reader = fastavro.reader(io.BytesIO(ours))
    assert reader.metadata["avro.codec"] == "zstandard"
    assert set(reader.metadata) == {"avro.codec", "avro.schema"}


# ------------------------------------------------------------------------------------------------ pypaimon files


def test_read_pypaimon_manifest_pk_dynamic_bucket(fio: LocalFileIO) -> None:
    [e] = read_manifest(fio, str(DYN / "manifest-2f5f0890-7f6e-4d12-b195-c9df852c574a-0"))
    assert e.kind is FileKind.ADD
    assert (e.partition, e.bucket, e.total_buckets) == (EMPTY_ROW, 0, -1)
    f = e.file
    assert f.file_name == "data-e99834e8-097c-4d28-b235-57693037b27d-0.parquet"
    assert (f.file_size, f.row_count, f.min_sequence_number, f.max_sequence_number) == (1962, 3, 3, 5)
    assert f.min_key == b"\x00\x00\x00\x01" + b"\x00" * 8 + b"\x02" + b"\x00" * 7
    assert f.key_stats == SimpleStats(f.min_key, f.max_key, [0])
    assert f.value_stats is SimpleStats.EMPTY
    assert f.creation_time_millis == 1795314287483
    assert (f.level, f.extra_files, f.delete_row_count, f.file_source, f.value_stats_cols) == (0, [], 0, 0, [])
    assert f.file_source == FileSource.APPEND
    assert (f.embedded_file_index, f.external_path, f.first_row_id, f.write_cols) == (None, None, None, None)


def test_read_pypaimon_manifest_partitioned_full_stats(fio: LocalFileIO) -> None:
    entries = read_manifest(fio, str(APP / "manifest-ef63ee35-4f3c-4e47-a3e6-ce2377bbfb85-0"))
    assert [e.file.row_count for e in entries] == [2, 1]
    assert entries[0].partition.endswith(b"2024-01-01" + b"\x00" * 6)
    assert entries[0].file.value_stats_cols is None  # full stats mode: all columns
    assert entries[0].file.value_stats.null_counts == [0, 0, 0]
    assert entries[0].file.key_stats is SimpleStats.EMPTY


def test_pypaimon_manifest_rewritten_by_us_decodes_to_identical_records(fio: LocalFileIO, tmp_path: Path) -> None:
    src = ALLTYPES / "manifest-02606cf4-1780-40dc-8541-dac7d6317537-0"
    entries = read_manifest(fio, str(src))
    assert len(entries) == 4
    out = tmp_path / "manifest-x-0"
    size = write_manifest(fio, str(out), entries)
    assert size == out.stat().st_size
    assert _records(out) == _records(src)


def test_read_pypaimon_manifest_lists(fio: LocalFileIO) -> None:
    assert read_manifest_list(fio, str(DYN / "manifest-list-7ef52d2c-7d4d-42ea-829a-dc1ad9783e80-0")) == []
    [m] = read_manifest_list(fio, str(ALLTYPES / "manifest-list-f47181c2-ec4f-4719-bd64-2cb2c6c7c5be-1"))
    assert m == ManifestFileMeta(
        file_name="manifest-02606cf4-1780-40dc-8541-dac7d6317537-0", file_size=2459, num_added_files=4,
        num_deleted_files=0,
        partition_stats=SimpleStats(b"\x00\x00\x00\x01" + b"\x00" * 8 + b"p1\x00\x00\x00\x00\x00\x82",
                                    b"\x00\x00\x00\x01" + b"\x00" * 8 + b"p2\x00\x00\x00\x00\x00\x82", [0]),
        schema_id=0, min_bucket=0, max_bucket=1, min_level=0, max_level=0, total_buckets=2,
    )
    [d] = read_manifest_list(fio, str(DYN / "manifest-list-209f4d23-af6c-4171-8ff7-4f8cb5762f44-1"))
    assert d.total_buckets is None and d.partition_stats is SimpleStats.EMPTY


def test_pypaimon_manifest_list_rewritten_by_us_decodes_identically(fio: LocalFileIO, tmp_path: Path) -> None:
    for src in (APP / "manifest-list-1a343e9e-5c1b-4a77-90a0-a286a56ecc87-1",
                DYN / "manifest-list-7ef52d2c-7d4d-42ea-829a-dc1ad9783e80-0"):
        out = tmp_path / src.name
        write_manifest_list(fio, str(out), read_manifest_list(fio, str(src)))
        assert _records(out) == _records(src)


def test_read_pypaimon_index_manifest(fio: LocalFileIO, tmp_path: Path) -> None:
    src = DYN / "index-manifest-b05090e2-66d8-45b5-aee6-e09c40520f8c"
    [e] = read_index_manifest(fio, str(src))
    assert e == IndexManifestEntry(FileKind.ADD, EMPTY_ROW, 0, IndexFileMeta(
        HASH_INDEX, "index-1421b01a-45c1-4a31-992c-e36ae8d3350b-0", 16, 4))
    out = tmp_path / "index-manifest-x"
    write_index_manifest(fio, str(out), [e])
    assert _records(out) == _records(src)


# ------------------------------------------------------------------------------------------------ round trips

_bytes = st.binary(max_size=40)
_long = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_nlong = st.integers(min_value=0, max_value=2**63 - 1)
_int = st.integers(min_value=-(2**31), max_value=2**31 - 1)
_name = st.text(min_size=1, max_size=20)
_stats = st.builds(SimpleStats, _bytes, _bytes, st.none() | st.lists(st.none() | _nlong, max_size=4))
_names = st.lists(_name, max_size=3)

_data_files = st.builds(
    DataFileMeta,
    file_name=_name, file_size=_nlong, row_count=_nlong, min_key=_bytes, max_key=_bytes,
    key_stats=_stats, value_stats=_stats, min_sequence_number=_long, max_sequence_number=_long,
    schema_id=_nlong, level=st.integers(0, 9), extra_files=_names,
    creation_time_millis=st.none() | st.integers(0, 4102444800000), delete_row_count=st.none() | _nlong,
    embedded_file_index=st.none() | _bytes, file_source=st.none() | st.sampled_from(list(FileSource)),
    value_stats_cols=st.none() | _names, external_path=st.none() | _name, first_row_id=st.none() | _nlong,
    write_cols=st.none() | _names, write_cols_sequences=st.none() | st.lists(_long, max_size=3),
)
_entries = st.builds(ManifestEntry, st.sampled_from(list(FileKind)), _bytes, _int, _int, _data_files)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_entries, max_size=5))
def test_manifest_round_trip(tmp_path_factory: pytest.TempPathFactory, entries: list[ManifestEntry]) -> None:
    path = str(tmp_path_factory.mktemp("m") / "manifest-1-0")
    fio = LocalFileIO()
    assert write_manifest(fio, path, entries) == len(fio.read_bytes(path))
    assert read_manifest(fio, path) == entries


_metas = st.builds(
    ManifestFileMeta, _name, _nlong, _nlong, _nlong, _stats, _nlong, st.none() | _int, st.none() | _int,
    st.none() | _int, st.none() | _int, st.none() | _long, st.none() | _long, st.none() | _int, st.none() | _names,
)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_metas, max_size=5))
def test_manifest_list_round_trip(tmp_path_factory: pytest.TempPathFactory, metas: list[ManifestFileMeta]) -> None:
    path = str(tmp_path_factory.mktemp("ml") / "manifest-list-1-0")
    fio = LocalFileIO()
    write_manifest_list(fio, path, metas)
    assert read_manifest_list(fio, path) == metas


_dv = st.builds(DeletionVectorMeta, _name, _int, _int, st.none() | _nlong)
_gi = st.builds(GlobalIndexMeta, _long, _long, _int, st.none() | st.lists(_int, max_size=3), st.none() | _bytes,
                st.none() | _bytes)
_index_files = st.builds(IndexFileMeta, st.sampled_from([HASH_INDEX, DELETION_VECTORS_INDEX, "btree"]), _name,
                         _nlong, _nlong, st.none() | st.lists(_dv, max_size=3), st.none() | _name, st.none() | _gi)
_index_entries = st.builds(IndexManifestEntry, st.sampled_from(list(FileKind)), _bytes, _int, _index_files)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_index_entries, max_size=5))
def test_index_manifest_round_trip(tmp_path_factory: pytest.TempPathFactory, entries: list[IndexManifestEntry]) -> None:
    path = str(tmp_path_factory.mktemp("im") / "index-manifest-1")
    fio = LocalFileIO()
    write_index_manifest(fio, path, entries)
    assert read_index_manifest(fio, path) == entries


def test_deletion_vector_ranges_use_f0_f1_f2(fio: LocalFileIO, tmp_path: Path) -> None:
    dvs = [DeletionVectorMeta("data-1.parquet", 1, 36, 4), DeletionVectorMeta("data-2.parquet", 41, 32, None)]
    e = IndexManifestEntry(FileKind.ADD, EMPTY_ROW, 0, IndexFileMeta(DELETION_VECTORS_INDEX, "index-x-1", 80, 2, dvs))
    path = tmp_path / "index-manifest-dv"
    write_index_manifest(fio, str(path), [e])
    [rec] = _records(path)
    assert rec["_VERSION"] == 1
    assert rec["_DELETIONS_VECTORS_RANGES"] == [
        {"f0": "data-1.parquet", "f1": 1, "f2": 36, "_CARDINALITY": 4},
        {"f0": "data-2.parquet", "f1": 41, "f2": 32, "_CARDINALITY": None},
    ]
    assert read_index_manifest(fio, str(path)) == [e]


def test_versions_and_creation_time_encoding(fio: LocalFileIO, tmp_path: Path) -> None:
    path = tmp_path / "manifest-v"
    write_manifest(fio, str(path), [ManifestEntry(FileKind.DELETE, EMPTY_ROW, 3, 4,
                                                  _file(creation_time_millis=1795314287483))])
    [rec] = _records(path)
    assert (rec["_VERSION"], rec["_KIND"]) == (2, 1)
    assert rec["_FILE"]["_CREATION_TIME"] == datetime(2026, 11, 22, 2, 24, 47, 483000, tzinfo=UTC)
    write_manifest_list(fio, str(tmp_path / "ml"), [ManifestFileMeta("m", 1, 1, 0, SimpleStats.EMPTY, 0)])
    [rec] = _records(tmp_path / "ml")
    assert rec["_VERSION"] == 2


def test_datetime_to_millis() -> None:
    assert datetime_to_millis(None) is None
    assert datetime_to_millis(5) == 5
    assert datetime_to_millis(datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)) == 1500
    assert datetime_to_millis(datetime(1969, 12, 31, 23, 59, 59)) == -1000
    assert datetime_to_millis(datetime(2026, 11, 22, 2, 24, 47, 483000, tzinfo=UTC)) == 1795314287483


# ------------------------------------------------------------------------------------------------ corrupt input


@pytest.mark.parametrize("reader", [read_manifest, read_manifest_list, read_index_manifest])
@pytest.mark.parametrize("mangle", ["truncate", "garbage", "empty", "flip"])
def test_corrupt_files_raise_corrupt_metadata_naming_the_file(reader, mangle: str, fio: LocalFileIO,
                                                              tmp_path: Path) -> None:
    good = (ALLTYPES / "manifest-02606cf4-1780-40dc-8541-dac7d6317537-0").read_bytes()
    data = {
        "truncate": good[: len(good) - 40],
        "garbage": b"\x17not avro at all" * 10,
        "empty": b"",
        "flip": good[:-60] + bytes(b ^ 0xFF for b in good[-60:-20]) + good[-20:],
    }[mangle]
    path = tmp_path / "manifest-corrupt-0"
    path.write_bytes(data)
    with pytest.raises(CorruptMetadataError, match="manifest-corrupt-0"):
        reader(fio, str(path))


@pytest.mark.parametrize(
    ("reader", "other"),
    [(read_manifest, DYN / "manifest-list-209f4d23-af6c-4171-8ff7-4f8cb5762f44-1"),
     (read_manifest_list, DYN / "manifest-2f5f0890-7f6e-4d12-b195-c9df852c574a-0"),
     (read_index_manifest, DYN / "manifest-2f5f0890-7f6e-4d12-b195-c9df852c574a-0")],
)
def test_wrong_kind_of_avro_file_is_corrupt(reader, other: Path, fio: LocalFileIO) -> None:
    with pytest.raises(CorruptMetadataError, match=other.name):
        reader(fio, str(other))


def test_read_avro_names_file() -> None:
    with pytest.raises(CorruptMetadataError, match="/some/where/manifest-1"):
        read_avro(b"Obj\x01garbage", "/some/where/manifest-1")


def test_missing_manifest_is_file_not_found(fio: LocalFileIO, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_manifest(fio, str(tmp_path / "nope"))


# ------------------------------------------------------------------------------------------------ merging


def test_merge_entries_add_then_delete_cancel_and_order_is_stable() -> None:
    a, b, c = (_entry(FileKind.ADD, n) for n in ("a", "b", "c"))
    merged = merge_entries([a, b, c, _entry(FileKind.DELETE, "b")])
    assert merged == [a, c]


def test_merge_entries_keeps_unmatched_delete_for_later_merge() -> None:
    base = [_entry(FileKind.ADD, "a"), _entry(FileKind.ADD, "b")]
    delta = merge_entries([_entry(FileKind.DELETE, "a"), _entry(FileKind.ADD, "c")])
    assert [(e.kind, e.file.file_name) for e in delta] == [(FileKind.DELETE, "a"), (FileKind.ADD, "c")]
    assert [e.file.file_name for e in merge_entries(base + delta)] == ["b", "c"]
    assert [e.file.file_name for e in added_files(delta)] == ["c"]


def test_merge_identity_includes_bucket_level_and_partition() -> None:
    p2 = b"\x00\x00\x00\x01" + b"\x00" * 8 + b"p2\x00\x00\x00\x00\x00\x82"
    entries = [_entry(FileKind.ADD, "a", level=0), _entry(FileKind.DELETE, "a", level=1),
               _entry(FileKind.DELETE, "a", bucket=1), _entry(FileKind.DELETE, "a", partition=p2)]
    assert merge_entries(entries) == entries  # upgrading a file to another level is DELETE(l0) + ADD(l1)
    assert len({e.identifier() for e in entries}) == 4


def test_merge_entries_rejects_double_add() -> None:
    with pytest.raises(CorruptMetadataError, match="data-x"):
        merge_entries([_entry(FileKind.ADD, "data-x"), _entry(FileKind.ADD, "data-x")])


def test_merge_entries_many_is_fast() -> None:
    adds = [_entry(FileKind.ADD, f"f{i}") for i in range(20000)]
    deletes = [_entry(FileKind.DELETE, f"f{i}") for i in range(0, 20000, 2)]
    assert len(merge_entries(adds + deletes)) == 10000


def _ie(kind: FileKind, name: str, bucket: int = 0, index_type: str = HASH_INDEX) -> IndexManifestEntry:
    return IndexManifestEntry(kind, EMPTY_ROW, bucket, IndexFileMeta(index_type, name, 4, 1))


def test_merge_index_entries_log_semantics() -> None:
    a, b = _ie(FileKind.ADD, "a"), _ie(FileKind.ADD, "b")
    assert merge_index_entries([a, b, _ie(FileKind.DELETE, "a")]) == [b]
    assert merge_index_entries([_ie(FileKind.DELETE, "z"), b]) == [_ie(FileKind.DELETE, "z"), b]
    assert merge_index_entries([a, _ie(FileKind.ADD, "a", index_type=DELETION_VECTORS_INDEX)]) == [
        a, _ie(FileKind.ADD, "a", index_type=DELETION_VECTORS_INDEX)]


def test_combine_index_entries_replaces_hash_index_per_bucket_without_delete() -> None:
    prev = [_ie(FileKind.ADD, "h0", 0), _ie(FileKind.ADD, "h1", 1), _ie(FileKind.ADD, "dv", 0, DELETION_VECTORS_INDEX)]
    new = combine_index_entries(prev, [_ie(FileKind.ADD, "h0b", 0), _ie(FileKind.ADD, "h2", 2)])
    assert [e.index_file.file_name for e in new] == ["h0b", "h1", "dv", "h2"]
    assert all(e.kind is FileKind.ADD for e in new)


def test_combine_index_entries_deletes_and_unaware_dv() -> None:
    prev = [_ie(FileKind.ADD, "dv1", 0, DELETION_VECTORS_INDEX), _ie(FileKind.ADD, "dv2", 0, DELETION_VECTORS_INDEX)]
    changes = [_ie(FileKind.DELETE, "dv1", 0, DELETION_VECTORS_INDEX), _ie(FileKind.ADD, "dv3", 0,
                                                                         DELETION_VECTORS_INDEX)]
    assert [e.index_file.file_name for e in combine_index_entries(prev, changes, bucket_unaware=True)] == [
        "dv2", "dv3"]
    # bucketed DV tables keep one DV index file per bucket
    assert [e.index_file.file_name for e in combine_index_entries(prev[:1], changes)] == ["dv3"]
    with pytest.raises(CorruptMetadataError):
        combine_index_entries([_ie(FileKind.DELETE, "x")], [])


def test_unknown_entry_kind_is_corrupt(fio: LocalFileIO, tmp_path: Path) -> None:
    rec = _entry(FileKind.ADD).to_avro()
    rec["_KIND"] = -1
    path = tmp_path / "manifest-kind-0"
    path.write_bytes(write_avro([rec], MANIFEST_ENTRY_SCHEMA))
    with pytest.raises(CorruptMetadataError, match="manifest-kind-0"):
        read_manifest(fio, str(path))
