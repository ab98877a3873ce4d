"""What a writing task does with the rows it gets before its writer sees them (``table_engine.spark.jobs.task_env``)."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.spark.jobs.task_env import write_chunks
from tests.budget import examples


def _piece(start: int, n: int, kinds: bool) -> tuple[pa.Table, pa.Array | None]:
    data = pa.table({"id": pa.array(range(start, start + n), pa.int64())})
    return data, pa.array(["-D" if i % 3 == 0 else "+I" for i in range(n)], pa.string()) if kinds else None


@settings(max_examples=examples(100), deadline=None)
@given(sizes=st.lists(st.integers(0, 30), max_size=12), with_kinds=st.lists(st.booleans(), min_size=12, max_size=12),
       rows=st.integers(1, 50))
def test_chunks_keep_every_row_and_kind_in_order_and_reach_the_size(sizes, with_kinds, rows):
    pieces, start = [], 0
    for n, k in zip(sizes, with_kinds):
        pieces.append(_piece(start, n, k))
        start += n
    chunks = list(write_chunks(iter(pieces), rows=rows, nbytes=1 << 30))
    ids = [v for data, _ in chunks for v in data.column("id").to_pylist()]
    assert ids == list(range(start))                                  # every row once, in order
    assert all(data.num_rows >= rows for data, _ in chunks[:-1])      # only the last chunk may be smaller
    expected_kinds = [kind for (data, k) in pieces
                      for kind in (k.to_pylist() if k is not None else ["+I"] * data.num_rows)]
    got_kinds = []
    for data, k in chunks:
        got_kinds += k.to_pylist() if k is not None else ["+I"] * data.num_rows
    assert got_kinds == expected_kinds                                # pieces without kinds stay inserts


def test_a_chunk_closes_at_the_byte_limit_before_the_row_limit():
    pieces = [_piece(i * 10, 10, False) for i in range(4)]
    chunks = list(write_chunks(iter(pieces), rows=1000, nbytes=pieces[0][0].nbytes * 2))
    assert [data.num_rows for data, _ in chunks] == [20, 20]
