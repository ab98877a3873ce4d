"""Typed check definitions: one frozen dataclass per kind of check, built from the plain dicts a DAG or the command
line gives (``{"check": "row_count", "min": 1}``) by :func:`parse_checks`.

A definition is checked here for what needs no table (the kind, its fields, bounds); what needs the table's schema
(columns, values of the column's type, the primary key) is checked by :mod:`table_engine.ops.checks.runner` before it
reads any data. Every error is one :class:`~table_engine.errors.CheckError` line naming the check. No pyarrow here:
the provider's DAG files build commands holding checks.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from table_engine.errors import CheckError

__all__ = ["CHECKS", "Check", "CheckResult", "Freshness", "NoDuplicateKeys", "NullFraction", "RowCount",
           "RowPredicate", "RowsAdded", "ValuesInRange", "ValuesInSet", "Volume", "parse_check", "parse_checks"]

Filter = tuple[tuple[Any, ...], ...]
"""Engine filters (:mod:`table_engine.predicate`): ``(column, op[, value])`` tuples, ANDed."""


# ---- field converters: the value of a dict as the field holds it, or a message saying what is wrong ---------------
class _Bad(ValueError):
    """A field's value that does not convert; the message says what it must be."""


def _count(value: Any) -> int | None:
    """A row count bound: an integer >= 0 (templated text such as ``"5"`` too)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Bad(f"must be an integer >= 0, got {value!r}")
    return value


def _snapshot(value: Any) -> int | None:
    count = _count(value)
    if count == 0:
        raise _Bad("must be a snapshot id >= 1, got 0")
    return count


def _fraction(value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise _Bad(f"must be a fraction between 0 and 1, got {value!r}") from None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value) or not 0 <= value <= 1:
        raise _Bad(f"must be a fraction between 0 and 1, got {value!r}")
    return float(value)


def _duration(value: Any) -> int:
    """A duration: Paimon's form (``'1 h'``, ``'30 min'``, ``'2 d'``) or milliseconds."""
    from table_engine.errors import OptionError
    from table_engine.options.values import parse_duration

    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str):
        try:
            millis = parse_duration(value.strip())
        except OptionError:
            millis = 0
        if millis > 0:
            return millis
    raise _Bad(f"must be a duration such as '1 h', '30 min' or '2 d', got {value!r}")


def _positive(value: Any) -> int:
    """A count >= 1 (templated text too)."""
    count = _count(value)
    if not count:
        raise _Bad(f"must be an integer >= 1, got {value!r}")
    return count


def _factor(value: Any) -> float:
    """A ratio > 1."""
    try:
        factor = float(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else math.nan
    except ValueError:
        factor = math.nan
    if math.isnan(factor) or factor <= 1 or math.isinf(factor):
        raise _Bad(f"must be a number greater than 1, got {value!r}")
    return factor


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"must be a non-empty string, got {value!r}")
    return value.strip()


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _names(value: Any) -> tuple[str, ...]:
    """Column names: a list, or ``"a,b"`` text."""
    if isinstance(value, str):
        value = [c for c in value.split(",") if c.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) and c.strip() for c in value):
        raise _Bad(f"must be a list of column names, got {value!r}")
    return tuple(c.strip() for c in value)


def _scalar(value: Any) -> Any:
    if value is not None and not isinstance(value, (str, int, float, bool)):
        raise _Bad(f"must be a number, text or boolean, got {value!r}")
    return value


def _values(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)) or not value:
        raise _Bad(f"must be a non-empty list of values, got {value!r}")
    return tuple(_scalar(v) for v in value)


def _filter(value: Any) -> Filter:
    """``[[column, op, value], ...]`` (one ``[column, op, value]`` alone too); the operators and values are checked
    against the table's columns by the runner (:func:`table_engine.predicate.parse_filters`)."""
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(t, (list, tuple)) and len(t) in (2, 3) and isinstance(t[0], str) and isinstance(t[1], str)
            for t in value):
        raise _Bad(f"must be a list of [column, op, value] filters, got {value!r}")
    return tuple(tuple(list(v) if isinstance(v, (list, tuple)) else v for v in t) for t in value)


def _field(convert: Callable[[Any], Any], default: Any = dataclasses.MISSING) -> Any:
    """A check field and the converter :func:`parse_check` applies to its dict value."""
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={"convert": convert})
    return dataclasses.field(default=default, metadata={"convert": convert})


# ---- the checks --------------------------------------------------------------------------------------------------
CHECKS: dict[str, type[Check]] = {}
"""Every kind of check by its name (the ``"check"`` of its dict), in registration order."""

C = TypeVar("C", bound="type[Check]")


def _kind(name: str) -> Callable[[C], C]:
    def register(cls: C) -> C:
        cls.kind = name
        CHECKS[name] = cls
        return cls
    return register


