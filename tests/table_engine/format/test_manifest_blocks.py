"""Manifests written one partition per Avro block, and partition-filtered manifest reads."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any, cast

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.format.avro import read_avro, read_avro_blocks, write_avro, write_avro_groups
from table_engine.format.binary_row import encode_row
from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, SimpleStats
from table_engine.format.manifest import PARTITION_BLOCKS, FileKind, ManifestEntry, read_manifest, write_manifest
from table_engine.io.file_io import LocalFileIO
from table_engine.types import parse_type
from tests.budget import examples

FIXTURES = Path(__file__).parent / "fixtures" / "pypaimon"
INT = [parse_type("INT")]
SCHEMA: dict[str, Any] = {"type": "record", "name": "R", "fields": [{"name": "g", "type": "int"},
                                                                     {"name": "i", "type": "int"}]}


def _entry(part: int | None, name: str, kind: FileKind = FileKind.ADD, bucket: int = 0) -> ManifestEntry:
    f = DataFileMeta(name, 10, 1, EMPTY_ROW, EMPTY_ROW, SimpleStats.EMPTY, SimpleStats.EMPTY, 0, 0, 0, 0)
    return ManifestEntry(kind, encode_row([part], INT), bucket, 2, f)


def _blocks(data: bytes) -> list[list[dict[str, Any]]]:
    return [cast(list[dict[str, Any]], list(b)) for b in fastavro.block_reader(io.BytesIO(data))]


def test_groups_never_share_a_block_and_the_file_says_so() -> None:
    data = write_avro_groups([(b"a", [{"g": 1, "i": 0}, {"g": 1, "i": 1}]), (b"b", []), (b"c", [{"g": 2, "i": 2}])],
                             SCHEMA, "x.prop")
    assert [[r["g"] for r in b] for b in _blocks(data)] == [[1, 1], [2]]
    assert fastavro.reader(io.BytesIO(data)).metadata["x.prop"] == "true"
    # the blocks' keys in order (the empty group has no block): base64 of each key's zig-zag length and bytes
    assert fastavro.reader(io.BytesIO(data)).metadata["x.prop.keys"] == base64.b64encode(b"\x02a\x02c").decode()
    assert read_avro(data, "mem") == [{"g": 1, "i": 0}, {"g": 1, "i": 1}, {"g": 2, "i": 2}]


def test_skipped_blocks_are_not_decoded() -> None:
    groups = [[{"g": g, "i": i} for i in range(5)] for g in range(4)]
    keyed = [(bytes([g]), group) for g, group in enumerate(groups)]
    seen: list[bytes] = []

    def keep(block: bytes) -> bool:
        seen.append(block)
        return block[0] in (2, 6)  # the zig-zag varint of g = 1 and g = 3 starts the block

    data = write_avro_groups(keyed, SCHEMA, "x.prop")
    records = read_avro_blocks(data, "mem", "x.prop", keep)
    assert records == groups[1] + groups[3]
    assert len(seen) == 4  # one call per block
    assert read_avro_blocks(data, "mem", "x.prop", None) == [r for g in groups for r in g]
    assert read_avro_blocks(data, "mem", "x.prop", lambda b: False) == []


def test_blocks_whose_key_is_rejected_are_not_even_decompressed(monkeypatch: pytest.MonkeyPatch) -> None:
    from table_engine.format import avro

    groups = [(bytes([g]), [{"g": g, "i": i} for i in range(5)]) for g in range(4)]
    data = write_avro_groups(groups, SCHEMA, "x.prop")
    decompressed: list[bytes] = []
    real = avro.zstd.decompress
    monkeypatch.setattr(avro.zstd, "decompress", lambda raw: decompressed.append(raw) or real(raw))
    records = read_avro_blocks(data, "mem", "x.prop", lambda b: True, keep_key=lambda key: key == bytes([2]))
    assert records == groups[2][1] and len(decompressed) == 1


def test_files_without_the_property_are_not_read_by_blocks() -> None:
    records = [{"g": g, "i": g} for g in range(3)]
    assert read_avro_blocks(write_avro(records, SCHEMA), "mem", "x.prop", None) is None
    assert read_avro_blocks(write_avro_groups([(b"k", records)], SCHEMA, "y.prop"), "mem", "x.prop", None) is None


def test_manifest_blocks_hold_one_partition_and_keep_entry_order(tmp_path: Path) -> None:
    entries = [_entry(1, "a"), _entry(1, "b"), _entry(2, "c"), _entry(1, "d")]
    path = str(tmp_path / "manifest-x-0")
    write_manifest(LocalFileIO(), path, entries)
    blocks = _blocks((tmp_path / "manifest-x-0").read_bytes())
    assert [[r["_FILE"]["_FILE_NAME"] for r in b] for b in blocks] == [["a", "b"], ["c"], ["d"]]
    assert fastavro.reader(io.BytesIO((tmp_path / "manifest-x-0").read_bytes())).metadata[PARTITION_BLOCKS] == "true"
    assert read_manifest(LocalFileIO(), path) == entries


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 5)), st.sampled_from(list(FileKind))), max_size=40),
       st.sets(st.one_of(st.none(), st.integers(0, 5))))
def test_partition_filtered_read_equals_filtering_the_whole_read(
        tmp_path_factory: Any, spec: list[tuple[int | None, FileKind]], wanted: set[int | None]) -> None:
    entries = [_entry(p, f"f{i}", kind, bucket=i % 2) for i, (p, kind) in enumerate(spec)]
    path = str(tmp_path_factory.mktemp("m") / "manifest-y-0")
    write_manifest(LocalFileIO(), path, entries)
    parts = {encode_row([p], INT) for p in wanted}
    asked: list[bytes] = []

    def want(part: bytes) -> bool:
        asked.append(part)
        return part in parts

    assert read_manifest(LocalFileIO(), path, want) == [e for e in entries if e.partition in parts]
    assert len(asked) == len(set(asked))  # decided once per distinct partition


def test_partition_filter_on_pypaimon_manifests() -> None:
    """pypaimon's manifests carry no block property: decoded whole, their entries filtered."""
    for path in sorted(FIXTURES.glob("*/manifest/manifest-[0-9a-f]*")):
        every = read_manifest(LocalFileIO(), str(path))
        assert every
        first = every[0].partition
        assert read_manifest(LocalFileIO(), str(path), first.__eq__) == [e for e in every if e.partition == first]
        assert read_manifest(LocalFileIO(), str(path), lambda p: False) == []
