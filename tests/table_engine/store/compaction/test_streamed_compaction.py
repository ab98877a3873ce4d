"""A bucket's full compaction by streaming, on real files: runs read in chunks of 2 rows, output rolled at a tiny
``target-file-size``; the output files hold exactly the merge-on-read rows, in key order across files."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.lsm.key_value import VALUE_KIND
from table_engine.lsm.sort import concat_tables
from table_engine.store.compaction.compact import BucketCompactor, CompactionSettings, plan_compaction

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                    pa.field("v", pa.int64())])


@pytest.mark.parametrize("engine", [{}, {"merge-engine": "partial-update"},
                                    {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}])
def test_streamed_full_compaction_writes_the_merged_rows(catalog: Catalog, engine: dict[str, str]) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={
        "bucket": "1", "write-only": "true", "target-file-size": "600 b", **engine})
    for c in range(4):
        ids = list(range(c * 7, c * 7 + 40, 3))
        t.write(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{c}-{i}" if i % 2 else None for i in ids],
                          "v": pa.array([c + i for i in ids], pa.int64())}, schema=SCHEMA),
                row_kinds=["-D" if (i + c) % 11 == 0 and not engine else "+I" for i in ids])
    want = sorted(t.read().to_pylist(), key=lambda r: r["id"])
    ctx = t._ctx
    [bucket] = plan_compaction(ctx)
    assert len(bucket.files) >= 4
    compactor = BucketCompactor(ctx, CompactionSettings.of(ctx), bucket.partition, bucket.bucket)
    compactor.chunk_rows = 2
    out = compactor.compact(compactor.levels(bucket.files), full=True)
    assert out is not None
    _, result = out
    assert len(result.after) > 1  # rolled as produced
    tables = [compactor._read_file(f) for f in result.after]
    got = concat_tables(tables)
    assert set(got.column(VALUE_KIND).to_pylist()) <= {0, 2}  # full compaction drops retractions
    ids = got.column("id").to_pylist()
    assert ids == sorted(set(ids))  # key order across the rolled files, one row per key
    assert got.select(["id", "name", "v"]).to_pylist() == want
