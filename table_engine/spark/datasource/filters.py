"""Spark's pushed-down filters -> the engine's ``(column, op, value)`` filters.

Spark hands a Python data source its filters only when ``spark.sql.python.filterPushdown.enabled`` is true
(:func:`table_engine.spark.register` turns it on). Each filter the engine understands prunes partitions (by
partition values and manifest partition stats) and files (by key stats, and value stats of append tables) and
filters the rows of the remaining files exactly. Spark evaluates again only what the engine cannot decide exactly
(see :func:`translate`).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
)

from table_engine.types import DataType

EngineFilter = tuple[str, str] | tuple[str, str, Any]

_COMPARISONS: dict[type[Filter], str] = {
    EqualTo: "=", GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<", LessThanOrEqual: "<=",
}
# Float columns are never pushed: Spark orders NaN above every number and NaN = NaN, Arrow compares neither.
_PUSHABLE_ROOTS = frozenset({"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL", "CHAR", "VARCHAR",
                             "BINARY", "VARBINARY", "DATE", "TIMESTAMP", "TIMESTAMP_LTZ"})


@dataclass(frozen=True)
class Translated:
    """An engine filter and whether the engine's row filtering decides it exactly as Spark would."""

    engine: EngineFilter
    exact: bool


def translate(f: Filter, types: Mapping[str, DataType]) -> Translated | None:
    """The engine filter for Spark filter ``f`` on a table with column ``types``; None when not translatable.

    ``!=`` and ``NOT IN`` are inexact: Arrow's ``not is_in`` keeps NULLs that SQL's ``NOT IN`` drops, so Spark
    re-checks them (they still prune).
    """
    if isinstance(f, Not):
        inner = f.child
        if isinstance(inner, EqualTo):
            value = _literal(inner, inner.value, types)
            return None if value is _NO else Translated((_column(inner), "!=", value), exact=False)
        if isinstance(inner, In):
            values = _literals(inner, types)
            return None if values is None else Translated((_column(inner), "not in", values), exact=False)
        if isinstance(inner, IsNull):
            return _null_test(inner, "is not null", types)
        if isinstance(inner, IsNotNull):
            return _null_test(inner, "is null", types)
        return None
    if isinstance(f, IsNull | IsNotNull):
        return _null_test(f, "is null" if isinstance(f, IsNull) else "is not null", types)
    if isinstance(f, EqualNullSafe):
        if f.value is None:
            return _null_test(f, "is null", types)
        value = _literal(f, f.value, types)
        return None if value is _NO else Translated((_column(f), "=", value), exact=True)
    if isinstance(f, In):
        values = _literals(f, types)
        return None if values is None else Translated((_column(f), "in", values), exact=True)
    op = _COMPARISONS.get(type(f))
    if op is None:
        return None  # string prefix/suffix/contains
    value = _literal(f, getattr(f, "value", None), types)
    return None if value is _NO else Translated((_column(f), op, value), exact=True)


def translate_all(filters: Sequence[Filter], types: Mapping[str, DataType]
                  ) -> tuple[list[EngineFilter], list[Filter]]:
    """Engine filters for ``filters`` and the Spark filters Spark must still evaluate."""
    engine: list[EngineFilter] = []
    remaining: list[Filter] = []
    for f in filters:
        t = translate(f, types)
        if t is None:
            remaining.append(f)
            continue
        engine.append(t.engine)
        if not t.exact:
            remaining.append(f)
    return engine, remaining


# ---- pieces --------------------------------------------------------------------------------------------------
class _Missing:
    pass


_NO: Any = _Missing()


def _column(f: Filter) -> str:
    attribute: tuple[str, ...] = f.attribute  # type: ignore[attr-defined]
    return attribute[0]


def _type_of(f: Filter, types: Mapping[str, DataType]) -> DataType | None:
    attribute: tuple[str, ...] = f.attribute  # type: ignore[attr-defined]
    if len(attribute) != 1:
        return None  # nested field
    t = types.get(attribute[0])
    return t if t is not None and t.root in _PUSHABLE_ROOTS else None


def _null_test(f: Filter, op: str, types: Mapping[str, DataType]) -> Translated | None:
    attribute: tuple[str, ...] = f.attribute  # type: ignore[attr-defined]
    if len(attribute) != 1 or attribute[0] not in types:
        return None
    return Translated((attribute[0], op), exact=True)


def _literal(f: Filter, value: Any, types: Mapping[str, DataType]) -> Any:
    """``value`` as the engine compares it with the column, or ``_NO`` if the pair is not pushable."""
    t = _type_of(f, types)
    if t is None or value is None:
        return _NO
    return _coerce(value, t)


def _literals(f: In, types: Mapping[str, DataType]) -> list[Any] | None:
    t = _type_of(f, types)
    if t is None:
        return None
    out = []
    for v in f.value:
        if v is None:
            continue  # `x IN (.., NULL)` filters like `x IN (..)`
        c = _coerce(v, t)
        if c is _NO:
            return None
        out.append(c)
    return out


def _coerce(value: Any, t: DataType) -> Any:
    root = t.root
    if root == "BOOLEAN":
        return value if isinstance(value, bool) else _NO
    if root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        return value if isinstance(value, int) and not isinstance(value, bool) else _NO
    if root == "DECIMAL":
        return value if isinstance(value, decimal.Decimal | int) and not isinstance(value, bool) else _NO
    if root in ("CHAR", "VARCHAR"):
        return value if isinstance(value, str) else _NO
    if root in ("BINARY", "VARBINARY"):
        return bytes(value) if isinstance(value, bytes | bytearray) else _NO
    if root == "DATE":
        return value if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime) else _NO
    if not isinstance(value, datetime.datetime):
        return _NO
    if root == "TIMESTAMP_LTZ":
        # an instant: compare in UTC
        return value.astimezone(datetime.UTC) if value.tzinfo is not None else _NO
    # TIMESTAMP (without time zone): Spark gives TimestampNTZ literals as naive datetimes
    return value if value.tzinfo is None else _NO
