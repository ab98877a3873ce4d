"""Write, commit and merge-on-read through the public API."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from table_engine import Catalog, DataError, SchemaMismatchError
from table_engine.errors import OptionError, SnapshotNotExistError, TableAlreadyExistError, TableNotExistError

SCHEMA = pa.schema([
    pa.field("id", pa.int64()),
    pa.field("name", pa.string()),
    pa.field("amount", pa.decimal128(10, 2)),
    pa.field("dt", pa.string()),
])


def rows(ids, names, dt="2024-01-01"):
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": names,
        "amount": pa.array([decimal.Decimal(i) / 4 for i in ids], pa.decimal128(10, 2)),
        "dt": [dt] * len(ids),
    }, schema=SCHEMA)


def as_dict(t: pa.Table, key="id"):
    return {r[key]: r for r in t.to_pylist()}


@pytest.mark.parametrize("bucket", ["1", "4", "-1"])
@pytest.mark.parametrize("partitioned", [False, True])
def test_upsert_and_delete(catalog: Catalog, bucket: str, partitioned: bool) -> None:
    pks = ["id", "dt"] if partitioned else ["id"]
    t = catalog.create_table("db.t", SCHEMA, primary_keys=pks, partition_keys=["dt"] if partitioned else [],
                             options={"bucket": bucket})
    assert t.write(rows(range(100), [f"n{i}" for i in range(100)])) == 1
    assert t.write(rows(range(50, 150), [f"m{i}" for i in range(50, 150)])) == 2
    assert t.write(rows([1, 2, 3, 149], ["x"] * 4), row_kinds=["-D"] * 4) == 3
    got = as_dict(t.read())
    assert len(got) == 146
    assert got[0]["name"] == "n0" and got[60]["name"] == "m60" and 1 not in got and 149 not in got
    # time travel
    assert len(t.read(snapshot_id=1)) == 100
    assert as_dict(t.read(snapshot_id=2))[60]["name"] == "m60"
    snaps = t.snapshots()
    assert [s.id for s in snaps] == [1, 2, 3]
    assert len(t.read(timestamp_millis=snaps[1].time_millis)) == 150


def test_duplicates_in_one_batch_fold_to_last(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write(rows([1, 2, 1, 1, 2], ["a", "b", "c", "d", "e"]))
    got = as_dict(t.read())
    assert {k: v["name"] for k, v in got.items()} == {1: "d", 2: "e"}
    # a delete followed by an insert in the same batch
    t.write(rows([1, 1], ["gone", "back"]), row_kinds=["-D", "+I"])
    assert as_dict(t.read())[1]["name"] == "back"


def test_rowkind_field(catalog: Catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("rk", pa.string())])
    t = catalog.create_table("db.rk", schema, primary_keys=["id"], options={"rowkind.field": "rk", "bucket": "1"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "rk": ["+I", "+I", "+I"]}, schema=schema))
    t.write(pa.table({"id": [2, 3], "v": ["B", None], "rk": ["+U", "-D"]}, schema=schema))
    assert sorted((r["id"], r["v"]) for r in t.read().to_pylist()) == [(1, "a"), (2, "B")]
    with pytest.raises(DataError, match="rowkind.field 'rk'.*'\\+X'"):
        t.write(pa.table({"id": [9], "v": ["z"], "rk": ["+X"]}, schema=schema))
    assert t.latest_snapshot_id() == 2


def test_ignore_delete(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "ignore-delete": "true"})
    t.write(rows([1, 2], ["a", "b"]))
    t.write(rows([1], ["a"]), row_kinds=["-D"])
    assert len(t.read()) == 2


def test_sequence_field(catalog: Catalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("ts", pa.int64())])
    t = catalog.create_table("db.seq", schema, primary_keys=["id"],
                             options={"bucket": "1", "sequence.field": "ts"})
    t.write(pa.table({"id": [1, 1], "v": ["new", "old"], "ts": [10, 5]}, schema=schema))
    t.write(pa.table({"id": [1], "v": ["older"], "ts": [1]}, schema=schema))
    assert t.read().to_pylist() == [{"id": 1, "v": "new", "ts": 10}]


def test_append_table(catalog: Catalog) -> None:
    t = catalog.create_table("db.app", SCHEMA, partition_keys=["dt"])
    t.write(rows([1, 2, 2], ["a", "b", "c"], dt="d1"))
    t.write(rows([3], ["d"], dt="d2"))
    got = t.read()
    assert sorted(got.column("id").to_pylist()) == [1, 2, 2, 3]
    assert len(t.read(filter=[("dt", "=", "d2")])) == 1
    with pytest.raises(DataError, match="only accepts \\+I"):
        t.write(rows([1], ["x"]), row_kinds=["-D"])


def test_overwrite_dynamic_and_static(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "2"})
    t.write(rows([1, 2], ["a", "b"], dt="d1"))
    t.write(rows([3, 4], ["c", "d"], dt="d2"))
    t.write(rows([5], ["e"], dt="d2"), overwrite=True)  # dynamic: only d2 replaced
    assert sorted(t.read().column("id").to_pylist()) == [1, 2, 5]
    assert t.latest_snapshot().commit_kind == "OVERWRITE"
    t.write(rows([9], ["z"], dt="d1"), partition={"dt": "d1"})
    assert sorted(t.read().column("id").to_pylist()) == [5, 9]
    u = catalog.create_table("db.u", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    u.write(rows([1, 2], ["a", "b"]))
    u.write(rows([7], ["g"]), overwrite=True)
    assert u.read().column("id").to_pylist() == [7]


def test_projection_and_filters(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "3"})
    t.write(rows(range(1000), [f"n{i}" for i in range(1000)]))
    got = t.read(columns=["name"], filter=[("id", ">=", 990)])
    assert got.column_names == ["name"]
    assert sorted(got.column("name").to_pylist()) == [f"n{i}" for i in range(990, 1000)]
    assert len(t.read(filter=[("id", "in", [1, 5, 2000])])) == 2
    assert len(t.read(filter=[("name", "=", "n7")])) == 1
    # key stats prune whole files: a point lookup plans fewer files than a full scan
    assert sum(len(s.files) for s in t.plan(filter=[("id", "=", 5000)])) == 0


def test_batches_stream(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    t.write(rows(range(10000), ["x"] * 10000))
    batches = list(t.to_batches(batch_size=1000))
    assert all(b.num_rows <= 1000 for b in batches)
    assert sum(b.num_rows for b in batches) == 10000


def test_tags(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(rows([1], ["a"]))
    t.create_tag("t1")
    t.write(rows([2], ["b"]))
    assert len(t.read(tag="t1")) == 1
    assert t.list_tags() == ["t1"]
    with pytest.raises(SnapshotNotExistError, match="tag 'nope'"):
        t.read(tag="nope")


def test_errors_leave_table_unchanged(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(rows([1], ["a"]))
    with pytest.raises(DataError, match="primary key column 'id'"):
        t.write(pa.table({"id": pa.array([None, 2], pa.int64()), "name": ["x", "y"],
                          "amount": pa.array([None, None], pa.decimal128(10, 2)), "dt": ["a", "b"]}))
    with pytest.raises(SchemaMismatchError, match="missing \\['dt'\\]"):
        t.write(pa.table({"id": [5], "name": ["x"], "amount": pa.array([None], pa.decimal128(10, 2))}))
    with pytest.raises(SchemaMismatchError, match="column 'id'"):
        t.write(pa.table({"id": ["not a number"], "name": ["x"], "amount": pa.array([None], pa.decimal128(10, 2)),
                          "dt": ["a"]}))
    assert t.latest_snapshot_id() == 1
    assert t.read().column("id").to_pylist() == [1]


def test_catalog(catalog: Catalog, warehouse: str) -> None:
    catalog.create_table("db.a", SCHEMA)
    catalog.create_table("db.b", SCHEMA, primary_keys=["id"])
    assert catalog.list_databases() == ["db"]
    assert catalog.list_tables("db") == ["a", "b"]
    with pytest.raises(TableAlreadyExistError):
        catalog.create_table("db.a", SCHEMA)
    with pytest.raises(TableNotExistError, match="'db.zz'"):
        catalog.get_table("db.zz")
    with pytest.raises(OptionError, match="bukcet"):
        catalog.create_table("db.c", SCHEMA, options={"bukcet": "2"})
    assert not catalog.table_exists("db.c")
    catalog.drop_table("db.a")
    assert catalog.list_tables("db") == ["b"]
    assert Catalog("file://" + warehouse).get_table("db.b").primary_keys == ["id"]


def test_types_round_trip(catalog: Catalog) -> None:
    schema = pa.schema([
        ("id", pa.int32()), ("b", pa.bool_()), ("i8", pa.int8()), ("i16", pa.int16()), ("f", pa.float32()),
        ("d", pa.float64()), ("dec", pa.decimal128(38, 6)), ("s", pa.string()), ("bin", pa.binary()),
        ("day", pa.date32()), ("t", pa.time32("ms")), ("ts", pa.timestamp("us")), ("ts3", pa.timestamp("ms")),
        ("tsz", pa.timestamp("us", tz="UTC")), ("arr", pa.list_(pa.int32())),
        ("m", pa.map_(pa.string(), pa.int64())), ("r", pa.struct([("x", pa.int32()), ("y", pa.string())])),
    ])
    data = pa.table({
        "id": pa.array([1, 2], pa.int32()), "b": [True, None], "i8": pa.array([1, -1], pa.int8()),
        "i16": pa.array([300, None], pa.int16()), "f": pa.array([1.5, 2.5], pa.float32()), "d": [0.1, None],
        "dec": pa.array([decimal.Decimal("12345678901234567890.123456"), None], pa.decimal128(38, 6)),
        "s": ["short", "a string longer than seven bytes"], "bin": [b"\x00\x01", None],
        "day": [datetime.date(2024, 2, 29), None], "t": pa.array([1000, None], pa.time32("ms")),
        "ts": [datetime.datetime(2024, 1, 1, 1, 2, 3, 456789), None],
        "ts3": pa.array([datetime.datetime(2024, 1, 1, 1, 2, 3, 456000), None], pa.timestamp("ms")),
        "tsz": pa.array([datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC), None], pa.timestamp("us", tz="UTC")),
        "arr": [[1, 2], None], "m": [[("k", 1)], None], "r": [{"x": 1, "y": "a"}, None],
    }, schema=schema)
    t = catalog.create_table("db.types", schema, primary_keys=["id"], options={"bucket": "2"})
    t.write(data)
    got = t.read().sort_by("id")
    assert got.to_pylist() == data.to_pylist()


def test_one_flush_numbers_each_buckets_rows_in_input_order(catalog: Catalog) -> None:
    """A flush of several buckets (sorted, merged and written bucket by bucket): each bucket's sequence numbers
    count its input rows in input order from where its counter stood, and the latest row of a key wins."""
    from table_engine.format.bucket import bucket_of, hash_key_columns
    from table_engine.store.reading.scan import live_entries

    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "4", "write-only": "true"})
    ids = [*range(40), *range(10)]  # keys 0-9 twice: the second row of each wins
    t.write(rows(ids, [f"a{i}" for i in range(40)] + [f"b{i}" for i in range(10)]))
    t.write(rows(list(range(40)), ["c"] * 40))
    assert {k: v["name"] for k, v in as_dict(t.read(snapshot_id=1)).items()} == \
        {i: f"b{i}" if i < 10 else f"a{i}" for i in range(40)}
    assert {v["name"] for v in as_dict(t.read()).values()} == {"c"}
    per_bucket = bucket_of(hash_key_columns([pa.array(ids, pa.int64())], [t.schema.field("id").type]), 4)
    first = {b: int((per_bucket == b).sum()) for b in set(per_bucket.tolist())}
    files: dict[int, list[tuple[int, int, int]]] = {}
    for e in live_entries(t.file_io, t.path, t.latest_snapshot()):
        files.setdefault(e.bucket, []).append((e.file.min_sequence_number, e.file.max_sequence_number,
                                               e.file.row_count))
    for b, count in first.items():
        keys = [i for i, pb in zip(ids, per_bucket.tolist()) if pb == b]  # the bucket's input rows, in order
        survivors = [n for n, k in enumerate(keys) if k not in keys[n + 1:]]  # the last row of each key
        (lo1, hi1, n1), (lo2, _, n2) = sorted(files[b])
        assert (lo1, hi1, n1) == (survivors[0], count - 1, len(survivors))
        assert lo2 == count and n2 == int((per_bucket[:40] == b).sum())
