"""Detection of the capability gate's features in hand-made metadata: a schema's types and options, a snapshot's
fields, data files' fields and kinds, index-manifest entries. Every feature that the engine does not fully support
is detected by at least one minimal input."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from table_engine.errors import SchemaError, UnsupportedTableFeatureError
from table_engine.features import ALL, FEATURES, Op, feature, require
from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, SimpleStats
from table_engine.format.feature_detection import (
    data_file_features,
    index_features,
    schema_features,
    snapshot_features,
)
from table_engine.format.index_manifest import GlobalIndexMeta, IndexFileMeta, IndexManifestEntry
from table_engine.format.manifest import FileKind
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import CommitKind, Snapshot
from table_engine.types import DataType, parse_type

VECTOR = {"type": "VECTOR NOT NULL", "element": "FLOAT", "length": 3, "nullable": False}


def schema(types: list[Any] | None = None, options: dict[str, str] | None = None) -> TableSchema:
    fields = [{"id": 0, "name": "id", "type": "BIGINT"}]
    fields += [{"id": i + 1, "name": f"c{i}", "type": t} for i, t in enumerate(types or [])]
    return TableSchema.from_json(json.dumps({"version": 3, "id": 0, "fields": fields, "highestFieldId": len(fields),
                                             "partitionKeys": [], "primaryKeys": [], "options": options or {}}))


def snapshot(**fields: Any) -> Snapshot:
    base = {"version": 3, "id": 1, "schemaId": 0, "baseManifestList": "b", "deltaManifestList": "d",
            "commitUser": "u", "commitIdentifier": 1, "commitKind": "APPEND", "timeMillis": 1}
    return Snapshot.from_json(json.dumps({**base, **fields}), "snapshot-1")


def data_file(name: str = "data-1.parquet", **fields: Any) -> DataFileMeta:
    f = DataFileMeta(name, 10, 1, EMPTY_ROW, EMPTY_ROW, SimpleStats.EMPTY, SimpleStats.EMPTY, 0, 0, 0, 0)
    return replace(f, **fields)


def index_entry(index_type: str, global_index: GlobalIndexMeta | None = None) -> IndexManifestEntry:
    return IndexManifestEntry(FileKind.ADD, EMPTY_ROW, 0, IndexFileMeta(index_type, "index-1", 10, 1,
                                                                        global_index=global_index))


# one minimal input per feature the engine does not fully support: feature name -> what it detects there
# features that are detected although supported for every operation (row tracking, data evolution, BLOB,
# global indexes: issue 23)
DETECTED_SUPPORTED: dict[str, dict[str, str]] = {
    "row-tracking.enabled": schema_features(schema(options={"row-tracking.enabled": "true"})),
    "nextRowId": snapshot_features(snapshot(nextRowId=7)),
    "_FIRST_ROW_ID": data_file_features([data_file(first_row_id=0)]),
    "data-evolution.enabled": schema_features(schema(options={"data-evolution.enabled": "true"})),
    "_WRITE_COLS": data_file_features([data_file(write_cols=["v"])]),
    "global index": index_features([index_entry("btree", GlobalIndexMeta(0, 9, 0))]),
    "BLOB": schema_features(schema(["BLOB"])),  # written too since ADR 0018's amendment
    "scan.fallback-branch": schema_features(schema(options={"scan.fallback-branch": "b"})),  # issue 26
    "metadata.iceberg.storage": schema_features(schema(options={"metadata.iceberg.storage": "table-location"})),
}
DETECTED: dict[str, dict[str, str]] = {
    "pk-<type>.index.columns": schema_features(schema(options={"pk-btree.index.columns": "id"})),
    "metadata.iceberg.format-version": schema_features(schema(options={"metadata.iceberg.format-version": "3"})),
    "metadata.iceberg.manifest-compression = snappy": schema_features(schema(options={
        "metadata.iceberg.storage": "table-location", "metadata.iceberg.manifest-compression": "snappy"})),
    "metadata.iceberg.storage = hive-catalog / rest-catalog": schema_features(schema(options={
        "metadata.iceberg.storage": "hive-catalog"})),
    "Iceberg metadata with deletion vectors or data evolution": schema_features(schema(options={
        "metadata.iceberg.storage": "table-location", "deletion-vectors.enabled": "true"})),
    "type = object-table": schema_features(schema(options={"type": "object-table", "object-location": "/x"})),
    "type = format-table / lance-table / iceberg-table": schema_features(schema(options={"type": "lance-table"})),
    "bucket-function.type": schema_features(schema(options={"bucket-function.type": "mod"})),
    "bucketed incremental clustering": schema_features(schema(options={"clustering.incremental": "true",
                                                                       "bucket": "2"})),
    "blob options": schema_features(schema(["BLOB"], {"blob-as-descriptor": "true"})),
    "vector.file.format / vector-field": schema_features(schema([VECTOR], {"vector.file.format": "lance"})),
    "VARIANT shredding": schema_features(schema(["VARIANT"], {"variant.shreddingSchema": "{}"})),
    "file.format = lance / vortex / ...": schema_features(schema(options={"file.format": "lance"})),
    "chain-table.enabled": schema_features(schema(options={"chain-table.enabled": "true"})),
    "scan.primary-branch": schema_features(schema(options={"scan.primary-branch": "b"})),
    "data-file.thin-mode": schema_features(schema(options={"data-file.thin-mode": "true"})),
    "data-file.path-directory": schema_features(schema(options={"data-file.path-directory": "d"})),
    "index-file-in-data-file-dir": schema_features(schema(options={"index-file-in-data-file-dir": "true"})),
    "unknown data type": schema_features(schema([{"type": "ARRAY", "element": "GEOMETRY(4326)"}])),
    "unknown table option": schema_features(schema(options={"some-future.layout": "x"})),
    "unknown snapshot field": snapshot_features(snapshot(rowIdRanges=[1, 2])),
    "unknown data-file kind": data_file_features([data_file("data-1.lance")]),
    "unknown index kind": index_features([index_entry("FUTURE_INDEX")]),
}


def test_every_feature_not_fully_supported_is_detected_by_a_minimal_input() -> None:
    partial = {f.name for f in FEATURES if f.ops != ALL}
    assert set(DETECTED) == partial
    for name, found in (*DETECTED.items(), *DETECTED_SUPPORTED.items()):
        assert name in found, (name, found)
    assert all(feature(n).ops == ALL for n in DETECTED_SUPPORTED)


@pytest.mark.parametrize("options", [
    {},
    {"bucket": "4", "merge-engine": "deduplicate", "deletion-vectors.enabled": "true"},
    {"sink.parallelism": "4", "file.block-size": "1mb", "lookup.cache-rows": "10", "spark.x": "y", "owner": "me"},
    {"row-tracking.enabled": "false", "data-evolution.enabled": "false", "bucket-function.type": "default",
     "metadata.iceberg.storage": "disabled", "deletion-vectors.bitmap64": "true"},
    {"bucket": "-2", "postpone.default-bucket-num": "2", "data-file.external-paths": "file:///x",
     "file.format": "orc", "file.format.per.level": "0:avro"},
    {"global-index.enabled": "false", "global-index.column-update-action": "IGNORE", "btree-index.block-size": "1kb",
     "bitmap-index.compression": "zstd", "sorted-index.records-per-file": "10", "scalar-index.search-mode": "full"},
])
def test_known_and_supported_options_pass(options: dict[str, str]) -> None:
    found = schema_features(schema(options=options))
    assert all(feature(name).ops == ALL for name in found), found
    for op in Op:
        require("db.t", found, op)


def test_variant_shredding_turned_off_passes() -> None:
    assert schema_features(schema(["VARIANT"], {"variant.inferShreddingSchema": "false"})) == {}


def test_an_unknown_option_is_must_understand_and_named() -> None:
    found = schema_features(schema(options={"bucket": "2", "zz-layout": "1", "aa-new": "2"}))
    assert found == {"unknown table option": "option 'aa-new'"}


def test_a_schema_with_known_types_has_no_features() -> None:
    assert schema_features(schema(["INT", "STRING NOT NULL", {"type": "ARRAY", "element": "DECIMAL(10, 2)"},
                                   {"type": "MAP", "key": "STRING", "value": "TIMESTAMP(3)"}])) == {}


def test_nested_and_several_unknown_types() -> None:
    found = schema_features(schema([{"type": "ROW", "fields": [{"id": 5, "name": "b", "type": "BLOB"}]},
                                    "MULTISET<INT>", VECTOR]))
    assert found == {"BLOB": "type BLOB", "unknown data type": "type MULTISET"}


@pytest.mark.parametrize("options", [{"variant.shreddingSchema": "{}"}, {"parquet.variant.shreddingSchema": "{}"},
                                     {"variant.inferShreddingSchema": "true"},
                                     {"variant.shredding.maxSchemaWidth": "10"}])
def test_variant_shredding_is_refused_by_its_options(options: dict[str, str]) -> None:
    found = schema_features(schema(["VARIANT"], options))
    assert list(found) == ["VARIANT shredding"]
    for op in Op:
        with pytest.raises(UnsupportedTableFeatureError, match="uses VARIANT shredding"):
            require("db.t", found, op)


@pytest.mark.parametrize("value", ["GEOMETRY", "MULTISET<INT> NOT NULL",
                                   {"type": "ARRAY", "element": "GEOMETRY NOT NULL"}])
def test_unknown_types_are_carried_and_written_back_unchanged(value: Any) -> None:
    t = DataType.from_json(value)
    assert t.to_json() == value
    assert list(t.unknown_roots())
    parsed = schema([value])
    assert json.loads(parsed.to_json())["fields"][1]["type"] == value


def test_a_type_a_user_gives_must_still_be_known() -> None:
    with pytest.raises(SchemaError, match="unknown data type 'GEOMETRY'"):
        parse_type("GEOMETRY")


def test_snapshot_fields_of_paimon_2_0_are_known_and_harmless() -> None:
    snap = snapshot(properties={"k": "v"}, operation="WRITE", uuid="u-1", writerVersion="java-2.0.0",
                    logOffsets={}, watermark=3, statistics="s", changelogManifestList="c", indexManifest="i")
    assert snapshot_features(snap) == {}
    assert snap.commit_kind == CommitKind.APPEND


def test_data_files_of_supported_kinds_pass() -> None:
    files = [data_file("data-1.parquet"), data_file("data-2.orc"), data_file("changelog-3.avro"),
             data_file("data-4.parquet", external_path="s3://b/x/data-4.parquet")]
    assert data_file_features(files) == {}
    assert data_file_features([data_file("data-1.blob")]) == {"BLOB": "data file data-1.blob"}


def test_index_entries_of_known_kinds_pass() -> None:
    assert index_features([index_entry("HASH"), index_entry("DELETION_VECTORS")]) == {}
