"""The bucket mode of a table, the dense partition ids of a writer and the fixed-bucket rule (``bucketing``)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.core_options import CoreOptions
from table_engine.errors import DataError
from table_engine.format.bucket import BucketMode, bucket_of, hash_key_columns
from table_engine.store.writing.bucketing import BucketSpec, Partitions, fixed_buckets

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    ("v", pa.string())])


@pytest.mark.parametrize(("pks", "options", "mode", "total"), [
    (["dt", "id"], {"bucket": "3"}, BucketMode.HASH_FIXED, 3),
    (["dt", "id"], {"bucket": "-1"}, BucketMode.HASH_DYNAMIC, -1),
    (["id"], {"bucket": "-1"}, BucketMode.KEY_DYNAMIC, -1),
    (["dt", "id"], {"bucket": "-2"}, BucketMode.POSTPONE_MODE, -2),
    ([], {"bucket": "-1"}, BucketMode.BUCKET_UNAWARE, -1),
    ([], {"bucket": "2", "bucket-key": "id"}, BucketMode.HASH_FIXED, 2),
])
def test_each_table_kind_gets_paimons_bucket_mode(catalog: Catalog, pks: list[str], options: dict[str, str],
                                                  mode: BucketMode, total: int) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, primary_keys=pks, partition_keys=["dt"], options=options)
    spec = BucketSpec.of(t.schema, t.options)
    assert (spec.mode, spec.total_buckets) == (mode, total)


def test_a_bucket_it_cannot_write_is_refused(catalog: Catalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, options={"bucket": "-1"})
    with pytest.raises(DataError, match="bucket-key"):
        BucketSpec.of(t.schema, CoreOptions({**t.options.raw, "bucket": "2"}))  # append: no key to hash
    with pytest.raises(DataError, match="bucket = -2 is invalid"):
        BucketSpec.of(t.schema, CoreOptions({**t.options.raw, "bucket": "-2"}))  # postpone needs a primary key


def test_partition_ids_are_dense_in_order_of_arrival_and_stable_across_batches(catalog: Catalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"])
    parts = Partitions(t.schema.partition_fields())
    first = pa.table({"dt": ["b", "a", "b", "c"]})
    assert parts.ids(first).tolist() == [0, 1, 0, 2]
    assert parts.ids(pa.table({"dt": ["c", "d", "a"]})).tolist() == [2, 3, 1]  # known ones keep their id
    assert parts.values == [("b",), ("a",), ("c",), ("d",)]
    assert parts.id_of(parts.binary[3]) == 3 and len(parts) == 4


def test_fixed_buckets_hash_the_bucket_key_as_the_format_does(catalog: Catalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "4"})
    ids = pa.table({"id": pa.array(range(100), pa.int64())})
    field = t.schema.field("id")
    expected = bucket_of(hash_key_columns([ids.column("id")], [field.type]), 4)
    assert fixed_buckets(ids, [field], 4).tolist() == expected.tolist()
