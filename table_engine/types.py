"""Paimon data types and fields, their JSON form in schema files, and the mapping to and from Arrow.

Atomic types serialize as Paimon SQL strings (``"BIGINT NOT NULL"``, ``"DECIMAL(10, 2)"``); ARRAY, MAP and
ROW serialize as JSON objects (``{"type": "ARRAY", "element": ...}``), exactly as Paimon's
``DataTypeJsonParser`` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import SchemaError, UnsupportedError

MAX_LENGTH = 2147483647

#: Roots whose values are UTF-8 strings / raw bytes.
STRING_ROOTS = frozenset({"CHAR", "VARCHAR"})
BINARY_ROOTS = frozenset({"BINARY", "VARBINARY"})
INTEGER_ROOTS = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"})
ATOMIC_ROOTS = frozenset(
    {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "CHAR", "VARCHAR", "BINARY",
     "VARBINARY", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"}
)
COMPLEX_ROOTS = frozenset({"ARRAY", "MAP", "ROW"})
#: Roots of the types of Paimon 1.1+: VARIANT (a value/metadata pair), VECTOR<t, n> (a fixed-size list) and BLOB
#: (``large_binary``, values in ``.blob`` files). No min/max statistics, never a partition, key or bucket column.
VALUE_ONLY_ROOTS = frozenset({"VARIANT", "VECTOR", "BLOB"})
#: Element types a VECTOR may have (Paimon's ``VectorType.isValidElementType``).
VECTOR_ELEMENT_ROOTS = frozenset({"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"})
_ALIASES = {"INTEGER": "INT", "STRING": "VARCHAR", "BYTES": "VARBINARY", "BOOL": "BOOLEAN", "DEC": "DECIMAL",
            "NUMERIC": "DECIMAL"}


@dataclass(frozen=True)
class DataType:
    """One Paimon logical type.

    ``root`` is one of :data:`ATOMIC_ROOTS`, :data:`COMPLEX_ROOTS` or :data:`VALUE_ONLY_ROOTS`. ``length`` is set
    for CHAR/VARCHAR/BINARY/VARBINARY and VECTOR (its dimension), ``precision``/``scale`` for DECIMAL, ``precision``
    for TIME/TIMESTAMP/TIMESTAMP_LTZ, ``element`` for ARRAY and VECTOR.
    """

    root: str
    nullable: bool = True
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    element: DataType | None = None
    key: DataType | None = None
    value: DataType | None = None
    fields: tuple[DataField, ...] = ()
    unknown: Any = field(default=None, compare=False)
    """For a type root this engine does not know (BLOB, VARIANT, VECTOR, ...): its JSON value as the schema file
    holds it, written back unchanged. The engine carries such a type but cannot read or write its values; the
    capability gate (:mod:`table_engine.features`) refuses the table instead."""

    # ---- convenience -------------------------------------------------------------------------------------------
    def copy(self, nullable: bool) -> DataType:
        """This type with another nullability."""
        return replace(self, nullable=nullable)

    @property
    def is_string(self) -> bool:
        return self.root in STRING_ROOTS

    @property
    def is_binary(self) -> bool:
        return self.root in BINARY_ROOTS

    @property
    def is_complex(self) -> bool:
        """ARRAY, MAP, ROW, VARIANT, VECTOR, BLOB: no min/max statistics, never a partition, key or bucket column."""
        return self.root in COMPLEX_ROOTS or self.root in VALUE_ONLY_ROOTS

    # ---- SQL / JSON --------------------------------------------------------------------------------------------
    def sql(self) -> str:
        """The Paimon SQL string of this type (complex types included, for messages)."""
        suffix = "" if self.nullable else " NOT NULL"
        r = self.root
        if r == "VARCHAR" and self.length == MAX_LENGTH:
            base = "STRING"
        elif r == "VARBINARY" and self.length == MAX_LENGTH:
            base = "BYTES"
        elif r in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            base = f"{r}({self.length})"
        elif r == "DECIMAL":
            base = f"DECIMAL({self.precision}, {self.scale})"
        elif r in ("TIME", "TIMESTAMP"):
            base = f"{r}({self.precision})"
        elif r == "TIMESTAMP_LTZ":
            base = f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        elif r == "ARRAY":
            assert self.element is not None
            base = f"ARRAY<{self.element.sql()}>"
        elif r == "MAP":
            assert self.key is not None and self.value is not None
            base = f"MAP<{self.key.sql()}, {self.value.sql()}>"
        elif r == "VECTOR":
            assert self.element is not None
            base = f"VECTOR<{self.element.sql()}, {self.length}>"
        elif r == "ROW":
            base = "ROW<" + ", ".join(f"`{f.name}` {f.type.sql()}" for f in self.fields) + ">"
        else:
            base = r
        return base + suffix

    @property
    def is_known(self) -> bool:
        """Whether the engine knows this type root (:attr:`unknown` is None)."""
        return self.unknown is None

    def roots(self) -> Iterator[str]:
        """The roots of this type and of every type in it (elements, keys, values, fields)."""
        yield self.root
        for child in (self.element, self.key, self.value):
            if child is not None:
                yield from child.roots()
        for f in self.fields:
            yield from f.type.roots()

    def unknown_roots(self) -> Iterator[str]:
        """The roots of the unknown types in this type (itself, elements, keys, values, fields)."""
        if self.unknown is not None:
            yield self.root
        for child in (self.element, self.key, self.value):
            if child is not None:
                yield from child.unknown_roots()
        for f in self.fields:
            yield from f.type.unknown_roots()

    def to_json(self) -> Any:
        """The JSON value of this type in a schema file."""
        if self.unknown is not None:
            return self.unknown
        suffix = "" if self.nullable else " NOT NULL"
        if self.root == "ARRAY":
            assert self.element is not None
            return {"type": "ARRAY" + suffix, "element": self.element.to_json()}
        if self.root == "MAP":
            assert self.key is not None and self.value is not None
            return {"type": "MAP" + suffix, "key": self.key.to_json(), "value": self.value.to_json()}
        if self.root == "ROW":
            return {"type": "ROW" + suffix, "fields": [f.to_json() for f in self.fields]}
        if self.root == "VECTOR":
            assert self.element is not None
            return {"type": "VECTOR" + suffix, "element": self.element.to_json(), "length": self.length}
        return self.sql()

    @staticmethod
    def from_json(data: Any) -> DataType:
        """Parse the JSON value of a type (a SQL string or an object for ARRAY/MAP/ROW)."""
        if isinstance(data, str):
            return parse_type(data, keep_unknown=True)
        if isinstance(data, dict) and isinstance(data.get("type"), str):
            head = data["type"].strip().upper()
            nullable = not head.endswith("NOT NULL")
            if "nullable" in data and isinstance(data["nullable"], bool):
                nullable = data["nullable"]
            root = head.split()[0]
            if root.startswith("ARRAY"):
                return DataType("ARRAY", nullable, element=DataType.from_json(data["element"]))
            if root.startswith("MAP"):
                return DataType("MAP", nullable, key=DataType.from_json(data["key"]),
                                value=DataType.from_json(data["value"]))
            if root.startswith("ROW"):
                return DataType("ROW", nullable, fields=tuple(DataField.from_json(f) for f in data.get("fields", [])))
            if root == "VECTOR" and "element" in data and isinstance(data.get("length"), int):
                return _vector(DataType.from_json(data["element"]), data["length"], nullable)
            name = re.split(r"[^A-Z_]", root, maxsplit=1)[0]
            if name not in ATOMIC_ROOTS and name not in _ALIASES:
                return DataType(name or root, nullable, unknown=data)  # VECTOR, MULTISET, ... of newer writers
            return parse_type(data["type"])
        raise SchemaError(f"cannot parse data type from JSON value {data!r}")

    def __str__(self) -> str:
        return self.sql()


@dataclass(frozen=True)
class DataField:
    """A named, typed field with a stable id (ids survive renames; schema evolution reads old files by id)."""

    id: int
    name: str
    type: DataType
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> DataField:
        try:
            return DataField(int(data["id"]), str(data["name"]), DataType.from_json(data["type"]),
                             data.get("description"))
        except KeyError as e:
            raise SchemaError(f"field JSON {data!r} misses key {e}") from None


# ---- SQL type parser -------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z_0-9]*|\d+|[<>(),:])")


class _Parser:
    def __init__(self, text: str, keep_unknown: bool = False) -> None:
        self.text = text
        self.keep_unknown = keep_unknown
        self.tokens: list[str] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN.match(stripped, pos)
            if not m:
                raise SchemaError(f"cannot parse type {text!r} at position {pos}")
            self.tokens.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise SchemaError(f"unexpected end of type {self.text!r}")
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.take()
        if got != tok:
            raise SchemaError(f"expected {tok!r} but got {got!r} in type {self.text!r}")

    def int_args(self) -> list[int]:
        args: list[int] = []
        if self.peek() == "(":
            self.take()
            while True:
                args.append(int(self.take()))
                if self.peek() == ",":
                    self.take()
                    continue
                self.expect(")")
                break
        return args

    def nullability(self) -> bool:
        up = [t.upper() for t in self.tokens[self.i:self.i + 2]]
        if up[:2] == ["NOT", "NULL"]:
            self.i += 2
            return False
        if up[:1] == ["NULL"]:
            self.i += 1
        return True

    def parse(self) -> DataType:
        word = self.take().upper()
        root = _ALIASES.get(word, word)
        t: DataType
        if word in ("STRING", "BYTES"):
            t = DataType(root, length=MAX_LENGTH)
        elif root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            args = self.int_args()
            t = DataType(root, length=args[0] if args else (1 if root in ("CHAR", "BINARY") else MAX_LENGTH))
        elif root == "DECIMAL":
            args = self.int_args()
            t = DataType("DECIMAL", precision=args[0] if args else 10, scale=args[1] if len(args) > 1 else 0)
        elif root in ("TIME", "TIMESTAMP", "TIMESTAMP_LTZ"):
            t = self.temporal(root)
        elif root == "ARRAY" or (root == "VECTOR" and self.peek() == "<"):
            t = self.with_element(root)
        elif root == "MAP":
            self.expect("<")
            k = self.parse()
            self.expect(",")
            v = self.parse()
            self.expect(">")
            t = DataType("MAP", key=k, value=v)
        elif root == "ROW":
            t = self.row()
        elif root in ATOMIC_ROOTS or root in ("VARIANT", "BLOB"):
            t = DataType(root)
        else:
            return self.unknown_type(root, word)
        return t.copy(self.nullability())

    def temporal(self, root: str) -> DataType:
        """``TIME[(p)]``, ``TIMESTAMP[(p)]`` (``WITH LOCAL TIME ZONE``: TIMESTAMP_LTZ) or ``TIMESTAMP_LTZ[(p)]``."""
        args = self.int_args()
        precision = args[0] if args else (0 if root == "TIME" else 6)
        up = [x.upper() for x in self.tokens[self.i:self.i + 4]]
        if root == "TIMESTAMP" and up == ["WITH", "LOCAL", "TIME", "ZONE"]:
            self.i += 4
            root = "TIMESTAMP_LTZ"
        elif root in ("TIME", "TIMESTAMP") and up[:3] == ["WITHOUT", "TIME", "ZONE"]:
            self.i += 3
        return DataType(root, precision=precision)

    def row(self) -> DataType:
        """``ROW<name [:] type, ...>`` (a name may be back-quoted)."""
        self.expect("<")
        fields: list[DataField] = []
        while True:
            name = self.take()
            if name.startswith("`"):
                name = name[1:-1].replace("``", "`")
            if self.peek() == ":":
                self.take()
            fields.append(DataField(len(fields), name, self.parse()))
            if self.peek() == ",":
                self.take()
                continue
            self.expect(">")
            return DataType("ROW", fields=tuple(fields))

    def with_element(self, root: str) -> DataType:
        """``ARRAY<t>`` or ``VECTOR<t, n>``."""
        self.expect("<")
        elem = self.parse()
        if root == "ARRAY":
            self.expect(">")
            return DataType("ARRAY", element=elem)
        self.expect(",")
        n = self.take()
        if not n.isdigit():
            raise SchemaError(f"expected the length of a VECTOR but got {n!r} in type {self.text!r}")
        self.expect(">")
        return _vector(elem, int(n), True)

    def unknown_type(self, root: str, word: str) -> DataType:
        """A type root the engine does not know (BLOB, VARIANT, ... of newer writers): carried as such when reading
        a schema file (``keep_unknown``), a :class:`SchemaError` otherwise."""
        if not self.keep_unknown or not re.fullmatch(r"[A-Z_][A-Z_0-9]*", root):
            raise SchemaError(f"unknown data type {word!r} in {self.text!r}")
        start = self.i - 1
        self.skip_arguments()
        nullable = self.nullability()
        text = self.text.strip() if start == 0 and self.peek() is None else root + ("" if nullable else " NOT NULL")
        return DataType(root, nullable, unknown=text)

    def skip_arguments(self) -> None:
        """Skip the ``(...)`` or ``<...>`` arguments of an unknown type."""
        if self.peek() not in ("(", "<"):
            return
        depth = 0
        while True:
            tok = self.take()
            depth += tok in ("(", "<")
            depth -= tok in (")", ">")
            if depth == 0:
                return


def _vector(element: DataType, length: int, nullable: bool) -> DataType:
    """VECTOR<element, length>, checked as Paimon's ``VectorType`` checks it."""
    if element.root not in VECTOR_ELEMENT_ROOTS or length < 1:
        raise SchemaError(f"invalid type VECTOR<{element.sql()}, {length}>: the element must be one of "
                          f"{', '.join(sorted(VECTOR_ELEMENT_ROOTS))} and the length at least 1")
    return DataType("VECTOR", nullable, length=length, element=element)


