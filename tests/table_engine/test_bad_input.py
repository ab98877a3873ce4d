"""Bad input at every public entry point: one ``TableEngineError`` whose message names the offending thing, and
the warehouse byte-for-byte unchanged (no file or directory added, removed or changed).

Each case is ``(id, call, error type, text the message must contain)``; ``call`` gets the catalog and a table
``db.t`` (primary key ``id``, partitioned by ``dt``, ``bucket`` = 2, two snapshots and a tag ``t1``), an append
table ``db.a`` and ``db.nn`` with a NOT NULL column ``v``. Partition specs whose values do not parse
(``{"dt": "notadate"}`` on a DATE column) belong to the typed partition-spec work and are not here.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import (
    BranchError,
    BranchNotExistError,
    CatalogError,
    CommandError,
    ConsumerError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    DataError,
    OptionError,
    ReadOnlyTableError,
    SchemaError,
    SchemaMismatchError,
    SnapshotNotExistError,
    TableAlreadyExistError,
    TableEngineError,
    TableNotExistError,
    TagAlreadyExistError,
    TagError,
    TagNotExistError,
    UnsupportedError,
)
from table_engine.predicate import PredicateError
from table_engine.schema_change import AddColumn, DropColumn, RemoveOption, RenameColumn, SetOption, UpdateColumnType
from table_engine.table import Table
from table_engine.types import from_arrow_type

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
APPEND_SCHEMA = pa.schema([("x", pa.int32()), ("s", pa.string())])
BLOB_SCHEMA = pa.schema([("id", pa.int64()), ("b", pa.binary())])


@dataclass(frozen=True)
class Tables:
    catalog: Catalog
    t: Table
    a: Table
    nn: Table


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[Tables], Any]
    error: type[TableEngineError]
    names: str
    """text the one-line message must contain (the option, column, value, name or file)"""


def create(name: str, schema: pa.Schema = SCHEMA, pk: tuple[str, ...] = ("id", "dt"),
           part: tuple[str, ...] = ("dt",), **options: str) -> Callable[[Tables], Any]:
    return lambda s: s.catalog.create_table(name, schema, primary_keys=list(pk), partition_keys=list(part),
                                            options=options)


def create_opts(options: dict[str, str], name: str = "db.new", pk: tuple[str, ...] = ("id", "dt"),
                part: tuple[str, ...] = ("dt",), schema: pa.Schema = SCHEMA) -> Callable[[Tables], Any]:
    return lambda s: s.catalog.create_table(name, schema, primary_keys=list(pk), partition_keys=list(part),
                                            options=options)


def blob_table(s: Tables) -> Table:
    return s.catalog.get_table("db.blob")


def write_t(data: dict[str, Any] | pa.Table, **kwargs: Any) -> Callable[[Tables], Any]:
    return lambda s: s.t.write(data if isinstance(data, pa.Table) else pa.table(data), **kwargs)


ROWS = {"id": [7], "v": ["x"], "dt": ["2026-01-01"]}

CASES = [
    # ---- options ----------------------------------------------------------------------------------------------
    Case("unknown option", create_opts({"buckett": "2"}), OptionError, "buckett"),
    Case("option value does not parse", create_opts({"bucket": "two"}), OptionError, "bucket"),
    Case("bucket 0", create_opts({"bucket": "0"}), OptionError, "bucket"),
    Case("snapshot.num-retained.min 0", create_opts({"snapshot.num-retained.min": "0"}), OptionError,
         "snapshot.num-retained.min"),
    Case("snapshot.num-retained.max below min", create_opts({"snapshot.num-retained.max": "3"}), OptionError,
         "snapshot.num-retained.max"),
    Case("changelog.num-retained.min 0", create_opts({"changelog.num-retained.min": "0"}), OptionError,
         "changelog.num-retained.min"),
    Case("alter: snapshot.num-retained.max below min",
         lambda s: s.a.alter(SetOption("snapshot.num-retained.max", "2")), OptionError, "snapshot.num-retained.max"),
    Case("bucket -3", create_opts({"bucket": "-3"}), OptionError, "bucket"),
    Case("bucket -2 (postpone) on an append table", create_opts({"bucket": "-2"}, pk=()), OptionError, "bucket"),
    Case("postpone.default-bucket-num 0", create_opts({"bucket": "-2", "postpone.default-bucket-num": "0"}),
         OptionError, "postpone.default-bucket-num"),
    Case("bucket-key with bucket -1", create_opts({"bucket-key": "id"}), OptionError, "bucket-key"),
    Case("bucket-key not a column", create_opts({"bucket": "2", "bucket-key": "nope"}, pk=("id",), part=()),
         SchemaError, "nope"),
    Case("bucket-key not in the primary key", create_opts({"bucket": "2", "bucket-key": "v"}), SchemaError, "v"),
    Case("bucket-key a partition column", create_opts({"bucket": "2", "bucket-key": "dt"}, pk=("id",)),
         SchemaError, "dt"),
    Case("fixed-bucket append table without bucket-key", create_opts({"bucket": "4"}, pk=(), part=()),
         OptionError, "bucket-key"),
    Case("unknown merge engine", create_opts({"merge-engine": "last-one"}), OptionError, "merge-engine"),
    Case("bad duration", create_opts({"snapshot.time-retained": "forever"}), OptionError,
         "snapshot.time-retained"),
    Case("bad memory size", create_opts({"target-file-size": "big"}), OptionError, "target-file-size"),
    Case("bad boolean", create_opts({"write-only": "maybe"}), OptionError, "write-only"),
    Case("unknown aggregate function", create_opts({"merge-engine": "aggregation",
                                                    "fields.v.aggregate-function": "median"}),
         SchemaError, "median"),
    Case("alter: bucket 0", lambda s: s.a.alter(SetOption("bucket", "0")), OptionError, "bucket"),
    Case("alter: bucket -2 on an append table", lambda s: s.a.alter(SetOption("bucket", "-2")), OptionError,
         "bucket"),
    Case("alter: bucket of a table with data", lambda s: s.t.alter(SetOption("bucket", "4")), SchemaError,
         "bucket"),
    Case("alter: bucket-key with bucket -1", lambda s: s.a.alter(SetOption("bucket-key", "x")), OptionError,
         "bucket-key"),
    Case("alter: unknown option", lambda s: s.t.alter(SetOption("snapshot.num-retained.minn", "3")), OptionError,
         "snapshot.num-retained.minn"),
    Case("alter: option value out of range", lambda s: s.t.alter(SetOption("snapshot.num-retained.min", "x")),
         OptionError, "snapshot.num-retained.min"),
    Case("alter: remove immutable option", lambda s: s.t.alter(RemoveOption("bucket")), SchemaError, "bucket"),
    Case("copy with an unknown option", lambda s: s.t.copy({"scan.modee": "latest"}), OptionError, "scan.modee"),
    Case("copy with a bad scan.snapshot-id", lambda s: s.t.copy({"scan.snapshot-id": "one"}).read(), OptionError,
         "scan.snapshot-id"),
    # ---- schemas ----------------------------------------------------------------------------------------------
    Case("primary key not a column", create("db.new", pk=("nope",), part=()), SchemaError, "nope"),
    Case("partition key not a column", create("db.new", pk=("id",), part=("nope",)), SchemaError, "nope"),
    Case("primary key only partition keys", create("db.new", pk=("dt",), part=("dt",)), SchemaError, "dt"),
    Case("duplicate columns", create("db.new", pa.schema([("id", pa.int64()), ("id", pa.string())]), pk=("id",),
                                     part=()), SchemaError, "id"),
    Case("list-typed primary key", create("db.new", pa.schema([("k", pa.list_(pa.int64())), ("v", pa.string())]),
                                          pk=("k",), part=()), SchemaError, "k"),
    Case("map-typed partition key", create("db.new", pa.schema([("k", pa.int64()),
                                                                ("p", pa.map_(pa.string(), pa.string()))]),
                                           pk=(), part=("p",)), SchemaError, "p"),
    Case("no columns", create("db.new", pa.schema([]), pk=(), part=()), SchemaError, "no columns"),
    Case("not an Arrow schema", create("db.new", {"id": "int"}, pk=(), part=()), SchemaError,  # type: ignore[arg-type]
         "dict"),
    Case("alter: drop a key column", lambda s: s.t.alter(DropColumn("id")), SchemaError, "id"),
    Case("alter: drop an unknown column", lambda s: s.t.alter(DropColumn("nope")), SchemaError, "nope"),
    Case("alter: rename onto an existing column", lambda s: s.t.alter(RenameColumn("v", "id")), SchemaError, "id"),
    Case("alter: add an existing column", lambda s: s.t.alter(AddColumn("v", pa.string())), SchemaError, "v"),
    Case("alter: add a NOT NULL column", lambda s: s.t.alter(AddColumn("n", from_arrow_type(pa.int64(), False))),
         SchemaError, "n"),
    Case("alter: narrowing a type", lambda s: s.a.alter(UpdateColumnType("x", pa.int8())), SchemaError, "x"),
    Case("alter: changing a key type", lambda s: s.t.alter(UpdateColumnType("id", pa.string())), SchemaError,
         "id"),
    # ---- names --------------------------------------------------------------------------------------------------
    Case("empty table name", create("db."), CatalogError, "'db.'"),
    *[Case(f"table name {name!r}", create(f"db.{name}"), CatalogError, repr(name))
      for name in (" t", "t ", "a/b", "a\\b", "t\n", "t\x00", "t\x7f")],
    Case("table name with $", create("db.t$x"), ReadOnlyTableError, "t$x"),
    Case("identifier with three parts", create("a.b.c"), CatalogError, "a.b.c"),
    *[Case(f"database name {name!r}", create(f"{name}.t"), CatalogError, repr(name))
      for name in (" db", "db ", "d/b", "d\\b", "d$b", "d\tb")],
    Case("create_database ''", lambda s: s.catalog.create_database(""), CatalogError, "''"),
    Case("create_database 'a.b'", lambda s: s.catalog.create_database("a.b"), CatalogError, "a.b"),
    Case("existing table", create("db.t"), TableAlreadyExistError, "db.t"),
    Case("missing table", lambda s: s.catalog.get_table("db.nope"), TableNotExistError, "db.nope"),
    Case("drop a missing table", lambda s: s.catalog.drop_table("db.nope"), TableNotExistError, "db.nope"),
    Case("unknown system table", lambda s: s.catalog.get_table("db.t$nope"), TableEngineError, "nope"),
    Case("write to a system table", lambda s: s.catalog.get_table("db.t$snapshots").rollback_to(1),
         ReadOnlyTableError, "db.t$snapshots"),
    # ---- partition specs ----------------------------------------------------------------------------------------
    Case("drop_partitions: unknown column", lambda s: s.t.maintenance.drop_partitions([{"nope": "1"}]), SchemaError,
         "nope"),
    Case("compact: unknown partition column", lambda s: s.t.maintenance.compact(partitions=[{"nope": "1"}]),
         SchemaError, "nope"),
    Case("compact: bucket out of range", lambda s: s.t.maintenance.compact(buckets="0-2"), CommandError, "buckets"),
    Case("compact: bucket range backwards", lambda s: s.t.maintenance.compact(buckets="1-0"), CommandError, "buckets"),
    Case("compact: buckets of a bucket-unaware table", lambda s: s.a.maintenance.compact(buckets="0"), CommandError,
         "fixed-bucket"),
    Case("overwrite: unknown static partition column", write_t(ROWS, overwrite=True, partition={"nope": "x"}),
         SchemaError, "nope"),
    # ---- snapshot ids and tags ----------------------------------------------------------------------------------
    Case("read a missing snapshot", lambda s: s.t.read(snapshot_id=99), SnapshotNotExistError, "99"),
    Case("read snapshot 0", lambda s: s.t.read(snapshot_id=0), SnapshotNotExistError, "0"),
    Case("read snapshot -1", lambda s: s.t.read(snapshot_id=-1), SnapshotNotExistError, "-1"),
    Case("read a missing tag", lambda s: s.t.read(tag="nope"), TagNotExistError, "nope"),
    Case("snapshot and tag", lambda s: s.t.read(snapshot_id=1, tag="t1"), TableEngineError, "snapshot_id"),
    Case("tag a missing snapshot", lambda s: s.t.create_tag("x", 99), SnapshotNotExistError, "99"),
    Case("blank tag name", lambda s: s.t.create_tag(" ", 1), TagError, "tag"),
    Case("tag name with /", lambda s: s.t.create_tag("a/b", 1), TagError, "a/b"),
    Case("existing tag", lambda s: s.t.create_tag("t1", 1), TagAlreadyExistError, "t1"),
    Case("delete a missing tag", lambda s: s.t.delete_tag("nope"), TagNotExistError, "nope"),
    Case("rename a missing tag", lambda s: s.t.rename_tag("nope", "x"), TagNotExistError, "nope"),
    Case("rollback to a missing snapshot", lambda s: s.t.rollback_to(99), SnapshotNotExistError, "99"),
    Case("rollback to a missing tag", lambda s: s.t.rollback_to("nope"), TagNotExistError, "nope"),
    Case("incremental-between a missing snapshot", lambda s: s.t.copy({"incremental-between": "1,99"}).read(),
         SnapshotNotExistError, "99"),
    Case("incremental-between does not parse", lambda s: s.t.copy({"incremental-between": "x"}).read(),
         OptionError, "incremental-between"),
    # ---- data ---------------------------------------------------------------------------------------------------
    Case("missing column", write_t({"id": [1], "dt": ["d"]}), SchemaMismatchError, "v"),
    Case("extra column", write_t({**ROWS, "extra": [1]}), SchemaMismatchError, "extra"),
    Case("wrong type", write_t({"id": ["seven"], "v": ["x"], "dt": ["d"]}), SchemaMismatchError, "id"),
    Case("null primary key", write_t(pa.table({"id": pa.array([None], pa.int64()), "v": ["x"], "dt": ["d"]})),
         DataError, "id"),
    Case("null primary key among others", write_t(pa.table({"id": pa.array([1, None, 3], pa.int64()),
                                                             "v": ["x", "y", "z"], "dt": ["d"] * 3})),
         DataError, "id"),
    Case("not a table", lambda s: s.t.write({"id": [1]}), SchemaMismatchError, "dict"),  # type: ignore[arg-type]
    Case("unknown row kind", write_t(ROWS, row_kinds=["+X"]), DataError, "+X"),
    Case("row kinds of the wrong length", write_t(ROWS, row_kinds=["+I", "+I"]), DataError, "row"),
    Case("append table: wrong type", lambda s: s.a.write(pa.table({"x": ["a"], "s": ["b"]})), SchemaMismatchError,
         "x"),
    Case("read an unknown column", lambda s: s.t.read(columns=["nope"]), SchemaError, "nope"),
    Case("filter on an unknown column", lambda s: s.t.read(filter=[("nope", "=", 1)]), PredicateError, "nope"),
    Case("filter with an unknown operator", lambda s: s.t.read(filter=[("id", "~", 1)]), PredicateError, "~"),
    Case("filter value of the wrong type", lambda s: s.t.read(filter=[("id", "=", "abc")]), PredicateError,
         "'id'"),
    Case("filter: in with the wrong types", lambda s: s.t.read(filter=[("id", "in", ["a", "b"])]),
         PredicateError, "'id'"),
    Case("filter value of the wrong type, append table", lambda s: s.a.read(filter=[("s", "<", 3)]),
         PredicateError, "'s'"),
    Case("null in a NOT NULL column", lambda s: s.nn.write(pa.table({"k": [1], "v": pa.array([None], pa.string())})),
         DataError, "'v'"),
    Case("delete rows into an append table", lambda s: s.a.write(pa.table({"x": pa.array([1], pa.int32()),
                                                                          "s": ["a"]}), row_kinds=["-D"]),
         DataError, "+I"),
    Case("tag retention negative", lambda s: s.t.create_tag("t9", 1, -5), TagError, "-5"),
    Case("expire: retain_min 0", lambda s: s.t.expire_snapshots(retain_min=0), OptionError,
         "snapshot.num-retained.min"),
    Case("expire: retain_max < retain_min", lambda s: s.t.expire_snapshots(retain_min=5, retain_max=2), OptionError,
         "snapshot.num-retained.max"),
    Case("expire: unknown setting", lambda s: s.t.expire_snapshots(retain_minimum=5), OptionError, "retain_minimum"),
    Case("drop_partitions: empty spec", lambda s: s.t.maintenance.drop_partitions([{}]), SchemaError,
         "names no partition column"),
    Case("expire_partitions: no expiration time", lambda s: s.t.maintenance.expire_partitions(), OptionError,
         "partition.expiration-time"),
    Case("expire_partitions: bad formatter", lambda s: s.t.maintenance.expire_partitions(expiration_time="1 d",
                                                                             timestamp_formatter="qqqq"),
         OptionError, "qqqq"),
    Case("expire_partitions: pattern names no partition column", lambda s: s.t.maintenance.expire_partitions(
        expiration_time="1 d", timestamp_pattern="$day"), OptionError, "$day"),
    Case("expire_partitions: unpartitioned table", lambda s: s.a.maintenance.expire_partitions(expiration_time="1 d"),
         SchemaError, "not partitioned"),
    Case("time travel before the first snapshot", lambda s: s.t.read(timestamp_millis=-5), SnapshotNotExistError,
         "-5"),
    Case("remove orphan files: older_than in the future", lambda s: s.t.maintenance.remove_orphan_files(
        older_than_millis=2**62), OptionError, "older_than"),
    Case("consumer id with /", lambda s: s.t.maintenance.reset_consumer("a/b", 1), ConsumerError, "a/b"),
    Case("drop a missing database", lambda s: s.catalog.drop_database("nope"), DatabaseNotExistError, "nope"),
    Case("drop a database with tables", lambda s: s.catalog.drop_database("db"), DatabaseNotEmptyError, "db"),
    Case("list tables of a missing database", lambda s: s.catalog.list_tables("nope"), DatabaseNotExistError,
         "nope"),
    Case("stream scan: bad option", lambda s: s.t.new_stream_scan(options={"scan.snapshot-id": "x"}), OptionError,
         "scan.snapshot-id"),
    Case("rename a tag onto an existing one", lambda s: s.t.rename_tag("t1", "t1"), TagAlreadyExistError, "t1"),
    Case("rename a tag to a bad name", lambda s: s.t.rename_tag("t1", "a/b"), TagError, "a/b"),
    # ---- BLOB columns (ADR 0018; bad BLOB values: tests/interop/test_blob_write_interop.py) ------------------------
    Case("blob-field: not a column", create_opts({"blob-field": "nope"}, pk=(), part=()), OptionError, "nope"),
    Case("blob-field: not binary", create_opts({"blob-field": "v"}, pk=(), part=()), OptionError, "'v'"),
    Case("BLOB column without data evolution", create_opts({"blob-field": "b"}, pk=(), part=(), schema=BLOB_SCHEMA),
         SchemaError, "data-evolution.enabled"),
    Case("BLOB column in a primary-key table", create_opts(
        {"blob-field": "b", "row-tracking.enabled": "true", "data-evolution.enabled": "true"}, pk=("id",), part=(),
        schema=BLOB_SCHEMA), OptionError, "row-tracking.enabled"),
    Case("blob-field set on a non-BLOB column", lambda s: s.a.alter(SetOption("blob-field", "s")), OptionError,
         "['s']"),
    Case("rename a BLOB column", lambda s: blob_table(s).alter(RenameColumn("b", "c")), SchemaError, "'b'"),
    Case("data evolution off on a BLOB table", lambda s: blob_table(s).alter(
        SetOption("data-evolution.enabled", "false")), TableEngineError, "data-evolution.enabled"),
    # ---- rescale ----------------------------------------------------------------------------------------------------
    Case("rescale: bucket_num 0", lambda s: s.t.maintenance.rescale(0), OptionError, "bucket_num"),
    Case("rescale: bucket_num other than a fixed-bucket table's", lambda s: s.t.maintenance.rescale(4), OptionError,
         "bucket_num"),
    Case("rescale: unknown partition", lambda s: s.t.maintenance.rescale(partitions=[{"dt": "2030-01-01"}]),
         SchemaError, "2030-01-01"),
    Case("rescale: dynamic-bucket table", lambda s: s.nn.maintenance.rescale(2), UnsupportedError, "bucket"),
    Case("rescale: bucket-unaware append table", lambda s: s.a.maintenance.rescale(2), UnsupportedError, "bucket"),
    # ---- branches ---------------------------------------------------------------------------------------------
    Case("branch named main", lambda s: s.t.create_branch("main"), BranchError, "'main'"),
    Case("numeric branch name", lambda s: s.t.create_branch("42"), BranchError, "'42'"),
    Case("branch name with a path separator", lambda s: s.t.create_branch("a/b"), BranchError, "'a/b'"),
    Case("branch from a missing tag", lambda s: s.t.create_branch("b", "nope"), TagNotExistError, "nope"),
    Case("delete a missing branch", lambda s: s.t.delete_branch("nope"), BranchNotExistError, "nope"),
    Case("fast-forward to a missing branch", lambda s: s.t.fast_forward("nope"), BranchNotExistError, "nope"),
    Case("fast-forward to main", lambda s: s.t.fast_forward("main"), BranchError, "main"),
    Case("scan.primary-branch", create_opts({"scan.primary-branch": "b"}), OptionError, "scan.primary-branch"),
    Case("scan.fallback-branch to a missing branch", lambda s: s.t.copy({"scan.fallback-branch": "nope"}).read(),
         TableNotExistError, "nope"),
    Case("a missing branch by identifier", lambda s: s.catalog.get_table("db.t$branch_nope"), TableNotExistError,
         "nope"),
]


def warehouse_state(root: str) -> dict[str, str]:
    """Every file (sha256) and directory (``dir``) under ``root``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.join(dirpath, d)] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[p] = hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()
    return out


