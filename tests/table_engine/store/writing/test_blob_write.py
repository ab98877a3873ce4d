"""BLOB writes (ADR 0018, amended): random BLOB values written in a few commits read back equal to the model, and
the ``.blob`` files of each data file tile its row range, rolled at ``blob.target-file-size`` as Paimon rolls them.
pypaimon judges the files in tests/interop/test_blob_write_interop.py."""

from __future__ import annotations

import tempfile

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.format.blob_file import blob_file_cuts, encode_blob_records
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("b", pa.binary()), ("c", pa.large_binary())])

values = st.one_of(st.none(), st.binary(max_size=50), st.integers(0, 3000).map(lambda n: b"v" * n))
commits = st.lists(st.lists(st.tuples(values, values), min_size=1, max_size=12), min_size=1, max_size=3)


@settings(max_examples=examples(15), deadline=None)
@given(commits=commits, target=st.sampled_from(["1 b", "2 kb", "64 kb"]))
def test_blob_writes_read_back_and_tile_their_ranges(commits: list[list[tuple[bytes | None, bytes | None]]],
                                                     target: str) -> None:
    with tempfile.TemporaryDirectory() as wh:
        catalog = Catalog(wh)
        catalog.create_table("db.t", SCHEMA, options={
            "row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-field": "b,c",
            "blob.target-file-size": target})
        model: list[dict[str, object]] = []
        for rows in commits:
            batch = [{"id": len(model) + i, "b": b, "c": c} for i, (b, c) in enumerate(rows)]
            catalog.get_table("db.t").write(pa.Table.from_pylist(batch, SCHEMA))
            model += batch
        t = catalog.get_table("db.t")
        assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == model
        files = catalog.get_table("db.t$files").read().to_pylist()
        normal = [f for f in files if not f["file_path"].endswith(".blob")]
        assert all(f["write_cols"] == ["id"] for f in normal)
        limit = {"1 b": 1, "2 kb": 2048, "64 kb": 65536}[target]
        for n in normal:
            start, count = n["first_row_id"], n["record_count"]
            for col in ("b", "c"):
                parts = sorted((f["first_row_id"], f["record_count"]) for f in files
                               if f["write_cols"] == [col] and start <= f["first_row_id"] < start + count)
                rows = [r[col] for r in model[start:start + count]]
                lengths = encode_blob_records(pa.array(rows, pa.large_binary()))[1]
                assert parts == [(start + a, b - a) for a, b in blob_file_cuts(lengths, limit)]