def parse_type(text: str, *, keep_unknown: bool = False) -> DataType:
    """Parse a Paimon SQL type string such as ``"DECIMAL(10, 2) NOT NULL"`` or ``"ARRAY<INT>"``.

    ``keep_unknown`` (schema files): a type root the engine does not know becomes a :class:`DataType` with
    :attr:`~DataType.unknown` set instead of a :class:`SchemaError`."""
    p = _Parser(text, keep_unknown)
    t = p.parse()
    if p.peek() is not None:
        raise SchemaError(f"unexpected {p.peek()!r} in type {text!r}")
    return t


# ---- Arrow mapping ---------------------------------------------------------------------------------------------

def _ts_unit(precision: int) -> str:
    if precision == 0:
        return "s"
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


_SIMPLE_ARROW_TYPES: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
    "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "DATE": pa.date32(),
    "CHAR": pa.string(), "VARCHAR": pa.string(), "BINARY": pa.binary(), "VARBINARY": pa.binary(),
    "TIME": pa.time32("ms"),
}


def to_arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type that holds values of ``t`` (as pypaimon maps it)."""
    if t.unknown is not None:
        raise UnsupportedError(f"type {t} is not supported by this engine (docs/compatibility.md)")
    r = t.root
    simple = _SIMPLE_ARROW_TYPES.get(r)
    if simple is not None:
        return simple
    if r == "DECIMAL":
        assert t.precision is not None and t.scale is not None
        return pa.decimal128(t.precision, t.scale)
    if r == "TIMESTAMP":
        return pa.timestamp(_ts_unit(t.precision or 0))
    if r == "TIMESTAMP_LTZ":
        return pa.timestamp(_ts_unit(t.precision or 0), tz="UTC")
    if r == "ARRAY":
        assert t.element is not None
        return pa.list_(pa.field("item", to_arrow_type(t.element), nullable=t.element.nullable))
    if r == "MAP":
        assert t.key is not None and t.value is not None
        return pa.map_(pa.field("key", to_arrow_type(t.key), nullable=False),
                       pa.field("value", to_arrow_type(t.value), nullable=t.value.nullable))
    if r == "ROW":
        return pa.struct([to_arrow_field(f) for f in t.fields])
    if r == "VECTOR":
        assert t.element is not None and t.length is not None
        return pa.list_(pa.field("item", to_arrow_type(t.element), nullable=t.element.nullable), t.length)
    if r == "VARIANT":
        return VARIANT_ARROW_TYPE
    if r == "BLOB":
        return pa.large_binary()
    raise SchemaError(f"type {t} has no Arrow mapping")


#: VARIANT as pypaimon and Parquet's unshredded variant encoding hold it: binary ``value`` and ``metadata``.
VARIANT_ARROW_TYPE = pa.struct([pa.field("value", pa.binary(), nullable=False),
                                pa.field("metadata", pa.binary(), nullable=False)])


def is_variant_arrow_type(at: pa.DataType) -> bool:
    """Whether an Arrow type is the (unshredded) VARIANT pair ``struct<value: binary, metadata: binary>``."""
    return (pa.types.is_struct(at) and at.num_fields == 2
            and {at.field(i).name for i in range(2)} == {"value", "metadata"}
            and all(pa.types.is_binary(at.field(n).type) or pa.types.is_large_binary(at.field(n).type)
                    for n in ("value", "metadata")))


def variant_children_filled(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A VARIANT column (:func:`is_variant_arrow_type`) whose null rows have empty, not null, ``value`` and
    ``metadata``, as NOT NULL fields: Arrow producers such as Spark leave the children of a null row null, which a
    cast to :data:`VARIANT_ARROW_TYPE` and a Parquet writer refuse."""
    chunks = []
    for chunk in col.chunks:
        null_rows = chunk.is_null()
        children = [chunk.field(name) for name in ("value", "metadata")]
        if chunk.null_count:
            children = [pc.if_else(null_rows, pa.scalar(b"", c.type), c) for c in children]
        # a null child of a row that is not null stays nullable: the cast to VARIANT_ARROW_TYPE then names it
        fields = [pa.field(name, c.type, nullable=c.null_count > 0) for name, c in zip(("value", "metadata"), children,
                                                                                          strict=True)]
        chunks.append(pa.StructArray.from_arrays(children, fields=fields, mask=null_rows))
    return pa.chunked_array(chunks)