@pytest.fixture
def tables(catalog: Catalog) -> Tables:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "2"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "dt": ["2026-01-01", "2026-01-02"]}))
    t.write(pa.table({"id": [1], "v": ["c"], "dt": ["2026-01-01"]}))
    t.create_tag("t1", 1)
    a = catalog.create_table("db.a", APPEND_SCHEMA)
    not_null = pa.schema([pa.field("k", pa.int64()), pa.field("v", pa.string(), nullable=False)])
    nn = catalog.create_table("db.nn", not_null, primary_keys=["k"])
    catalog.create_table("db.blob", BLOB_SCHEMA, options={
        "blob-field": "b", "row-tracking.enabled": "true", "data-evolution.enabled": "true"})
    return Tables(catalog, t, a, nn)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_clear_error_and_changes_nothing(tables: Tables, warehouse: str, case: Case) -> None:
    before = warehouse_state(warehouse)
    with pytest.raises(TableEngineError) as info:
        case.call(tables)
    message = str(info.value)
    assert isinstance(info.value, case.error), f"{type(info.value).__name__}: {message}"
    assert case.names in message, message
    assert "\n" not in message.strip(), message
    assert warehouse_state(warehouse) == before


def test_the_tables_still_work_after_all_the_bad_input(tables: Tables) -> None:
    for case in CASES:
        with pytest.raises(TableEngineError):
            case.call(tables)
    assert tables.t.read().sort_by("id").to_pydict() == {"id": [1, 2], "v": ["c", "b"],
                                                         "dt": ["2026-01-01", "2026-01-02"]}
    assert tables.t.latest_snapshot_id() == 2 and tables.t.list_tags() == ["t1"]
    assert tables.catalog.list_tables("db") == ["a", "blob", "nn", "t"]
