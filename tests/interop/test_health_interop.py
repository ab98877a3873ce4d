"""Table health of a table Paimon Java 1.0 wrote: its manifests read into Arrow give the files, rows and bytes the
engine's manifest decoder gives (``$buckets``); Java 1.0 writes no ``_CARDINALITY`` into the index manifest, so the
rows its deletion vectors delete are counted in the DV index files (metadata, no data file read)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX
from table_engine.store.indexes.deletion_vectors import VectorCache, deletion_files
from tests.interop.paimon_java import PaimonJavaClient

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    ("v", pa.string())])


def batch(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"dt": [f"d{i % 2}" for i in ids], "id": ids, "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def test_health_of_a_java_written_deletion_vector_table(paimon_java: PaimonJavaClient, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    commits = [(batch(list(range(40)), "a"), None), (batch(list(range(0, 40, 3)), "b"), None),
               (batch(list(range(1, 40, 5)), "c"), None)]
    paimon_java.run_checked([
        paimon_java.create_job(wh, "db.t", SCHEMA, ["dt", "id"], ["dt"],
                               {"bucket": "2", "deletion-vectors.enabled": "true"}),
        paimon_java.write_job(wh, "db.t", commits)])
    catalog = Catalog(str(wh))
    t = catalog.get_table("db.t")
    h = t.maintenance.health()
    buckets = catalog.get_table("db.t$buckets").read().to_pylist()
    assert [(f"dt={b['partition'][1:-1]}", b["bucket"], b["file_count"], b["record_count"], b["file_size_in_bytes"])
            for b in buckets] == [(b.partition, b.bucket, b.files, b.rows, b.bytes) for b in h.buckets]
    entries = t.store.index_entries(t.latest_snapshot())
    cardinalities = [r.cardinality for e in entries if e.index_file.index_type == DELETION_VECTORS_INDEX
                     for r in e.index_file.dv_ranges or ()]
    assert cardinalities and set(cardinalities) == {None}  # Java 1.0 writes none
    vectors = VectorCache(t.file_io)
    counted = sum(len(vectors.vector(df)) for files in deletion_files(t.path, entries).values()
                  for df in files.values())
    assert h.deleted_rows == counted > 0 and sum(b.dv_unknown for b in h.buckets) == len(cardinalities)
    assert h.deletion_vector_ratio == pytest.approx(h.deleted_rows / h.rows)