def to_arrow_field(f: DataField) -> pa.Field:
    """The Arrow field of a table field."""
    return pa.field(f.name, to_arrow_type(f.type), nullable=f.type.nullable)


def to_arrow_schema(fields: Sequence[DataField]) -> pa.Schema:
    """The Arrow schema of table fields."""
    return pa.schema([to_arrow_field(f) for f in fields])


def from_arrow_type(at: pa.DataType, nullable: bool = True, *, next_id: Iterator[int] | None = None) -> DataType:
    """The Paimon type for an Arrow type. ``next_id`` numbers nested ROW fields."""
    if pa.types.is_fixed_size_list(at):
        return _vector(from_arrow_type(at.value_type, at.value_field.nullable), at.list_size, nullable)
    if is_variant_arrow_type(at):
        return DataType("VARIANT", nullable)
    if pa.types.is_list(at) or pa.types.is_large_list(at) or pa.types.is_map(at) or pa.types.is_struct(at):
        return _from_arrow_nested(at, nullable, next_id)
    return _from_arrow_scalar(at, nullable)


def _from_arrow_scalar(at: pa.DataType, nullable: bool) -> DataType:
    if pa.types.is_boolean(at):
        return DataType("BOOLEAN", nullable)
    ints = {8: "TINYINT", 16: "SMALLINT", 32: "INT", 64: "BIGINT"}
    if pa.types.is_signed_integer(at):
        return DataType(ints[at.bit_width], nullable)
    if pa.types.is_unsigned_integer(at):
        raise SchemaError(f"unsigned Arrow type {at} has no Paimon equivalent; cast it to a signed type")
    if pa.types.is_float32(at):
        return DataType("FLOAT", nullable)
    if pa.types.is_float64(at):
        return DataType("DOUBLE", nullable)
    if pa.types.is_decimal(at):
        return DataType("DECIMAL", nullable, precision=at.precision, scale=at.scale)
    return _from_arrow_text_or_time(at, nullable)


