"""Tables with VARIANT and VECTOR columns written, read, compacted and cleaned up by the engine (issue 23, ADR 0018).

Parquet and Avro data files (ORC and Avro refuse the types Paimon has no layout for), append and primary-key tables;
a hypothesis model over commits and compactions; bad values are one clear error; a VARIANT column stored shredded is
refused, never misread.
"""

from __future__ import annotations

import pathlib
import time
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import OptionError, SchemaError, SchemaMismatchError, UnsupportedTableFeatureError
from table_engine.schema_change import AddColumn
from table_engine.types import VARIANT_ARROW_TYPE
from tests.budget import examples
from tests.table_engine.test_cli_errors import state

SCHEMA = pa.schema([("id", pa.int64()), ("v", VARIANT_ARROW_TYPE), ("vec", pa.list_(pa.float32(), 3)),
                    ("bits", pa.list_(pa.bool_(), 2))])


def variant(i: int) -> dict[str, bytes]:
    """A small variant value (an int8 primitive and an empty dictionary as its metadata)."""
    return {"value": b"\x0c" + bytes([i % 128]), "metadata": b"\x01\x00\x00"}


def rows(ids: list[int]) -> pa.Table:
    return pa.table({
        "id": ids,
        "v": [None if i % 3 == 1 else variant(i) for i in ids],
        "vec": [None if i % 4 == 2 else [float(i), i / 2, -1.0] for i in ids],
        "bits": [None if i % 5 == 3 else [i % 2 == 0, None if i % 7 == 0 else True] for i in ids],
    }, schema=SCHEMA)


@pytest.mark.parametrize("fmt", ["parquet", "avro"])
@pytest.mark.parametrize("pk", [False, True])
def test_write_read_compact_expire_and_clean(catalog: Catalog, fmt: str, pk: bool) -> None:
    # Paimon writes VARIANT only to Parquet (its ORC and Avro writers have none)
    columns = SCHEMA.names if fmt == "parquet" else ["id", "vec", "bits"]
    t = catalog.create_table("db.t", pa.schema([SCHEMA.field(c) for c in columns]),
                             primary_keys=["id"] if pk else [], options={"file.format": fmt,
                                                                          "bucket": "2" if pk else "-1"})
    model: dict[int, dict[str, Any]] = {}
    for ids in ([0, 1, 2, 3], [4, 5, 6], [2, 7, 8, 9]):
        batch = rows(ids).select(columns)
        t.write(batch)
        for r in batch.to_pylist():
            if pk or r["id"] not in model:
                model[r["id"]] = r
    t = catalog.get_table("db.t")
    got = t.read()
    assert got.schema.field("vec").type == SCHEMA.field("vec").type
    expected = sorted(model.values(), key=lambda r: r["id"])
    if not pk:
        expected = sorted([*expected, rows([2]).select(columns).to_pylist()[0]], key=lambda r: r["id"])
    assert got.sort_by("id").to_pylist() == expected
    t.maintenance.compact(full=True)
    t = catalog.get_table("db.t")
    assert t.read().sort_by("id").to_pylist() == expected
    t.expire_snapshots(retain_max=1, retain_min=1)
    t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    t = catalog.get_table("db.t")
    assert t.read().sort_by("id").to_pylist() == expected


@pytest.mark.parametrize(("fmt", "column", "refused"), [("orc", "v", "VARIANT"), ("orc", "vec", "VECTOR"),
                                                       ("avro", "v", "VARIANT")])
def test_formats_without_a_layout_refuse_before_writing(catalog: Catalog, warehouse: str, fmt: str, column: str,
                                                        refused: str) -> None:
    t = catalog.create_table("db.t", pa.schema([SCHEMA.field("id"), SCHEMA.field(column)]),
                             options={"file.format": fmt})
    before = state(warehouse)
    with pytest.raises(OptionError, match=f"file.format = '{fmt}' cannot hold column '{column}' .*{refused} only to "
                                          "parquet"):
        t.write(rows([1]).select(["id", column]))
    assert state(warehouse) == before


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(st.one_of(st.lists(st.integers(0, 30), min_size=1, max_size=6), st.just("compact")),
                min_size=1, max_size=6))
def test_primary_key_table_matches_a_model(tmp_path_factory: pytest.TempPathFactory,
                                           steps: list[list[int] | str]) -> None:
    catalog = Catalog(str(tmp_path_factory.mktemp("wh")))
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    model: dict[int, dict[str, Any]] = {}
    for step in steps:
        if step == "compact":
            t.maintenance.compact(full=True)
            continue
        assert isinstance(step, list)
        batch = rows(sorted(set(step)))
        t.write(batch)
        model.update({r["id"]: r for r in batch.to_pylist()})
        t = catalog.get_table("db.t")
    assert t.read().sort_by("id").to_pylist() == [model[k] for k in sorted(model)]


