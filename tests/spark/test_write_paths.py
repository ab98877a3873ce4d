"""The fast write path (``write_dataframe``: routed rows, ``mapInArrow`` tasks, commit on the driver) writes what
the engine's own ``Table.write`` writes, in sorted files of the right buckets; the JVM bucket expression is the
engine's bucket for random keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.format.bucket import bucket_of, hash_key_columns
from table_engine.spark import write_dataframe
from tests.budget import examples

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string(), nullable=False),
                    pa.field("v", pa.int64()), pa.field("seq", pa.int64()), pa.field("dt", pa.string(),
                                                                                       nullable=False)])
DDL = "id bigint, name string, v bigint, seq bigint, dt string"

CASES: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "deduplicate": (["id"], [], {"bucket": "4"}),
    "partitioned": (["id", "dt"], ["dt"], {"bucket": "3"}),
    "string_key": (["name"], [], {"bucket": "4"}),
    "partial_update": (["id"], [], {"bucket": "2", "merge-engine": "partial-update"}),
    "aggregation": (["id"], [], {"bucket": "2", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}),
    "first_row": (["id"], [], {"bucket": "2", "merge-engine": "first-row"}),
    "sequence_field": (["id"], [], {"bucket": "4", "sequence.field": "seq"}),
    "dynamic": (["id", "dt"], ["dt"], {"bucket": "-1", "dynamic-bucket.target-row-num": "200"}),
}


def _rows(start: int, n: int, seed: int) -> pa.Table:
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(start, start + n, dtype=np.int64))
    v = rng.integers(-50, 50, n)
    return pa.table({"id": ids, "name": [f"n{i:05d}" for i in ids.tolist()],
                     "v": pa.array([None if x % 7 == 0 else int(x) for x in v.tolist()], pa.int64()),
                     "seq": rng.integers(0, 1000, n), "dt": [f"d{i % 3}" for i in ids.tolist()]}, schema=SCHEMA)


def _content(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in table.read().to_pylist())


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_path_writes_what_the_engine_writes(spark, warehouse, case):
    pks, parts, options = CASES[case]
    catalog = Catalog(warehouse)
    spark_table = catalog.create_table(f"db.spark_{case}", SCHEMA, primary_keys=pks, partition_keys=parts,
                                       options=options)
    engine_table = catalog.create_table(f"db.engine_{case}", SCHEMA, primary_keys=pks, partition_keys=parts,
                                        options=options)
    # two commits: the second updates half of the first one's keys and adds new ones (keys unique per commit:
    # the order of rows within one Spark write is not defined)
    for i, batch in enumerate((_rows(0, 1500, 1), _rows(750, 1500, 2))):
        engine_table.write(batch)
        sid = write_dataframe(spark.createDataFrame(batch.to_pandas(), DDL).repartition(3), warehouse,
                              spark_table.identifier, parallelism=2)
        assert sid is not None and sid >= i + 1  # first-row: a COMPACT snapshot may follow each commit
    assert _content(spark_table) == _content(engine_table)
    _check_files(spark_table)


def _check_files(table: Any) -> None:
    """Every data file is sorted by key without duplicates, and (fixed buckets) each row hashes to its bucket."""
    keys = table.schema.trimmed_primary_keys()
    buckets = table.options.bucket()
    files = 0
    for split in table.plan():
        for f in split.files:
            data = pq.read_table(_find(table, f.file_name))
            files += 1
            rows = data.select(keys).to_pylist()
            as_tuples = [tuple(r.values()) for r in rows]
            assert as_tuples == sorted(as_tuples) and len(set(as_tuples)) == len(as_tuples), f.file_name
            if buckets > 0:
                bkeys = table.schema.bucket_keys()
                hashes = hash_key_columns([data[k] for k in bkeys], [table.schema.field(k).type for k in bkeys])
                assert set(bucket_of(hashes, buckets).tolist()) <= {split.bucket}, f.file_name
    assert files


def _find(table: Any, name: str) -> Path:
    found = list(Path(table.path).rglob(name))
    assert len(found) == 1
    return found[0]


_INT_TYPES = {"TINYINT": (pa.int8(), 8), "SMALLINT": (pa.int16(), 16), "INT": (pa.int32(), 32),
              "BIGINT": (pa.int64(), 64)}


@st.composite
def _key_tables(draw: st.DrawFn) -> tuple[pa.Table, int]:
    import datetime as dt

    names = draw(st.lists(st.sampled_from([*_INT_TYPES, "DATE", "BOOLEAN"]), min_size=1, max_size=4))
    n = draw(st.integers(1, 40))
    cols: dict[str, pa.Array] = {}
    for i, kind in enumerate(names):
        if kind in _INT_TYPES:
            arrow, bits = _INT_TYPES[kind]
            values = st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
            cols[f"k{i}"] = pa.array(draw(st.lists(values, min_size=n, max_size=n)), arrow)
        elif kind == "DATE":
            cols[f"k{i}"] = pa.array(draw(st.lists(st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)), min_size=n,
                                                   max_size=n)), pa.date32())
        else:
            cols[f"k{i}"] = pa.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), pa.bool_())
    return pa.table(cols), draw(st.sampled_from([1, 2, 3, 4, 8, 16, 100, 2**31 - 1]))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_key_tables())
def test_jvm_bucket_expression_is_the_engine_bucket_for_random_keys(spark, case):
    from table_engine.format.schema_file import new_schema
    from table_engine.spark.datasource.writer import bucket_expression
    from table_engine.types import fields_from_arrow_schema

    data, buckets = case
    fields, highest = fields_from_arrow_schema(pa.schema([f.with_nullable(False) for f in data.schema]))
    schema = new_schema(0, fields, [], data.column_names, {"bucket": str(buckets)}, None, highest)
    expr = bucket_expression(schema, buckets)
    assert expr is not None
    ours = spark.createDataFrame(data).select(expr.alias("b")).toArrow()["b"].to_pylist()
    hashes = hash_key_columns([data[k] for k in data.column_names], [f.type for f in fields])
    assert ours == bucket_of(hashes, buckets).tolist()
