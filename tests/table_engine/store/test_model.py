"""Property-based: any sequence of writes (inserts, updates, deletes; several commits, buckets and partitions)
reads back like a dict model, at every snapshot."""

from __future__ import annotations

import pathlib
import tempfile

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from tests.budget import examples

SCHEMA = pa.schema([("k", pa.int32()), ("p", pa.string()), ("v", pa.string())])

row = st.tuples(st.integers(0, 30), st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), st.text(max_size=12)),
                st.sampled_from(["+I", "+U", "-U", "-D"]))
batches = st.lists(st.lists(row, min_size=1, max_size=25), min_size=1, max_size=5)
layouts = st.sampled_from([("1", True), ("3", True), ("-1", True), ("2", False), ("-1", False)])


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=batches, layout=layouts, buffer=st.sampled_from(["256 mb", "1 kb"]))
def test_writes_match_dict_model(batches, layout, buffer) -> None:
    bucket, partitioned = layout
    with tempfile.TemporaryDirectory() as tmp:
        cat = Catalog(str(pathlib.Path(tmp) / "wh"))
        t = cat.create_table("db.t", SCHEMA, primary_keys=["k", "p"] if partitioned else ["k"],
                             partition_keys=["p"] if partitioned else [],
                             options={"bucket": bucket, "write-buffer-size": buffer})
        model: dict[tuple, tuple] = {}
        history = []
        for batch in batches:
            data = pa.table({"k": pa.array([r[0] for r in batch], pa.int32()), "p": [r[1] for r in batch],
                             "v": [r[2] for r in batch]}, schema=SCHEMA)
            sid = t.write(data, row_kinds=[r[3] for r in batch])
            for k, p, v, kind in batch:
                key = (k, p) if partitioned else (k,)
                if kind in ("+I", "+U"):
                    model[key] = (k, p, v)
                else:
                    model.pop(key, None)
            history.append((sid, dict(model)))
        for sid, expected in history:
            got = t.read(snapshot_id=sid)
            assert sorted(got.to_pylist(), key=lambda r: (r["k"], r["p"])) == [
                {"k": k, "p": p, "v": v} for k, p, v in sorted(expected.values(), key=lambda x: (x[0], x[1]))]
