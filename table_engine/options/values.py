"""Option value syntax: parsing and formatting Paimon's integers, booleans, durations, memory sizes, lists and
maps, and the :class:`OptionType` of each."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from table_engine.errors import OptionError

T = TypeVar("T")
V = TypeVar("V")
E = TypeVar("E", bound=enum.Enum)

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


class _BadValue(ValueError):
    """Raised by the value parsers; the message says what was expected. Converted to OptionError by callers."""


# ---------------------------------------------------------------------------------------------------------------------
# Scalar parsers (Paimon/Flink syntax)
# ---------------------------------------------------------------------------------------------------------------------

_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_DOUBLE_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NUMBER_UNIT_RE = re.compile(r"([0-9]+)\s*(.*)", re.DOTALL)

_NANOS_PER_MILLI = 1_000_000


def _unit_table(groups: Sequence[tuple[Sequence[str], int]]) -> dict[str, int]:
    return {label: factor for labels, factor in groups for label in labels}


_DURATION_UNITS_NANOS = _unit_table(
    [
        (("d", "day", "days"), 86_400_000_000_000),
        (("h", "hour", "hours"), 3_600_000_000_000),
        (("min", "m", "minute", "minutes"), 60_000_000_000),
        (("s", "sec", "secs", "second", "seconds"), 1_000_000_000),
        (("ms", "milli", "millis", "millisecond", "milliseconds"), 1_000_000),
        (("µs", "micro", "micros", "microsecond", "microseconds"), 1_000),
        (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1),
    ]
)

_DURATION_EXPECTED = (
    "a duration such as '10 s', '30 min', '1 h', '7 d' or '500 ms' "
    "(units: d, h, min/m, s, ms, µs, ns; no unit means milliseconds)"
)

_MEMORY_UNITS = _unit_table(
    [
        (("b", "bytes"), 1),
        (("k", "kb", "kibibytes"), 1 << 10),
        (("m", "mb", "mebibytes"), 1 << 20),
        (("g", "gb", "gibibytes"), 1 << 30),
        (("t", "tb", "tebibytes"), 1 << 40),
    ]
)

_MEMORY_EXPECTED = "a memory size such as '64 kb', '256 mb', '1 gb' or '500 bytes' (units: b, kb, mb, gb, tb)"


def _raise_for(what: str, text: str, key: str | None, exc: _BadValue) -> OptionError:
    where = f" for option '{key}'" if key is not None else ""
    return OptionError(f"Invalid {what} '{text}'{where}: expected {exc}.")


def _parse_integer(text: str, low: int, high: int, expected: str) -> int:
    if not _INTEGER_RE.fullmatch(text):
        raise _BadValue(expected)
    value = int(text)
    if not low <= value <= high:
        raise _BadValue(expected)
    return value


def _parse_int(text: str) -> int:
    return _parse_integer(text, INT_MIN, INT_MAX, f"a 32-bit integer in [{INT_MIN}, {INT_MAX}]")


def _parse_long(text: str) -> int:
    return _parse_integer(text, LONG_MIN, LONG_MAX, f"a 64-bit integer in [{LONG_MIN}, {LONG_MAX}]")


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise _BadValue("'true' or 'false' (case-insensitive)")


def _parse_double(text: str) -> float:
    stripped = text.strip()
    if not _DOUBLE_RE.fullmatch(stripped):
        raise _BadValue("a decimal number such as 0.7 or 1e-3")
    return float(stripped)


def _parse_string(text: str) -> str:
    return text


def _split_number_unit(text: str, expected: str) -> tuple[int, str]:
    stripped = text.strip()
    match = _NUMBER_UNIT_RE.fullmatch(stripped)
    if not stripped or match is None:
        raise _BadValue(expected)
    number = int(match.group(1))
    if number > LONG_MAX:
        raise _BadValue(expected + ", within the 64-bit range")
    return number, match.group(2).strip().lower()


def _parse_duration_ms(text: str) -> int:
    number, unit = _split_number_unit(text, _DURATION_EXPECTED)
    if not unit:
        return number
    nanos_per_unit = _DURATION_UNITS_NANOS.get(unit)
    if nanos_per_unit is None:
        raise _BadValue(_DURATION_EXPECTED)
    millis = number * nanos_per_unit // _NANOS_PER_MILLI
    if millis > LONG_MAX:
        raise _BadValue(_DURATION_EXPECTED + ", within the 64-bit millisecond range")
    return millis


def _parse_memory_bytes(text: str) -> int:
    number, unit = _split_number_unit(text, _MEMORY_EXPECTED)
    multiplier = 1
    if unit:
        found = _MEMORY_UNITS.get(unit)
        if found is None:
            raise _BadValue(_MEMORY_EXPECTED)
        multiplier = found
    result = number * multiplier
    if result > LONG_MAX:
        raise _BadValue(_MEMORY_EXPECTED + ", at most 2^63-1 bytes")
    return result


def _parse_list(text: str) -> list[str]:
    if not text.strip():
        return []
    items = [item.strip() for item in text.split(",")]
    if any(not item for item in items):
        raise _BadValue("a comma-separated list of non-empty names, e.g. 'a,b,c'")
    return items


def _parse_map(text: str) -> dict[str, str]:
    result: dict[str, str] = {}
    if not text.strip():
        return result
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 2 or not parts[0].strip():
            raise _BadValue("a comma-separated list of key:value pairs, e.g. '0:avro,3:parquet'")
        result[parts[0].strip()] = parts[1].strip()
    return result


def parse_duration(text: str, *, key: str | None = None) -> int:
    """Parse a Paimon duration (``'1 h'``, ``'30 min'``, ``'7d'``, ``'500'`` = ms) into integer milliseconds."""
    try:
        return _parse_duration_ms(text)
    except _BadValue as exc:
        raise _raise_for("duration", text, key, exc) from None


def parse_memory_size(text: str, *, key: str | None = None) -> int:
    """Parse a Paimon memory size (``'256 mb'``, ``'128MB'``, ``'64 kb'``, ``'42'`` = bytes) into integer bytes."""
    try:
        return _parse_memory_bytes(text)
    except _BadValue as exc:
        raise _raise_for("memory size", text, key, exc) from None


def parse_bool(text: str, *, key: str | None = None) -> bool:
    """Parse ``true``/``false`` case-insensitively, as Paimon does."""
    try:
        return _parse_bool(text)
    except _BadValue as exc:
        raise _raise_for("boolean", text, key, exc) from None


_DURATION_FORMAT_UNITS = (
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("min", 60_000),
    ("s", 1_000),
)


def format_duration(millis: int) -> str:
    """Format milliseconds with the largest unit that divides them exactly (``3600000`` -> ``'1 h'``)."""
    if millis != 0:
        for label, unit_millis in _DURATION_FORMAT_UNITS:
            if millis % unit_millis == 0:
                return f"{millis // unit_millis} {label}"
    return f"{millis} ms"


_MEMORY_FORMAT_UNITS = (("tb", 1 << 40), ("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10))


def format_memory_size(num_bytes: int) -> str:
    """Format bytes with the largest unit that divides them exactly (``268435456`` -> ``'256 mb'``).

    ``2^63-1`` (Paimon's ``MemorySize.MAX_VALUE``) is shown as ``infinite`` in documentation; it is not parseable.
    """
    if num_bytes == LONG_MAX:
        return "infinite"
    if num_bytes != 0:
        for label, multiplier in _MEMORY_FORMAT_UNITS:
            if num_bytes % multiplier == 0:
                return f"{num_bytes // multiplier} {label}"
    return f"{num_bytes} bytes"


def _format_list(value: list[str]) -> str:
    return ",".join(value)


def _format_map(value: dict[str, str]) -> str:
    return ",".join(f"{k}:{v}" for k, v in value.items())


def _format_bool(value: bool) -> str:
    return "true" if value else "false"


def _format_double(value: float) -> str:
    return repr(value)


# ---------------------------------------------------------------------------------------------------------------------
# Option types
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptionType(Generic[T]):
    """How a value of one option type is parsed from, and written back to, its Paimon string form."""

    name: str
    """Type name shown in the documentation (Paimon's names: Integer, Long, Boolean, Duration, MemorySize, ...)."""
    parse: Callable[[str], T]
    """Parses a string; raises ValueError whose message states what was expected."""
    format: Callable[[T], str]
    """Formats a value in the syntax :attr:`parse` accepts."""
    choices: tuple[str, ...] = ()
    """For enum types: the accepted values, in declaration order."""
    is_map: bool = False
    """Map types also accept the prefix form ``<key>.<map-key> = <map-value>``."""


INT_TYPE: OptionType[int] = OptionType("Integer", _parse_int, str)
LONG_TYPE: OptionType[int] = OptionType("Long", _parse_long, str)
BOOLEAN_TYPE: OptionType[bool] = OptionType("Boolean", _parse_bool, _format_bool)
DOUBLE_TYPE: OptionType[float] = OptionType("Double", _parse_double, _format_double)
FLOAT_TYPE: OptionType[float] = OptionType("Float", _parse_double, _format_double)
STRING_TYPE: OptionType[str] = OptionType("String", _parse_string, str)
DURATION_TYPE: OptionType[int] = OptionType("Duration", _parse_duration_ms, format_duration)
MEMORY_TYPE: OptionType[int] = OptionType("MemorySize", _parse_memory_bytes, format_memory_size)
LIST_TYPE: OptionType[list[str]] = OptionType("List", _parse_list, _format_list)
MAP_TYPE: OptionType[dict[str, str]] = OptionType("Map", _parse_map, _format_map, is_map=True)


def enum_option_type(enum_class: type[E]) -> OptionType[E]:
    """The option type of a Python enum whose member values are Paimon's value strings (matched case-insensitively)."""
    members = list(enum_class)
    by_upper = {str(member.value).upper(): member for member in members}
    choices = tuple(str(member.value) for member in members)

    def parse(text: str) -> E:
        member = by_upper.get(text.upper())
        if member is None:
            raise _BadValue("one of " + ", ".join(f"'{choice}'" for choice in choices))
        return member

    def format_member(member: E) -> str:
        return str(member.value)

    return OptionType("Enum", parse, format_member, choices=choices)


# ---------------------------------------------------------------------------------------------------------------------
# ConfigOption and its builder
# ---------------------------------------------------------------------------------------------------------------------


