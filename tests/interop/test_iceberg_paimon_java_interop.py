"""The Iceberg metadata of table_engine.iceberg against Paimon Java's own, for the same commits.

The judge jar (paimon-python-ali's, a Paimon 1.0-SNAPSHOT of 2024-09) still spells the switch Paimon 0.9's way,
``metadata.iceberg-compatible = true`` (= ``metadata.iceberg.storage = table-location``). Compared: the metadata
directory's file names, the metadata JSON (every key and value but uuids, times and paths), the Avro record and field
names of manifest lists and manifests, and their entries (but paths and sizes). The differences kept on purpose are
asserted as such (docs/iceberg.md): Iceberg field ids and a non-nullable top-level record in our Avro, a
``properties`` map with the name mapping (release-1.0.0 writes ``properties: {}`` too; this snapshot none), and the
``paimon-commit-identity`` snapshot summary key (Paimon's later releases write it).

Then the wiring (ADR 0046): a table the engine writes with the option on (the commit callback writes the metadata)
is read by Paimon Java, Java's commit callback builds on our metadata, and the engine's builds on Java's.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from table_engine.catalog import Catalog
from table_engine.iceberg import StorageType, write_iceberg_metadata
from tests.interop.paimon_java import PaimonJavaClient

pytestmark = pytest.mark.interop

S = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.int64()), ("v", pa.string())])
COMMITS = [pa.table({"dt": ["a", "b"], "id": [1, 2], "v": ["x", None]}, schema=S),
           pa.table({"dt": ["a"], "id": [3], "v": ["z"]}, schema=S)]
UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
PATTERNS = {"metadata": r"v\d+\.metadata\.json", "hint": r"version-hint\.text", "list": rf"snap-\d+-{UUID}\.avro",
            "manifest": rf"{UUID}-m\d+\.avro"}


def kinds(metadata_dir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {k: [] for k in PATTERNS}
    for p in sorted(metadata_dir.iterdir()):
        kind = next(k for k, rx in PATTERNS.items() if re.fullmatch(rx, p.name))
        out[kind].append(re.sub(UUID, "U", p.name))
    return out


def avro(path: Path) -> tuple[Any, list[dict[str, Any]]]:
    with open(path, "rb") as fo:
        reader = fastavro.reader(io.BytesIO(fo.read()))
        return reader.writer_schema, list(reader)


def shape(schema: Any) -> Any:
    """Record and field names of an Avro schema, without ids, unions with null, defaults or logical types."""
    if isinstance(schema, list):
        inner = [s for s in schema if s != "null"]
        return shape(inner[0]) if len(inner) == 1 else [shape(s) for s in inner]
    if isinstance(schema, dict):
        if schema.get("type") == "record":
            return {"record": schema["name"].split(".")[-1],
                    "fields": [(f["name"], shape(f["type"])) for f in schema["fields"]]}
        if schema.get("type") == "array":
            return {"array": shape(schema["items"])}
        return schema["type"]
    return schema


def normalized_json(path: Path) -> dict[str, Any]:
    d = json.loads(path.read_text())
    for k in ("table-uuid", "location", "last-updated-ms"):
        d.pop(k)
    for s in d["snapshots"]:
        s.pop("timestamp-ms")
        s["summary"].pop("paimon-commit-identity", None)  # kept: ours (and Paimon's later releases) name the commit
        s["manifest-list"] = re.sub(UUID, "U", Path(s["manifest-list"]).name)
    return d


def normalized_entries(rows: list[dict[str, Any]]) -> list[Any]:
    out = []
    for r in rows:
        r = json.loads(json.dumps(r, default=lambda b: b.hex()))
        r["data_file"].pop("file_path")
        r["data_file"].pop("file_size_in_bytes")
        out.append(r)
    return sorted(out, key=json.dumps)


def test_same_iceberg_metadata_as_paimon_java(paimon_java: PaimonJavaClient, tmp_path: Path) -> None:
    java_wh = tmp_path / "java"
    paimon_java.run_checked([
        PaimonJavaClient.create_job(java_wh, "db.t", S, [], ["dt"], {"metadata.iceberg-compatible": "true",
                                                                   "bucket": "-1"}),
        paimon_java.write_job(java_wh, "db.t", [(c, None) for c in COMMITS])])
    t = Catalog(str(tmp_path / "ours")).create_table("db.t", schema=S, partition_keys=["dt"])
    for c in COMMITS:
        t.write(c)
        write_iceberg_metadata(t, t.latest_snapshot_id() or 0, StorageType.TABLE_LOCATION)
    java_dir, our_dir = java_wh / "db.db" / "t" / "metadata", Path(t.path) / "metadata"

    assert kinds(our_dir) == kinds(java_dir)  # v2.metadata.json, version-hint.text, snap-1-U.avro x2, U-m1.avro x2
    assert (our_dir / "version-hint.text").read_text() == (java_dir / "version-hint.text").read_text() == "2"

    ours, java = normalized_json(our_dir / "v2.metadata.json"), normalized_json(java_dir / "v2.metadata.json")
    assert set(ours.pop("properties")) == {"schema.name-mapping.default"}  # kept: our Parquet has no field ids
    assert ours == java

    for kind in ("list", "manifest"):
        our_files = sorted(our_dir.glob("snap-*.avro" if kind == "list" else "*-m*.avro"),
                           key=lambda p: p.stat().st_mtime)
        java_files = sorted(java_dir.glob("snap-*.avro" if kind == "list" else "*-m*.avro"),
                            key=lambda p: p.stat().st_mtime)
        for o, j in zip(our_files, java_files, strict=True):
            (o_schema, o_rows), (j_schema, j_rows) = avro(o), avro(j)
            assert shape(o_schema) == shape(j_schema)
            assert isinstance(j_schema, list) and isinstance(o_schema, dict)  # kept: Iceberg's top-level record
            assert "field-id" in json.dumps(o_schema) and "field-id" not in json.dumps(j_schema)  # kept: ids
            if kind == "manifest":
                assert normalized_entries(o_rows) == normalized_entries(j_rows)
            else:
                for r in (*o_rows, *j_rows):
                    r["manifest_path"] = re.sub(UUID, "U", Path(r["manifest_path"]).name)
                    r.pop("manifest_length")
                assert o_rows == j_rows


def test_java_reads_and_commits_on_the_metadata_our_commits_write(paimon_java: PaimonJavaClient,
                                                                  tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    t = Catalog(str(wh)).create_table("db.t", schema=S, partition_keys=["dt"],
                                      options={"metadata.iceberg-compatible": "true"})
    for c in COMMITS:
        t.write(c)  # the commit callback writes v1, v2
    meta = Path(t.path) / "metadata"
    assert kinds(meta)["metadata"] == ["v2.metadata.json"]
    got = paimon_java.read(wh, "db.t", S).table
    assert sorted(got.to_pylist(), key=repr) == sorted(t.read().to_pylist(), key=repr)

    # Java's callback takes our v2 as its base (our Avro: Iceberg field ids, a non-null top-level record)
    paimon_java.run_checked([paimon_java.write_job(wh, "db.t", [(pa.table({"dt": ["b"], "id": [4], "v": ["j"]},
                                                                            schema=S), None)])])
    java_v3 = json.loads((meta / "v3.metadata.json").read_text())
    assert [s["snapshot-id"] for s in java_v3["snapshots"]] == [1, 2, 3]
    # and ours takes Java's v3 (no commit identity: trusted as this timeline) as its base
    t = t.refresh()
    t.write(pa.table({"dt": ["a"], "id": [5], "v": ["e"]}, schema=S))
    ours_v4 = json.loads((meta / "v4.metadata.json").read_text())
    assert [s["snapshot-id"] for s in ours_v4["snapshots"]] == [1, 2, 3, 4]
    assert ours_v4["table-uuid"] == java_v3["table-uuid"]  # incremental, not a full rewrite
    assert kinds(meta)["metadata"] == ["v4.metadata.json"]
    assert sorted(t.read().column("id").to_pylist()) == [1, 2, 3, 4, 5]