@dataclass(frozen=True, kw_only=True)
class Check:
    """One check on the rows of a table's snapshot (the latest when the check runs).

    :param name: the check's name in results and logs (default: its kind and column, :attr:`label`).
    :param where: only rows matching these engine filters are checked (``[[column, op, value], ...]``, ANDed; e.g.
        today's partition); partitions and files are pruned by them.
    """

    kind: ClassVar[str] = ""
    name: str | None = _field(_optional_text, None)
    where: Filter = _field(_filter, ())

    @property
    def label(self) -> str:
        """The check's name: ``name``, else its kind and column (``null_fraction(email)``)."""
        if self.name:
            return self.name
        subject = self.subject()
        return f"{self.kind}({subject})" if subject else self.kind

    def subject(self) -> str:
        """The column(s) the check is about, for its default label ('' for the whole row)."""
        return ""

    def expected(self) -> str:
        """What passes, as text (``>= 1``, ``<= 0.05``)."""
        raise NotImplementedError

    def validate(self) -> None:
        """Raise :class:`_Bad` for fields that are wrong together (bounds)."""


def _bounds(low: Any, high: Any, unit: str = "") -> str:
    if low is not None and high is not None:
        return f"between {low} and {high}{unit}"
    return f">= {low}{unit}" if low is not None else f"<= {high}{unit}"


def outside_range(low: Any, high: Any) -> str:
    """What a value out of the inclusive range is: ``outside [0, 9]``, ``below 0``, ``above 9``."""
    if low is not None and high is not None:
        return f"outside [{low}, {high}]"
    return f"below {low}" if low is not None else f"above {high}"


def _check_bounds(low: Any, high: Any) -> None:
    if low is None and high is None:
        raise _Bad("needs min, max or both")
    if low is not None and high is not None and not isinstance(low, str) and not isinstance(high, str):
        try:  # text bounds are compared once cast to the column's type, by the runner
            wrong = low > high
        except TypeError:
            raise _Bad(f"min {low!r} and max {high!r} are not comparable") from None
        if wrong:
            raise _Bad(f"min {low!r} is greater than max {high!r}")


@_kind("row_count")
@dataclass(frozen=True, kw_only=True)
class RowCount(Check):
    """The number of rows (after merging by primary key) is within ``min`` and ``max`` (inclusive, either may be
    left out)."""

    min: int | None = _field(_count, None)
    max: int | None = _field(_count, None)

    def expected(self) -> str:
        return _bounds(self.min, self.max)

    def validate(self) -> None:
        _check_bounds(self.min, self.max)


@_kind("no_duplicate_keys")
@dataclass(frozen=True, kw_only=True)
class NoDuplicateKeys(Check):
    """No two rows share the values of ``columns`` (default: the table's primary key; a table without one needs
    ``columns``). Nulls compare equal. Observed: the number of key values held by more than one row."""

    columns: tuple[str, ...] = _field(_names, ())

    def subject(self) -> str:
        return ",".join(self.columns)

    def expected(self) -> str:
        return "0 duplicated keys"


@_kind("null_fraction")
@dataclass(frozen=True, kw_only=True)
class NullFraction(Check):
    """At most the fraction ``max`` (0 to 1) of the rows has a null ``column`` (an empty table passes)."""

    column: str = _field(_text)
    max: float = _field(_fraction, 0.0)

    def subject(self) -> str:
        return self.column

    def expected(self) -> str:
        return f"<= {self.max:g}"


@_kind("values_in_set")
@dataclass(frozen=True, kw_only=True)
class ValuesInSet(Check):
    """Every non-null value of ``column`` is one of ``values`` (text is cast to the column's type: dates, decimals).
    Observed: the number of rows with another value."""

    column: str = _field(_text)
    values: tuple[Any, ...] = _field(_values)

    def subject(self) -> str:
        return self.column

    def expected(self) -> str:
        shown = ", ".join(map(repr, self.values[:10])) + (", ..." if len(self.values) > 10 else "")
        return f"0 values outside {{{shown}}}"


@_kind("values_in_range")
@dataclass(frozen=True, kw_only=True)
class ValuesInRange(Check):
    """Every non-null value of ``column`` is within ``min`` and ``max`` (inclusive, either may be left out; text is
    cast to the column's type). Observed: the number of rows outside."""

    column: str = _field(_text)
    min: Any = _field(_scalar, None)
    max: Any = _field(_scalar, None)

    def subject(self) -> str:
        return self.column

    def expected(self) -> str:
        return f"0 values {outside_range(self.min, self.max)}"

    def validate(self) -> None:
        _check_bounds(self.min, self.max)


@_kind("rows_added")
@dataclass(frozen=True, kw_only=True)
class RowsAdded(Check):
    """The rows added since ``since_snapshot`` (or the snapshot of ``since_tag``) are within ``min`` and ``max``:
    the rows of an incremental read between that snapshot and the checked one (Paimon's ``incremental-between``:
    appended rows; on a primary-key table the rows each snapshot inserted or updated, deletes not counted)."""

    since_snapshot: int | None = _field(_snapshot, None)
    since_tag: str | None = _field(_optional_text, None)
    min: int | None = _field(_count, None)
    max: int | None = _field(_count, None)

    def subject(self) -> str:
        return f"since {self.since_tag}" if self.since_tag else f"since {self.since_snapshot}"

    def expected(self) -> str:
        return _bounds(self.min, self.max)

    def validate(self) -> None:
        if (self.since_snapshot is None) == (self.since_tag is None):
            raise _Bad("needs exactly one of since_snapshot and since_tag")
        _check_bounds(self.min, self.max)


