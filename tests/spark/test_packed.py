"""Packing a write's rows by writer task (:mod:`table_engine.spark.packed`), without Spark: every row comes out
once, in the stream of its task; one task per fixed (partition, bucket); dynamic-bucket rows carry their route, the
key hash the writer and the cross-partition bootstrap expect."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.format.bucket import bucket_of, hash_key_columns
from table_engine.format.schema_file import new_schema
from table_engine.spark.packed import ROWS_COLUMN, TASK_COLUMN, Routing, _pack_task, row_tasks, unpack
from table_engine.spark.writer import ROUTE_COLUMN
from table_engine.store.writing.cross_partition import key_routes
from table_engine.types import fields_from_arrow_schema

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                    pa.field("dt", pa.string(), nullable=False)])

# (primary keys, partition keys, buckets)
LAYOUTS = {
    "fixed": (["id"], [], 4),
    "fixed_partitioned": (["id", "dt"], ["dt"], 3),
    "fixed_string_key": (["name"], [], 5),
    "dynamic": (["id", "dt"], ["dt"], 0),
    "cross_partition": (["id"], ["dt"], 0),
}


def routing(layout: str, tasks: int, pack_bytes: int) -> Routing:
    pks, parts, buckets = LAYOUTS[layout]
    fields, _ = fields_from_arrow_schema(SCHEMA)
    schema = new_schema(0, fields, parts, pks, {"bucket": str(buckets or -1)})
    keys: tuple[str, ...] = ()
    if not buckets:
        keys = tuple(schema.trimmed_primary_keys() if schema.cross_partition_update() else [*parts, *pks])
        keys = tuple(dict.fromkeys(keys))
    return Routing(schema, tasks, buckets, keys, pack_bytes)


def rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i % 1000}" for i in ids],
                     "dt": [f"d{i % 3}" for i in ids]}, schema=SCHEMA)


def as_tuples(table: pa.Table) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r[c] for c in SCHEMA.names) for r in table.to_pylist())


def packed_streams(r: Routing, table: pa.Table, batch_rows: int) -> list[tuple[int, pa.Table]]:
    """(task, rows) per emitted stream."""
    out = []
    for batch in _pack_task(r, iter(table.to_batches(max_chunksize=batch_rows))):
        assert batch.schema.names == [TASK_COLUMN, ROWS_COLUMN]
        for i in range(batch.num_rows):
            task = batch.column(0)[i].as_py()
            one = pa.RecordBatch.from_arrays([batch.column(0).slice(i, 1), batch.column(1).slice(i, 1)],
                                             names=[TASK_COLUMN, ROWS_COLUMN])
            out.append((task, pa.Table.from_batches(list(unpack(iter([one]))))))
    return out


@settings(max_examples=60, deadline=None)
@given(layout=st.sampled_from(sorted(LAYOUTS)), tasks=st.integers(1, 5),
       ids=st.lists(st.integers(-10**12, 10**12), max_size=300),
       batch_rows=st.integers(1, 64), pack_bytes=st.sampled_from([1, 500, 4096, 32 << 20]))
def test_every_row_reaches_exactly_its_task(layout, tasks, ids, batch_rows, pack_bytes):
    r = routing(layout, tasks, pack_bytes)
    table = rows(ids)
    streams = packed_streams(r, table, batch_rows)
    received = [t for _, t in streams]
    assert sum((as_tuples(t) for t in received), Counter()) == as_tuples(table)   # nothing lost, nothing twice
    owner: dict[tuple[Any, ...], int] = {}
    for task, t in streams:
        assert 0 <= task < tasks and t.num_rows
        assert row_tasks(r, t).tolist() == [task] * t.num_rows
        if r.buckets:
            assert ROUTE_COLUMN not in t.column_names
            # one task writes each (partition, bucket)
            keys = [r.schema.field(k) for k in r.schema.bucket_keys()]
            buckets = bucket_of(hash_key_columns([t.column(k.name) for k in keys], [k.type for k in keys]),
                                r.buckets)
            for part, bucket in zip(t.column("dt").to_pylist() if r.schema.partition_keys else [None] * t.num_rows,
                                    buckets.tolist()):
                assert owner.setdefault((part, bucket), task) == task
        else:
            assert pc.all(pc.equal(t.column(ROUTE_COLUMN), task)).as_py()
            if layout == "cross_partition":   # the route the cross-partition bootstrap keeps keys by
                fields = [r.schema.field(k) for k in r.schema.trimmed_primary_keys()]
                expected = key_routes(t.select([f.name for f in fields]), [f.type for f in fields], tasks)
                assert expected.tolist() == [task] * t.num_rows
    if pack_bytes >= 32 << 20:   # below the threshold: one stream per task with rows
        assert len(streams) == len({task for task, _ in streams})


def test_buckets_of_a_partition_go_round_robin_over_the_tasks():
    r = routing("fixed", 3, 32 << 20)
    table = rows(list(range(2000)))
    buckets = bucket_of(hash_key_columns([table.column("id")], [r.schema.field("id").type]), 4)
    assert sorted(set(zip(buckets.tolist(), row_tasks(r, table).tolist()))) == [(b, b % 3) for b in range(4)]


def test_no_input_packs_nothing():
    assert list(_pack_task(routing("dynamic", 2, 1 << 20), iter([]))) == []
