"""table_engine.iceberg without a judge: type mapping and refusals, file names, idempotence, incremental writing,
full rewrite after a gap, expiry by the retention options, manifest compaction, and the engine's read of a table that
sets ``metadata.iceberg.storage`` (as tests/table_engine/test_features.py) with our metadata beside its data."""

from __future__ import annotations

import io
import json
import pathlib
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from table_engine.catalog import Catalog
from table_engine.errors import OptionError, UnsupportedError
from table_engine.iceberg import IcebergCommitter, StorageType, metadata_dir, write_iceberg_metadata
from table_engine.iceberg.commit import MAX_CATCH_UP
from table_engine.iceberg.types import STRUCTURED_TYPE_FIELD_ID_BASE, iceberg_type, name_mapping
from table_engine.table import Table
from table_engine.types import DataField, parse_type

S = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.int64()), ("v", pa.string())])
TL = StorageType.TABLE_LOCATION


def table(tmp_path: pathlib.Path, options: dict[str, str] | None = None, name: str = "db.t") -> Table:
    """A partitioned append table; ``options`` go into its schema file directly (tables written before the option was
    set; without ``metadata.iceberg.storage`` its commits write no metadata, and these tests write it by hand)."""
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table(name, schema=S, partition_keys=["dt"])
    if options:
        path = pathlib.Path(t.path) / "schema" / "schema-0"
        data = json.loads(path.read_text())
        data["options"].update(options)
        path.write_text(json.dumps(data, indent=2))
        t = catalog.get_table(name)
    return t


def commit(t: Table, ids: list[int], **kw: Any) -> int:
    t.write(pa.table({"dt": ["a" if i % 2 else "b" for i in ids], "id": ids, "v": [str(i) for i in ids]},
                     schema=S), **kw)
    sid = t.latest_snapshot_id() or 0
    write_iceberg_metadata(t, sid, TL)
    return sid


def metadata(t: Table) -> dict[str, Any]:
    n = int(pathlib.Path(t.path, "metadata", "version-hint.text").read_text())
    return json.loads(pathlib.Path(t.path, "metadata", f"v{n}.metadata.json").read_text())


def avro_rows(path: str) -> list[dict[str, Any]]:
    with open(path, "rb") as fo:
        return list(fastavro.reader(io.BytesIO(fo.read())))


