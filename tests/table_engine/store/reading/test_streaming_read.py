"""``TableRead.to_batches`` streams (files read in chunks, overlapping files merged chunk by chunk) and returns the
rows of ``to_arrow``: random commits of upserts and deletes (write-only, so level-0 files pile up and overlap; with
a tiny ``target-file-size`` each sorted run spans several files), read with chunks of 1-3 rows, with and without a
filter and a projection."""

from __future__ import annotations

import tempfile
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from tests.budget import examples

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string()),
                    pa.field("v", pa.int64())])
ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
    "deletion-vectors": {"deletion-vectors.enabled": "true"},
    "append": {"bucket-key": "id"},
}
COMMIT = st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["+I", "-D"]),
                            st.one_of(st.none(), st.integers(-5, 5))), min_size=1, max_size=10)


def by_key(t: pa.Table, keys: list[str]) -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: tuple((r[k] is not None, r[k]) for k in keys))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine=st.sampled_from(sorted(ENGINES)), commits=st.lists(COMMIT, min_size=1, max_size=5),
       chunk=st.integers(1, 3), filtered=st.booleans(), roll=st.booleans())
def test_streamed_batches_equal_to_arrow(engine: str, commits: list[list[tuple[int, str, int | None]]],
                                         chunk: int, filtered: bool, roll: bool) -> None:
    with tempfile.TemporaryDirectory() as warehouse:
        catalog = Catalog(warehouse)
        append = engine == "append"
        opts = {"bucket": "1", **ENGINES[engine]}
        if not append:
            opts["write-only"] = "true"
        if roll:  # files of a few rows: each sorted run spans several files
            opts["target-file-size"] = "100 b"
        t = catalog.create_table("db.t", SCHEMA, primary_keys=[] if append else ["id"], options=opts)
        for c in commits:
            if append:
                c = [(k, "+I", v) for k, _, v in c]
            if engine in ("partial-update", "aggregation"):
                c = [(k, "+I", v) for k, _, v in c]  # retraction rules of these engines are tested elsewhere
            data = pa.table({"id": pa.array([k for k, _, _ in c], pa.int64()), "dt": ["d"] * len(c),
                             "v": pa.array([v for _, _, v in c], pa.int64())}, schema=SCHEMA)
            t.write(data, row_kinds=[kind for _, kind, _ in c])
        flt = [("v", ">=", 0)] if filtered else None
        cols = ["v", "id"] if filtered else None
        splits = t.plan(filter=flt)
        want = t.new_read(cols, flt).to_arrow(splits)
        reader = t.new_read(cols, flt)
        reader.chunk_rows = chunk
        batches = list(reader.to_batches(splits, batch_size=2))
        assert all(b.num_rows <= 2 for b in batches)
        got = pa.Table.from_batches(batches, schema=want.schema)
        keys = want.column_names if append else ["id"]
        assert by_key(got, keys) == by_key(want, keys)
        assert by_key(pa.Table.from_batches(list(t.to_batches(filter=flt, columns=cols)), schema=want.schema),
                      keys) == by_key(want, keys)
