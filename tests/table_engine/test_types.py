"""The types of Paimon 1.1-2.0 that the engine reads and writes: VARIANT and VECTOR<t, n> (issue 23, ADR 0018).

Their spellings in schema files (Java's and pypaimon's), their Arrow mapping both ways, their checks, and the rules
that keep them out of statistics, keys and type changes.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from table_engine.errors import SchemaError
from table_engine.format.data_file import FULL_STATS, column_stats
from table_engine.types import (
    VARIANT_ARROW_TYPE,
    DataType,
    from_arrow_type,
    is_variant_arrow_type,
    is_widening,
    parse_type,
    to_arrow_type,
)

# JSON value in a schema file -> (SQL string, Arrow type)
SPELLINGS: list[tuple[Any, str, pa.DataType]] = [
    ("VARIANT", "VARIANT", VARIANT_ARROW_TYPE),
    ("VARIANT NOT NULL", "VARIANT NOT NULL", VARIANT_ARROW_TYPE),
    ({"type": "VECTOR", "element": "FLOAT", "length": 3}, "VECTOR<FLOAT, 3>", pa.list_(pa.float32(), 3)),
    ({"type": "VECTOR NOT NULL", "element": "BIGINT NOT NULL", "length": 2}, "VECTOR<BIGINT NOT NULL, 2> NOT NULL",
     pa.list_(pa.field("item", pa.int64(), nullable=False), 2)),
    ("BLOB", "BLOB", pa.large_binary()),
    ({"type": "ARRAY", "element": "BLOB NOT NULL"}, "ARRAY<BLOB NOT NULL>",
     pa.list_(pa.field("item", pa.large_binary(), nullable=False))),
    ({"type": "ARRAY", "element": {"type": "VECTOR", "element": "DOUBLE", "length": 4}},
     "ARRAY<VECTOR<DOUBLE, 4>>", pa.list_(pa.list_(pa.float64(), 4))),
]


@pytest.mark.parametrize(("json_value", "sql", "arrow"), SPELLINGS)
def test_spellings_round_trip(json_value: Any, sql: str, arrow: pa.DataType) -> None:
    t = DataType.from_json(json_value)
    assert t.is_known and not list(t.unknown_roots())
    assert t.to_json() == json_value
    assert t.sql() == sql
    assert parse_type(sql) == t
    assert to_arrow_type(t) == arrow
    if "BLOB" not in sql:  # an Arrow large_binary stays VARBINARY: a BLOB column only comes from a schema
        assert from_arrow_type(arrow, t.nullable) == t


def test_pypaimon_vector_json_with_its_nullable_key() -> None:
    t = DataType.from_json({"type": "VECTOR NOT NULL", "element": "FLOAT", "length": 3, "nullable": False})
    assert t == parse_type("VECTOR<FLOAT, 3> NOT NULL")
    assert t.to_json() == {"type": "VECTOR NOT NULL", "element": "FLOAT", "length": 3}


@pytest.mark.parametrize("text", ["VECTOR<STRING, 3>", "VECTOR<FLOAT, 0>", "VECTOR<ARRAY<INT>, 2>",
                                  "VECTOR<FLOAT, x>"])
def test_invalid_vectors_are_schema_errors(text: str) -> None:
    with pytest.raises(SchemaError, match="VECTOR"):
        parse_type(text)


def test_variant_arrow_type_is_recognised_only_as_the_pair() -> None:
    assert is_variant_arrow_type(VARIANT_ARROW_TYPE)
    assert is_variant_arrow_type(pa.struct([("metadata", pa.binary()), ("value", pa.binary())]))
    shredded = pa.struct([("metadata", pa.binary()), ("value", pa.binary()), ("typed_value", pa.int64())])
    assert not is_variant_arrow_type(shredded)
    assert from_arrow_type(shredded).root == "ROW"
    assert from_arrow_type(pa.struct([("value", pa.binary()), ("metadata", pa.string())])).root == "ROW"


def test_new_types_change_only_to_themselves() -> None:
    vec3, vec4 = parse_type("VECTOR<FLOAT, 3>"), parse_type("VECTOR<FLOAT, 4>")
    assert is_widening(vec3, parse_type("VECTOR<FLOAT, 3> NOT NULL"))
    assert not is_widening(vec3, vec4)
    assert not is_widening(vec3, parse_type("VECTOR<DOUBLE, 3>"))
    assert not is_widening(parse_type("VARIANT"), parse_type("STRING"))
    assert not is_widening(parse_type("STRING"), parse_type("VARIANT"))
    assert is_widening(parse_type("VARIANT"), parse_type("VARIANT"))


@pytest.mark.parametrize(("sql", "value"), [("VARIANT", {"value": b"\x0c\x01", "metadata": b"\x01\x00\x00"}),
                                            ("VECTOR<INT, 2>", [1, 2]), ("BLOB", b"\x00")])
def test_no_min_max_statistics(sql: str, value: Any) -> None:
    t = parse_type(sql)
    values = [value, None]
    assert t.is_complex
    assert column_stats(pa.array(values, to_arrow_type(t)), t, FULL_STATS) == (None, None, 1)