@pytest.mark.parametrize(("text", "expected"), [
    ("INT", "int"), ("BIGINT NOT NULL", "long"), ("VARCHAR(3)", "string"), ("BYTES", "binary"), ("DATE", "date"),
    ("DECIMAL(10, 2)", "decimal(10, 2)"), ("TIMESTAMP(6)", "timestamp"),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", "timestamptz")])
def test_scalar_types_map_as_java_maps_them(text: str, expected: str) -> None:
    assert iceberg_type(parse_type(text), 5) == expected


@pytest.mark.parametrize("text", ["TINYINT", "SMALLINT", "TIME", "TIMESTAMP(3)", "TIMESTAMP(9)", "VARIANT"])
def test_types_java_refuses_are_refused(text: str) -> None:
    with pytest.raises(UnsupportedError):
        iceberg_type(parse_type(text), 5)


def test_nested_ids_follow_java_special_fields() -> None:
    t = iceberg_type(parse_type("MAP<STRING NOT NULL, ARRAY<INT NOT NULL>>"), 3)
    assert t["key-id"] == STRUCTURED_TYPE_FIELD_ID_BASE - 3 * 1024 - 1
    assert t["value-id"] == STRUCTURED_TYPE_FIELD_ID_BASE + 3 * 1024 + 1
    assert t["value"] == {"type": "list", "element-id": STRUCTURED_TYPE_FIELD_ID_BASE + 3 * 1024 + 2,
                          "element-required": True, "element": "int"}
    assert not t["value-required"]


def test_name_mapping_keeps_every_name_of_a_field_id(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path)
    renamed = [DataField(f.id, "w" if f.name == "v" else f.name, f.type) for f in t.schema.fields]
    from dataclasses import replace
    mapping = name_mapping([t.schema, replace(t.schema, id=1, fields=tuple(renamed))])
    assert {"field-id": 2, "names": ["v", "w"]} in mapping


def test_refusals(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UnsupportedError, match="deletion vectors"):
        IcebergCommitter(table(tmp_path, {"deletion-vectors.enabled": "true"}, "db.dv"), TL)
    with pytest.raises(UnsupportedError, match="snappy"):
        IcebergCommitter(table(tmp_path, {"metadata.iceberg.manifest-compression": "snappy"}, "db.s"), TL)
    with pytest.raises(OptionError):
        IcebergCommitter(table(tmp_path, {"metadata.iceberg.manifest-compression": "lz9"}, "db.l"), TL)
    t = table(tmp_path, name="db.h")
    with pytest.raises(UnsupportedError, match="disabled"):
        IcebergCommitter(t)
    with pytest.raises(UnsupportedError, match="hive-catalog"):
        IcebergCommitter(t, StorageType.HIVE_CATALOG)
    assert metadata_dir(t.path, StorageType.HADOOP_CATALOG) == f"{tmp_path}/wh/iceberg/db/h/metadata"


def test_file_names_incremental_writing_and_idempotence(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path)
    commit(t, [1, 2])
    first = metadata(t)
    commit(t, [3])
    names = sorted(p.name for p in pathlib.Path(t.path, "metadata").iterdir())
    assert names[-2:] == ["v2.metadata.json", "version-hint.text"] and "v1.metadata.json" not in names
    assert sum(n.startswith("snap-1-") for n in names) == 2 and sum("-m1.avro" in n for n in names) == 2
    second = metadata(t)
    assert second["table-uuid"] == first["table-uuid"]  # incremental: same table
    lists = [s["manifest-list"] for s in second["snapshots"]]
    assert [len(avro_rows(p)) for p in lists] == [1, 2]  # the base's manifest reused, one new
    before = sorted(pathlib.Path(t.path, "metadata").iterdir())
    assert write_iceberg_metadata(t, 2, TL).endswith("/v2.metadata.json")
    assert sorted(pathlib.Path(t.path, "metadata").iterdir()) == before


def test_overwrite_rewrites_the_manifest_with_deleted_entries(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path)
    commit(t, [1, 2])
    commit(t, [5], overwrite=True)
    m = metadata(t)
    assert [s["summary"]["operation"] for s in m["snapshots"]] == ["append", "overwrite"]
    manifests = [r["manifest_path"] for r in avro_rows(m["snapshots"][-1]["manifest-list"])]
    statuses = sorted(e["status"] for p in manifests for e in avro_rows(p))
    assert statuses == [0, 1, 2]  # partition a: old file DELETED, new ADDED; partition b (not overwritten) EXISTING


def test_a_short_gap_is_caught_up_snapshot_by_snapshot(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path)
    commit(t, [1])
    uuid = metadata(t)["table-uuid"]
    t.write(pa.table({"dt": ["a"], "id": [2], "v": ["x"]}, schema=S))  # snapshot 2: no Iceberg metadata (yet)
    commit(t, [3])
    m = metadata(t)
    assert m["table-uuid"] == uuid and [s["snapshot-id"] for s in m["snapshots"]] == [1, 2, 3]
    files = sorted(p.name for p in pathlib.Path(t.path, "metadata").iterdir())
    assert [f for f in files if f.endswith(".json")] == ["v3.metadata.json"]


def test_a_long_gap_means_a_full_rewrite_that_drops_older_metadata(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path)
    commit(t, [1])
    uuid = metadata(t)["table-uuid"]
    for i in range(MAX_CATCH_UP):  # snapshots 2..11: no Iceberg metadata
        t.write(pa.table({"dt": ["a"], "id": [i], "v": ["x"]}, schema=S))
    sid = commit(t, [99])
    m = metadata(t)
    assert m["table-uuid"] != uuid and [s["snapshot-id"] for s in m["snapshots"]] == [sid]
    files = sorted(p.name for p in pathlib.Path(t.path, "metadata").iterdir())
    assert len(files) == 4 and "v1.metadata.json" not in files  # v<sid>, hint, one list, one manifest


def test_expiry_follows_the_snapshot_retention_options(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"})
    for i in range(4):
        commit(t, [i])
    m = metadata(t)
    assert [s["snapshot-id"] for s in m["snapshots"]] == [3, 4]
    listed = {pathlib.Path(s["manifest-list"]).name for s in m["snapshots"]}
    on_disk = {p.name for p in pathlib.Path(t.path, "metadata").glob("snap-*.avro")}
    assert on_disk == listed
    manifests = {pathlib.Path(r["manifest_path"]).name for s in m["snapshots"] for r in avro_rows(s["manifest-list"])}
    assert {p.name for p in pathlib.Path(t.path, "metadata").glob("*-m*.avro")} == manifests


def test_small_manifests_are_compacted(tmp_path: pathlib.Path) -> None:
    plain = table(tmp_path)
    for i in range(4):  # committed first: the capability gate refuses writes to a table with unknown options
        plain.write(pa.table({"dt": ["a"], "id": [i], "v": ["x"]}, schema=S))
    t = Catalog(str(tmp_path / "wh")).get_table("db.t")
    path = pathlib.Path(t.path) / "schema" / "schema-0"
    data = json.loads(path.read_text())
    data["options"].update({"metadata.iceberg.compaction.min.file-num": "2",
                            "metadata.iceberg.compaction.max.file-num": "3"})
    path.write_text(json.dumps(data, indent=2))
    t = Catalog(str(tmp_path / "wh")).get_table("db.t")
    counts = []
    for sid in range(1, 5):
        write_iceberg_metadata(t, sid, TL)
        counts.append(len(avro_rows(metadata(t)["snapshots"][-1]["manifest-list"])))
    assert counts == [1, 2, 1, 2]
    entries = [e for r in avro_rows(metadata(t)["snapshots"][-1]["manifest-list"])
               for e in avro_rows(r["manifest_path"])]
    # merged at snapshot 3: the entries of 1 and 2 became EXISTING, 3's stayed ADDED; 4's is ADDED in its own file
    assert sorted(e["status"] for e in entries) == [0, 0, 1, 1]


def test_the_engine_still_reads_the_table_with_the_option_and_our_metadata(tmp_path: pathlib.Path) -> None:
    t = table(tmp_path)
    commit(t, [1, 2])
    commit(t, [3])
    schema = pathlib.Path(t.path) / "schema" / "schema-0"
    data = json.loads(schema.read_text())
    data["options"]["metadata.iceberg.storage"] = "table-location"
    schema.write_text(json.dumps(data, indent=2))
    t = Catalog(str(tmp_path / "wh")).get_table("db.t")
    assert sorted(t.read().column("id").to_pylist()) == [1, 2, 3]
    assert t.read(snapshot_id=1).num_rows == 2
    assert [s.id for s in t.snapshots()] == [1, 2]
    assert str(IcebergCommitter(t).commit(2)).endswith("v2.metadata.json")  # the table's own option is honoured
    t.write(pa.table({"dt": ["a"], "id": [4], "v": ["d"]}, schema=S))  # the commit callback writes v3
    assert [s["snapshot-id"] for s in metadata(t)["snapshots"]] == [1, 2, 3]