def _from_arrow_text_or_time(at: pa.DataType, nullable: bool) -> DataType:
    """VARCHAR, BINARY, VARBINARY, DATE, TIME or TIMESTAMP(_LTZ) for an Arrow string, binary or temporal type."""
    if pa.types.is_string(at) or pa.types.is_large_string(at) or pa.types.is_string_view(at):
        return DataType("VARCHAR", nullable, length=MAX_LENGTH)
    if pa.types.is_fixed_size_binary(at):
        return DataType("BINARY", nullable, length=at.byte_width)
    if pa.types.is_binary(at) or pa.types.is_large_binary(at) or pa.types.is_binary_view(at):
        return DataType("VARBINARY", nullable, length=MAX_LENGTH)
    if pa.types.is_date32(at) or pa.types.is_date64(at):
        return DataType("DATE", nullable)
    if pa.types.is_time(at):
        return DataType("TIME", nullable, precision={"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit])
    if pa.types.is_timestamp(at):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit]
        return DataType("TIMESTAMP_LTZ" if at.tz else "TIMESTAMP", nullable, precision=p)
    raise SchemaError(f"Arrow type {at} has no Paimon equivalent")


def _from_arrow_nested(at: pa.DataType, nullable: bool, next_id: Iterator[int] | None) -> DataType:
    """ARRAY, MAP or ROW for an Arrow list, map or struct type."""
    if pa.types.is_list(at) or pa.types.is_large_list(at):
        vf = at.value_field
        return DataType("ARRAY", nullable, element=from_arrow_type(vf.type, vf.nullable, next_id=next_id))
    if pa.types.is_map(at):
        return DataType("MAP", nullable, key=from_arrow_type(at.key_type, False, next_id=next_id),
                        value=from_arrow_type(at.item_type, at.item_field.nullable, next_id=next_id))
    counter = next_id if next_id is not None else iter(range(10**9))
    fields = []
    for i in range(at.num_fields):
        f = at.field(i)
        fid = next(counter)
        fields.append(DataField(fid, f.name, from_arrow_type(f.type, f.nullable, next_id=counter)))
    return DataType("ROW", nullable, fields=tuple(fields))


def fields_from_arrow_schema(schema: pa.Schema, first_id: int = 0) -> tuple[list[DataField], int]:
    """Paimon fields for an Arrow schema, with ids in declaration order (nested ROW fields numbered after).

    Returns the fields and the highest field id used.
    """
    top = list(schema)
    counter = iter(range(first_id + len(top), 10**9))
    out: list[DataField] = []
    for i, f in enumerate(top):
        out.append(DataField(first_id + i, f.name, from_arrow_type(f.type, f.nullable, next_id=counter)))
    highest = next(counter) - 1
    return out, highest


def max_field_id(fields: Sequence[DataField]) -> int:
    """The highest field id in ``fields``, nested ROW fields included (-1 for none)."""
    best = -1
    for f in fields:
        best = max(best, f.id)
        stack = [f.type]
        while stack:
            t = stack.pop()
            for sub in t.fields:
                best = max(best, sub.id)
                stack.append(sub.type)
            stack.extend(x for x in (t.element, t.key, t.value) if x is not None)
    return best


_WIDENINGS: dict[str, tuple[str, ...]] = {
    "TINYINT": ("SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"),
    "SMALLINT": ("INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"),
    "INT": ("BIGINT", "FLOAT", "DOUBLE", "DECIMAL"),
    "BIGINT": ("DOUBLE", "DECIMAL"),
    "FLOAT": ("DOUBLE",),
    "CHAR": ("VARCHAR",),
    "VARCHAR": ("VARCHAR",),
    "BINARY": ("VARBINARY",),
    "VARBINARY": ("VARBINARY",),
    "DECIMAL": ("DECIMAL",),
    "TIMESTAMP": ("TIMESTAMP",),
    "DATE": ("TIMESTAMP",),
}


def is_widening(old: DataType, new: DataType) -> bool:
    """Whether changing a column from ``old`` to ``new`` keeps every old value (type widening)."""
    if old.root in VALUE_ONLY_ROOTS or new.root in VALUE_ONLY_ROOTS:
        return old.copy(True) == new.copy(True)
    if old.root == new.root and old.root not in ("DECIMAL", "VARCHAR", "CHAR", "BINARY", "VARBINARY", "TIMESTAMP"):
        return True
    if new.root not in _WIDENINGS.get(old.root, ()):
        return False
    if new.root in ("VARCHAR", "VARBINARY"):
        return (new.length or 0) >= (old.length or 0)
    if new.root == "DECIMAL":
        if old.root == "DECIMAL":
            assert old.precision is not None and old.scale is not None
            assert new.precision is not None and new.scale is not None
            return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
        digits = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}[old.root]
        assert new.precision is not None and new.scale is not None
        return new.precision - new.scale >= digits
    if new.root == "TIMESTAMP" and old.root == "TIMESTAMP":
        return (new.precision or 0) >= (old.precision or 0)
    return True
