"""Filters on table columns: a conjunction of leaf predicates.

Used three ways: to prune partitions (manifest partition stats and entry partitions), to prune files by their
min/max statistics, and to filter rows (as an Arrow compute expression).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import TableEngineError

OPS = ("=", "!=", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null")
_ALIASES = {"==": "=", "<>": "!=", "eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class PredicateError(TableEngineError, ValueError):
    """A malformed filter."""


@dataclass(frozen=True)
class Predicate:
    """``column op value``; ``value`` is a list for ``in``/``not in`` and unused for the null tests."""

    column: str
    op: str
    value: Any = None

    def expression(self) -> pc.Expression:
        f = pc.field(self.column)
        op, v = self.op, self.value
        if op == "=":
            return f == v
        if op == "!=":
            return f != v
        if op == "<":
            return f < v
        if op == "<=":
            return f <= v
        if op == ">":
            return f > v
        if op == ">=":
            return f >= v
        if op == "in":
            return f.isin(list(v))
        if op == "not in":
            return ~f.isin(list(v))
        if op == "is null":
            return f.is_null()
        return f.is_valid()

    def test_value(self, x: Any) -> bool:
        """Evaluate on one value (partition pruning)."""
        op, v = self.op, self.value
        if op == "is null":
            return x is None
        if op == "is not null":
            return x is not None
        if x is None:
            return False
        try:
            if op == "=":
                return bool(x == v)
            if op == "!=":
                return bool(x != v)
            if op == "<":
                return bool(x < v)
            if op == "<=":
                return bool(x <= v)
            if op == ">":
                return bool(x > v)
            if op == ">=":
                return bool(x >= v)
            if op == "in":
                return x in v
            return x not in v
        except TypeError:
            return True

    def may_match(self, lo: Any, hi: Any, null_count: int | None, row_count: int) -> bool:
        """Whether rows with values in [lo, hi] (``null_count`` nulls of ``row_count``) may match."""
        op, v = self.op, self.value
        if op == "is null":
            return null_count is None or null_count > 0
        if null_count is not None and null_count >= row_count:
            return False  # only nulls: no comparison can match
        if op == "is not null":
            return True
        if lo is None or hi is None:
            return True
        try:
            if op == "=":
                return bool(lo <= v <= hi)
            if op == "<":
                return bool(lo < v)
            if op == "<=":
                return bool(lo <= v)
            if op == ">":
                return bool(hi > v)
            if op == ">=":
                return bool(hi >= v)
            if op == "in":
                return any(lo <= x <= hi for x in v if x is not None)
        except TypeError:
            return True
        return True


def _coerce_literal(v: Any) -> Any:
    if isinstance(v, pa.Scalar):
        return v.as_py()
    return v


def parse_filters(filters: Iterable[Any] | Predicate | None) -> list[Predicate]:
    """Accept predicates or ``(column, op, value)`` tuples (a conjunction)."""
    if filters is None:
        return []
    if isinstance(filters, Predicate):
        return [filters]
    out: list[Predicate] = []
    for item in filters:
        if isinstance(item, Predicate):
            out.append(item)
            continue
        if not isinstance(item, tuple | list) or len(item) not in (2, 3):
            raise PredicateError(f"filter {item!r} is not a (column, op, value) tuple")
        col, op = str(item[0]), str(item[1]).strip().lower()
        op = _ALIASES.get(op, op)
        if op not in OPS:
            raise PredicateError(f"filter {item!r}: operator {op!r} is not one of {list(OPS)}")
        value = _coerce_literal(item[2]) if len(item) == 3 else None
        if op in ("in", "not in"):
            if not isinstance(value, Sequence | set | frozenset) or isinstance(value, str):
                raise PredicateError(f"filter {item!r}: {op!r} needs a list of values")
            value = [_coerce_literal(x) for x in value]
        elif op not in ("is null", "is not null") and len(item) != 3:
            raise PredicateError(f"filter {item!r}: operator {op!r} needs a value")
        out.append(Predicate(col, op, value))
    return out


def validate_columns(preds: Sequence[Predicate], columns: Sequence[str]) -> None:
    """PredicateError naming the first predicate on a column not in ``columns``."""
    for p in preds:
        if p.column not in columns:
            raise PredicateError(f"filter on unknown column {p.column!r}; columns are {list(columns)}")


def check_value_types(preds: Sequence[Predicate], schema: pa.Schema) -> None:
    """PredicateError naming the column when a filter's value cannot be compared with the column (``id = 'abc'``
    on an integer column), instead of an Arrow error at the first file read."""
    if not preds:
        return
    empty = schema.empty_table()
    for p in preds:
        if p.column not in schema.names:
            continue
        try:
            empty.filter(p.expression())
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            raise PredicateError(f"filter ({p.column!r}, {p.op!r}, {p.value!r}): the value does not match column "
                                 f"{p.column!r} of type {schema.field(p.column).type}") from None


def conjunction(preds: Sequence[Predicate]) -> pc.Expression | None:
    """The predicates AND-ed as one Arrow expression, or None for none."""
    expr: pc.Expression | None = None
    for p in preds:
        e = p.expression()
        expr = e if expr is None else (expr & e)
    return expr


def test_row(preds: Sequence[Predicate], values: Mapping[str, Any]) -> bool:
    """Whether a row of known values (e.g. a partition) may satisfy every predicate on those columns."""
    return all(p.test_value(values[p.column]) for p in preds if p.column in values)


def normalize_literal(v: Any) -> Any:
    """Make a literal comparable with decoded BinaryRow values (datetimes are naive UTC there)."""
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.UTC).replace(tzinfo=None)
    return v