@_kind("predicate")
@dataclass(frozen=True, kw_only=True)
class RowPredicate(Check):
    """Every row satisfies ``filter``: engine filters ``[[column, op, value], ...]`` (ANDed; ops ``=, !=, <, <=, >,
    >=, in, not in, is null, is not null``). A row where a compared column is null does not satisfy it. Observed: the
    number of rows that do not."""

    filter: Filter = _field(_filter)

    def subject(self) -> str:
        return " and ".join(" ".join(str(x) for x in t) for t in self.filter)

    def expected(self) -> str:
        return "0 rows not matching"


DATA_COMMIT_KINDS = ("APPEND", "OVERWRITE")
"""The commit kinds that change a table's data (a compaction, an ANALYZE only rewrite or describe it)."""


@_kind("freshness")
@dataclass(frozen=True, kw_only=True)
class Freshness(Check):
    """The checked snapshot's latest data commit (an APPEND or OVERWRITE snapshot at or before it: not a compaction)
    was committed at most ``max_age`` ago when the check runs. Metadata only: no data file is read. Observed: its age
    in seconds (None when no data commit is retained)."""

    max_age: int = _field(_duration)

    def expected(self) -> str:
        from table_engine.options.values import format_duration

        return f"a data commit within {format_duration(self.max_age)}"


@_kind("volume")
@dataclass(frozen=True, kw_only=True)
class Volume(Check):
    """The row delta of the checked snapshot's latest data commit is within bounds learned from the ``history``
    data commits before it: between ``median / factor`` and ``median * factor`` of their row deltas (a snapshot's
    ``deltaRecordCount``: rows written, a primary-key table's deletes included). With fewer than ``min_history``
    earlier data commits retained the check passes and says it did not judge. Metadata only. Observed: the row
    delta."""

    history: int = _field(_positive, 20)
    min_history: int = _field(_positive, 5)
    factor: float = _field(_factor, 10.0)

    def expected(self) -> str:
        return f"within x{self.factor:g} of the median of the last {self.history} data commits"

    def validate(self) -> None:
        if self.min_history > self.history:
            raise _Bad(f"min_history {self.min_history} is greater than history {self.history}")


# ---- parsing -----------------------------------------------------------------------------------------------------
def check_id(index: int, data: Mapping[str, Any]) -> str:
    """How errors name a check: ``check 2 (null_fraction 'emails' on column 'email')`` (1-based position, kind,
    name, column)."""
    kind, name, column = data.get("check"), data.get("name"), data.get("column")
    what = f"{kind}" if isinstance(kind, str) else "?"
    if isinstance(name, str) and name:
        what += f" {name!r}"
    if isinstance(column, str) and column:
        what += f" on column {column!r}"
    return f"check {index + 1} ({what})"


def parse_check(data: Mapping[str, Any], index: int = 0) -> Check:
    """The check of one dict (``{"check": <kind>, <field>: <value>, ...}``); a one-line CheckError naming it."""
    if isinstance(data, Check):
        return data
    if not isinstance(data, Mapping):
        raise CheckError(f"check {index + 1}: must be an object like {{\"check\": \"row_count\", \"min\": 1}}, "
                         f"got {data!r}")
    where = check_id(index, data)
    kind = data.get("check")
    cls = CHECKS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise CheckError(f"{where}: unknown check {kind!r}; expected one of {', '.join(CHECKS)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields) - {"check"})
    if unknown:
        raise CheckError(f"{where}: unknown field(s) {', '.join(unknown)}; {kind} takes "
                         f"{', '.join(fields)}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING:
                raise CheckError(f"{where}: {name} is required")
            continue
        try:
            values[name] = f.metadata["convert"](data[name])
        except _Bad as e:
            raise CheckError(f"{where}: {name} {e}") from None
    check = cls(**values)
    try:
        check.validate()
    except _Bad as e:
        raise CheckError(f"{where}: {e}") from None
    return check


def parse_checks(items: Sequence[Mapping[str, Any]]) -> list[Check]:
    """The checks of a list of dicts (at least one; names unique)."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence) or not items:
        raise CheckError(f"checks must be a non-empty list of check objects, got {items!r}")
    checks = [parse_check(item, i) for i, item in enumerate(items)]
    seen: dict[str, int] = {}
    for i, c in enumerate(checks):
        if c.label in seen:
            raise CheckError(f"{check_id(i, items[i])}: its name {c.label!r} is the name of check {seen[c.label] + 1} "
                             "too; give each a distinct name")
        seen[c.label] = i
    return checks


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome.

    :param name: the check's :attr:`~Check.label`.
    :param check: its kind.
    :param passed: whether it passed.
    :param observed: what was measured (a count, a fraction).
    :param expected: what passes, as text.
    :param message: one line for people (what was found, a few offending values).
    """

    name: str
    check: str
    passed: bool
    observed: Any
    expected: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON object (the command's result line lists them)."""
        return dataclasses.asdict(self)
