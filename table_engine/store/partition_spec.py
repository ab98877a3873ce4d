r"""Partition specs: ``{partition column: value}`` selections, parsed once and typed against the partition columns.

One implementation for every command that selects partitions (compaction, dropping partitions, rewriting file
indexes, the CLI's ``--partition``, the Spark application, the provider's operators and sensors):

* :func:`parse_partition_text` / :func:`format_partition_text` are the one text form, ``k=v,k2=v2``; several specs
  are joined by ``;`` (:func:`parse_partition_texts` / :func:`format_partition_texts`). A backslash escapes the next
  character, so keys and values may hold ``,``, ``=``, ``;``, ``\`` and surrounding blanks (which are otherwise
  trimmed); formatting escapes exactly what parsing needs, so the two round-trip.
* :class:`PartitionSpec` is a spec typed against a table's partition columns, as Paimon's
  ``InternalRowPartitionComputer.convertSpecToInternal`` does: the value equal to ``partition.default-name`` (default
  ``__DEFAULT_PARTITION__``) is null, any other text is cast to the column's type (DATE, TIMESTAMP, TIMESTAMP_LTZ,
  TINYINT..BIGINT, DECIMAL, BOOLEAN, FLOAT/DOUBLE, CHAR/VARCHAR/STRING, TIME, BINARY). A spec may name a subset of
  the partition columns: it matches every partition with those values.
* :func:`select_partitions` matches specs against encoded partitions, vectorized: the distinct partitions are decoded
  once into typed Arrow columns and compared with :mod:`pyarrow.compute`, typed values against typed values.

Errors are :class:`~table_engine.errors.PartitionSpecError` naming the column and the value.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import PartitionSpecError
from table_engine.format.binary_row_arrow import decode_rows
from table_engine.io.paths import DEFAULT_PARTITION_NAME
from table_engine.types import DataField, DataType, to_arrow_type

__all__ = ["PartitionSpec", "PartitionSpecs", "format_partition_text", "format_partition_texts", "parse_partition_text",
           "parse_partition_texts", "partition_specs", "select_partitions"]

_ESCAPE = "\\"
_SPECIAL = frozenset(",=;\\")
_INTEGER = re.compile(r"[+-]?\d+")
_TRUE = frozenset(("true", "t", "yes", "y", "1"))
_FALSE = frozenset(("false", "f", "no", "n", "0"))
_INT_ROOTS = frozenset(("TINYINT", "SMALLINT", "INT", "BIGINT"))


# ---- the text form -----------------------------------------------------------------------------------------------
def _split(text: str, sep: str) -> list[str]:
    """Split on unescaped ``sep``; escapes are kept for the next step."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == _ESCAPE and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if c == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    """Drop escapes and trim unescaped blanks at both ends."""
    chars: list[tuple[str, bool]] = []
    i = 0
    while i < len(text):
        if text[i] == _ESCAPE and i + 1 < len(text):
            chars.append((text[i + 1], True))
            i += 2
        else:
            chars.append((text[i], False))
            i += 1
    start, end = 0, len(chars)
    while start < end and not chars[start][1] and chars[start][0].isspace():
        start += 1
    while end > start and not chars[end - 1][1] and chars[end - 1][0].isspace():
        end -= 1
    return "".join(c for c, _ in chars[start:end])


def _escape(text: str) -> str:
    out = [_ESCAPE + c if c in _SPECIAL else c for c in text]
    for i in (0, len(out) - 1):  # blanks at the ends would be trimmed
        if out and out[i].isspace():
            out[i] = _ESCAPE + out[i]
    return "".join(out)


def parse_partition_text(text: str) -> dict[str, str]:
    r"""``k=v,k2=v2`` -> ``{"k": "v", "k2": "v2"}`` (blanks around keys and values trimmed, ``\`` escapes)."""
    spec: dict[str, str] = {}
    for item in _split(text, ","):
        if not item.strip():
            continue
        key_value = _split(item, "=")
        key = _unescape(key_value[0])
        if len(key_value) < 2 or not key:
            raise PartitionSpecError(f"partition spec {text!r} must look like 'k=v,k2=v2' (item {item.strip()!r})")
        if key in spec:
            raise PartitionSpecError(f"partition spec {text!r} names column {key!r} twice")
        spec[key] = _unescape("=".join(key_value[1:]))
    return spec


def parse_partition_texts(text: str) -> list[dict[str, str]]:
    """Several specs joined by ``;`` (blank ones skipped)."""
    return [parse_partition_text(part) for part in _split(text, ";") if part.strip()]


def value_text(value: Any, default_name: str = DEFAULT_PARTITION_NAME) -> str:
    """The text of one partition value that :class:`PartitionSpec` parses back to the same value."""
    if value is None:
        return default_name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def format_partition_text(spec: Mapping[str, Any] | PartitionSpec, default_name: str = DEFAULT_PARTITION_NAME) -> str:
    """The text form of one spec, the inverse of :func:`parse_partition_text` (None as ``default_name``)."""
    items = spec.as_dict() if isinstance(spec, PartitionSpec) else spec
    text = ",".join(f"{_escape(str(k))}={_escape(value_text(v, default_name))}" for k, v in items.items())
    return _ESCAPE + text if text.startswith("-") else text  # not taken for an option on a command line


def format_partition_texts(specs: Iterable[Mapping[str, Any] | PartitionSpec],
                           default_name: str = DEFAULT_PARTITION_NAME) -> str:
    """Several specs joined by ``;``, the inverse of :func:`parse_partition_texts`."""
    return ";".join(format_partition_text(s, default_name) for s in specs)


# ---- typing values against a column ------------------------------------------------------------------------------
def _parse_text(text: str, t: DataType) -> Any:
    """Paimon's cast of partition text to the column's type; raises ValueError/ArithmeticError if it does not parse."""
    root = t.root
    if t.is_string:
        return text
    s = text.strip()
    if root in _INT_ROOTS or root in ("BOOLEAN", "FLOAT", "DOUBLE", "DECIMAL"):
        return _parse_numeric(s, root)
    if root in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIME"):
        return _parse_temporal(s, root)
    if t.is_binary:
        return text.encode("utf-8")
    raise TypeError(f"partition columns of type {t} are not supported")


def _parse_numeric(s: str, root: str) -> Any:
    """Stripped partition text as an integer type, BOOLEAN, FLOAT, DOUBLE or DECIMAL value."""
    if root in _INT_ROOTS:
        if not _INTEGER.fullmatch(s):
            raise ValueError("not an integer")
        return int(s)
    if root == "BOOLEAN":
        if s.lower() in _TRUE:
            return True
        if s.lower() in _FALSE:
            return False
        raise ValueError("not true or false")
    if root in ("FLOAT", "DOUBLE"):
        if "_" in s:
            raise ValueError("not a number")
        return float(s)
    if "_" in s:  # DECIMAL
        raise ValueError("not a decimal")
    value = decimal.Decimal(s)
    if not value.is_finite():
        raise ValueError("not a finite decimal")
    return value


def _parse_temporal(s: str, root: str) -> Any:
    """Stripped partition text as a DATE, TIMESTAMP, TIMESTAMP_LTZ or TIME value."""
    if root == "DATE":
        if _INTEGER.fullmatch(s):  # the legacy partition directory name: days since 1970-01-01
            return datetime.date(1970, 1, 1) + datetime.timedelta(days=int(s))
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
            raise ValueError("not a date (yyyy-MM-dd, or days since 1970-01-01)")
        return datetime.date.fromisoformat(s)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if not re.match(r"\d{4}-\d{2}-\d{2}", s):
            raise ValueError("not a timestamp (yyyy-MM-dd[ HH:mm[:ss[.fff]]])")
        return datetime.datetime.fromisoformat(s)
    return datetime.time.fromisoformat(s)  # TIME


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_date(value: Any) -> bool:
    return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)


# per type root, whether a value given typed is of the column's kind
_PYTHON_KINDS: dict[str, Callable[[Any], bool]] = {
    **dict.fromkeys(_INT_ROOTS, _is_integer),
    "BOOLEAN": lambda v: isinstance(v, bool),
    "FLOAT": _is_number,
    "DOUBLE": _is_number,
    "DECIMAL": lambda v: isinstance(v, int | decimal.Decimal) and not isinstance(v, bool),
    "DATE": _is_date,
    "TIMESTAMP": lambda v: isinstance(v, datetime.datetime),
    "TIMESTAMP_LTZ": lambda v: isinstance(v, datetime.datetime),
    "TIME": lambda v: isinstance(v, datetime.time),
}


def _check_python(value: Any, t: DataType) -> Any:
    """A value given typed: check that it is of the column's kind (Arrow then checks range and precision)."""
    root = t.root
    is_kind = _python_kind(t)
    if root == "DECIMAL" and isinstance(value, float) and not isinstance(value, bool):
        return decimal.Decimal(repr(value))
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ") and _is_date(value):
        return datetime.datetime.combine(value, datetime.time())
    if not is_kind(value):
        raise TypeError(f"a {type(value).__name__} is not a {t} value")
    return value


