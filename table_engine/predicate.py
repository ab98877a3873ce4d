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
class Col:
    """Another column as a predicate's value, in the conditions of row-level changes: ``("source.qty", ">",
    Col("target.qty"))``; in JSON ``{"column": "target.qty"}``. Not for ``in`` / ``not in``. Such a predicate
    never reaches pruning (:meth:`Predicate.test_value`, :meth:`Predicate.may_match`): :func:`parse_filters`
    admits it only for row-level conditions, which evaluate it on rows."""

    name: str


@dataclass(frozen=True)
class Predicate:
    """``column op value``; ``value`` is a list for ``in``/``not in`` and unused for the null tests."""

    column: str
    op: str
    value: Any = None

    def expression(self) -> pc.Expression:
        f = pc.field(self.column)
        op, v = self.op, self.value
        if isinstance(v, Col):
            v = pc.field(v.name)
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
    if isinstance(v, Mapping) and set(v) == {"column"} and isinstance(v["column"], str):
        return Col(v["column"])  # the JSON form of a column reference
    return v


def parse_filters(filters: Iterable[Any] | Predicate | None, references: bool = False) -> list[Predicate]:
    """Accept predicates or ``(column, op, value)`` tuples (a conjunction). With ``references`` a value may be
    another column (:class:`Col`, or ``{"column": name}``): the conditions of row-level changes; elsewhere that
    is an error (filters of reads prune files by literal values)."""
    if filters is None:
        return []
    if isinstance(filters, Predicate):
        filters = [filters]
    out: list[Predicate] = []
    for item in filters:
        if isinstance(item, Predicate):
            _check_reference(item, references)
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
        pred = Predicate(col, op, value)
        _check_reference(pred, references)
        out.append(pred)
    return out


def _check_reference(p: Predicate, references: bool) -> None:
    values = p.value if isinstance(p.value, list) else [p.value]
    if not any(isinstance(v, Col) for v in values):
        return
    if not references:
        raise PredicateError(f"filter ({p.column!r}, {p.op!r}, {p.value!r}): a column as the value is for the "
                             "conditions of row-level changes only; a filter compares with literal values")
    if p.op in ("in", "not in") or isinstance(p.value, list):
        raise PredicateError(f"filter ({p.column!r}, {p.op!r}, ...): {p.op!r} takes literal values, not columns")


def validate_columns(preds: Sequence[Predicate], columns: Sequence[str]) -> None:
    """PredicateError naming the first predicate on a column not in ``columns``."""
    for p in preds:
        for c in (p.column, *([p.value.name] if isinstance(p.value, Col) else [])):
            if c not in columns:
                raise PredicateError(f"filter on unknown column {c!r}; columns are {list(columns)}")


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