def test_bad_values_are_one_clear_error_and_change_nothing(catalog: Catalog, warehouse: str) -> None:
    t = catalog.create_table("db.t", SCHEMA)
    t.write(rows([1]))
    before = state(warehouse)
    bad = [
        rows([2]).set_column(2, "vec", pa.array([[1.0, 2.0]], pa.list_(pa.float32(), 2))),
        rows([2]).set_column(2, "vec", pa.array([[1.0, 2.0]], pa.list_(pa.float32()))),
        rows([2]).set_column(1, "v", pa.array([{"value": None, "metadata": b"\x01"}],
                                              pa.struct([("value", pa.binary()), ("metadata", pa.binary())]))),
    ]
    for data in bad:
        with pytest.raises(SchemaMismatchError, match="column '(vec|v)': cannot write"):
            t.write(data)
        assert state(warehouse) == before
    with pytest.raises(SchemaError, match="VECTOR"):
        catalog.create_table("db.keys", SCHEMA, primary_keys=["vec"])


def test_a_shredded_variant_file_is_refused_not_misread(catalog: Catalog, warehouse: str) -> None:
    t = catalog.create_table("db.t", SCHEMA)
    t.write(rows([1, 2]))
    (data_file,) = pathlib.Path(warehouse).rglob("data-*.parquet")
    shredded = pa.struct([pa.field("metadata", pa.binary(), False), ("value", pa.binary()), ("typed_value", pa.int8())])
    plain = pq.read_table(data_file)
    v = pa.array([{"metadata": b"\x01\x00\x00", "value": None, "typed_value": 1}] * 2, shredded)
    pq.write_table(plain.set_column(1, "v", v), data_file)
    with pytest.raises(UnsupportedTableFeatureError, match="uses VARIANT shredding .*column 'v' stored as struct"):
        catalog.get_table("db.t").read()
    assert catalog.get_table("db.t").read(columns=["id", "vec"]).num_rows == 2


def test_null_variants_with_null_children_are_written(catalog: Catalog) -> None:
    """Spark (and other Arrow producers) leave the children of a null struct null: the engine stores the null row."""
    t = catalog.create_table("db.t", SCHEMA)
    loose = pa.struct([("value", pa.binary()), ("metadata", pa.binary())])
    v = pa.StructArray.from_arrays([pa.array([b"\x0c\x01", None]), pa.array([b"\x01\x00\x00", None])],
                                   fields=list(loose), mask=pa.array([False, True]))
    t.write(rows([1, 2]).set_column(1, "v", v))
    assert catalog.get_table("db.t").read().sort_by("id").column("v").to_pylist() == [
        {"value": b"\x0c\x01", "metadata": b"\x01\x00\x00"}, None]


def test_on_s3_write_read_compact_expire_and_clean(s3_catalog: Catalog) -> None:
    t = s3_catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(rows([0, 1, 2]))
    t.write(rows([2, 3]))
    expected = rows([0, 1, 2, 3]).to_pylist()
    t.maintenance.compact(full=True)
    t = s3_catalog.get_table("db.t")
    t.expire_snapshots(retain_max=1, retain_min=1)
    t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    assert s3_catalog.get_table("db.t").read().sort_by("id").to_pylist() == expected


@pytest.mark.parametrize("options", [
    {"changelog-producer": "lookup"}, {"changelog-producer": "input"}, {"merge-engine": "partial-update"},
    {"merge-engine": "aggregation"}, {"deletion-vectors.enabled": "true"},
])
def test_primary_key_table_kinds(catalog: Catalog, options: dict[str, str]) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", **options})
    t.write(rows([1, 2]))
    t.write(rows([2, 3]))
    t.maintenance.compact(full=True)
    assert catalog.get_table("db.t").read().sort_by("id").to_pylist() == rows([1, 2, 3]).to_pylist()


def test_added_vector_column_and_file_index_refusal(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.write(pa.table({"id": [1]}))
    t.alter(AddColumn("vec", pa.list_(pa.float32(), 3)))
    t = catalog.get_table("db.t")
    t.write(pa.table({"id": [2], "vec": pa.array([[1.0, 2.0, 3.0]], pa.list_(pa.float32(), 3))}))
    assert catalog.get_table("db.t").read().sort_by("id").to_pylist() == [
        {"id": 1, "vec": None}, {"id": 2, "vec": [1.0, 2.0, 3.0]}]
    with pytest.raises(OptionError, match="bloom-filter does not support type VECTOR<FLOAT, 3>"):
        catalog.create_table("db.idx", SCHEMA, options={"file-index.bloom-filter.columns": "vec"})