def _python_kind(t: DataType) -> Callable[[Any], bool]:
    """The test of whether a Python value is of column type ``t``'s kind; a TypeError for a type partitions cannot
    have."""
    is_kind = _PYTHON_KINDS.get(t.root)
    if is_kind is not None:
        return is_kind
    if t.is_string:
        return lambda v: isinstance(v, str)
    if t.is_binary:
        return lambda v: isinstance(v, bytes)
    raise TypeError(f"partition columns of type {t} are not supported")


def _normalize(value: Any, t: DataType) -> Any:
    """The value as the engine decodes it from a partition row (timestamps in UTC, decimals at the column's scale)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        if t.root == "TIMESTAMP_LTZ":
            value = value.replace(tzinfo=datetime.UTC)
    out = pa.scalar(value, type=to_arrow_type(t)).as_py()  # range, precision and scale checked by Arrow
    if isinstance(out, datetime.datetime) and out != value:
        raise ValueError(f"more precise than {t}")
    return out


def typed_value(column: str, value: Any, t: DataType, default_name: str = DEFAULT_PARTITION_NAME) -> Any:
    """One spec value as the column's Python value (None for null); :class:`PartitionSpecError` naming the column
    and the value when it does not parse or does not fit the type."""
    if value is None or (isinstance(value, str) and value == default_name):
        return None
    try:
        parsed = _parse_text(value, t) if isinstance(value, str) else _check_python(value, t)
        return _normalize(parsed, t)
    except (ValueError, ArithmeticError, TypeError, OverflowError, pa.ArrowException) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise PartitionSpecError(f"partition column {column!r} of type {t}: value {value!r} cannot be used "
                                 f"({reason})") from None


# ---- the typed spec ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionSpec:
    """Values of some partition columns, typed against them (None = the null partition value).

    ``items`` follow the order of the partition columns; ``fields`` are all partition columns of the table.
    """

    items: tuple[tuple[str, Any], ...]
    fields: tuple[DataField, ...]
    default_name: str = DEFAULT_PARTITION_NAME

    @staticmethod
    def of(spec: Mapping[str, Any] | str | PartitionSpec, partition_fields: Sequence[DataField],
           default_name: str = DEFAULT_PARTITION_NAME, table: str = "the table") -> PartitionSpec:
        """Type a spec (a mapping of column -> text or typed value, or ``k=v,..`` text) against the columns."""
        if isinstance(spec, PartitionSpec):
            spec = spec.as_dict()  # typed values re-checked against these columns
        raw = parse_partition_text(spec) if isinstance(spec, str) else dict(spec)
        if not raw:
            raise PartitionSpecError(f"partition spec {format_partition_text(raw)!r} of {table} names no partition "
                                     f"column")
        by_name = {f.name: f for f in partition_fields}
        unknown = [k for k in raw if k not in by_name]
        if unknown:
            known = list(by_name)
            names = ", ".join(repr(k) for k in unknown)
            raise PartitionSpecError(f"partition spec {format_partition_text(raw, default_name)!r}: {names} not "
                                     f"partition columns of {table} (not partition keys; partition keys: {known})")
        items = tuple((f.name, typed_value(f.name, raw[f.name], f.type, default_name))
                      for f in partition_fields if f.name in raw)
        return PartitionSpec(items, tuple(partition_fields), default_name)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.items)

    @property
    def is_full(self) -> bool:
        """Does the spec name every partition column (one partition)?"""
        return len(self.items) == len(self.fields)

    def __str__(self) -> str:
        return format_partition_text(self.as_dict(), self.default_name)

    def mask(self, columns: pa.Table) -> pa.BooleanArray:
        """Which rows of ``columns`` (one typed column per partition column, see :func:`decode_partitions`) match."""
        result: pa.BooleanArray | pa.ChunkedArray = pa.array([True] * columns.num_rows, pa.bool_())
        types = {f.name: f.type for f in self.fields}
        for name, value in self.items:
            column = columns.column(name)
            if value is None:
                hit = pc.is_null(column)
            else:
                hit = pc.fill_null(pc.equal(column, pa.scalar(value, type=to_arrow_type(types[name]))), False)
            result = pc.and_(result, hit)
        if isinstance(result, pa.ChunkedArray):
            result = result.combine_chunks()
        return result


PartitionSpecs: TypeAlias = Sequence[Mapping[str, Any] | str | PartitionSpec] | Mapping[str, Any] | str
"""What a command accepts as its partitions: one spec (a mapping or ``k=v,..`` text, several joined by ``;``) or a
sequence of specs."""


def partition_specs(specs: PartitionSpecs | None, partition_fields: Sequence[DataField],
                    default_name: str = DEFAULT_PARTITION_NAME, table: str = "the table") -> list[PartitionSpec] | None:
    """Type the ``partitions`` argument of a command; None when no selection was given."""
    if specs is None:
        return None
    if isinstance(specs, str):
        items: list[Mapping[str, Any] | str | PartitionSpec] = list(parse_partition_texts(specs))
    elif isinstance(specs, Mapping | PartitionSpec):
        items = [specs]
    else:
        items = list(specs)
    return [PartitionSpec.of(s, partition_fields, default_name, table) for s in items]


def decode_partitions(partitions: Sequence[bytes], partition_fields: Sequence[DataField]) -> pa.Table:
    """Encoded partitions as typed Arrow columns, one per partition column (decoded vectorized over the rows)."""
    if not partition_fields:
        return pa.table({})
    columns = decode_rows(partitions, [f.type for f in partition_fields])
    return pa.table(dict(zip([f.name for f in partition_fields], columns, strict=True)))


def select_partitions(partitions: Iterable[bytes], specs: Sequence[PartitionSpec],
                      partition_fields: Sequence[DataField], *, require_match: bool = False,
                      what: str = "the command", table: str = "the table") -> set[bytes]:
    """The encoded partitions (of ``partitions``) that match any of ``specs``.

    ``require_match``: a spec that matches none of them is a :class:`PartitionSpecError` naming it (nothing has
    been changed then).
    """
    distinct = sorted(set(partitions))
    columns = decode_partitions(distinct, partition_fields)
    encoded = pa.array(distinct, pa.binary())
    selected: set[bytes] = set()
    for spec in specs:
        hits = encoded.filter(spec.mask(columns)).to_pylist()
        if require_match and not hits:
            raise PartitionSpecError(f"{what}: partition spec {str(spec)!r} matches no partition of {table}")
        selected.update(hits)
    return selected
