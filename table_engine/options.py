"""Typed configuration options: the generic machinery behind :mod:`table_engine.core_options`.

An option is declared once, fluently, with its exact Paimon key, its type, its default and a description::

    BUCKET = key("bucket").int_type().default_value(-1).with_description("Number of buckets.")
    COMMIT_TIMEOUT = key("commit.timeout").duration_type().no_default_value()

``default_value(v)`` gives a ``ConfigOption[T]``; ``no_default_value()`` gives a ``ConfigOption[T | None]``, so a
lookup is typed ``int`` or ``int | None`` accordingly. Values are always stored as the strings Paimon writes into the
table schema; they are parsed on read with Paimon's syntax:

* integers/longs: ``Integer.parseInt`` / ``Long.parseLong`` syntax and range; booleans: ``true``/``false`` in any case;
* durations (``TimeUtils.parseDuration``): ``<digits>[ ]<unit>`` with units ``d``/``day(s)``, ``h``/``hour(s)``,
  ``m``/``min``/``minute(s)``, ``s``/``sec(s)``/``second(s)``, ``ms``/``milli(s)``/``millisecond(s)``,
  ``µs``/``micro(s)``/``microsecond(s)``, ``ns``/``nano(s)``/``nanosecond(s)``; no unit means milliseconds.
  Parsed to **integer milliseconds** (sub-millisecond parts are truncated, like ``Duration.toMillis``);
* memory sizes (``MemorySize.parse``): ``<digits>[ ]<unit>`` with units ``b``/``bytes``, ``k``/``kb``/``kibibytes``,
  ``m``/``mb``/``mebibytes``, ``g``/``gb``/``gibibytes``, ``t``/``tb``/``tebibytes`` (any case, powers of 1024); no
  unit means bytes. Parsed to **integer bytes**;
* enums: the Paimon value string, compared case-insensitively;
* lists: comma-separated strings, items trimmed; maps: ``k1:v1,k2:v2`` (or the prefix form ``<key>.k1 = v1``).

Every parsing or validation failure raises :class:`~table_engine.errors.OptionError` naming the key, the bad value and
what was expected.
"""

from __future__ import annotations

import copy
import difflib
import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar, cast, overload

from table_engine.errors import OptionError

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "LONG_MAX",
    "LONG_MIN",
    "ConfigOption",
    "OptionAccessor",
    "OptionBuilder",
    "OptionRegistry",
    "OptionSection",
    "OptionType",
    "PatternOption",
    "TypedOptionBuilder",
    "accessor",
    "format_duration",
    "format_memory_size",
    "key",
    "parse_bool",
    "parse_duration",
    "parse_memory_size",
]

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


def _always_valid(_value: Any) -> bool:
    return True


@dataclass(frozen=True, eq=False)
class ConfigOption(Generic[T]):
    """One typed option: its Paimon key, type, default, description and optional fallback keys and validator.

    Instances are immutable; the ``with_*`` methods return modified copies. ``T`` includes ``None`` for options
    declared with ``no_default_value()``.
    """

    key: str
    option_type: OptionType[Any]
    default: T
    has_default: bool
    description: str = ""
    fallback_keys: tuple[str, ...] = ()
    validator: Callable[[Any], bool] = _always_valid
    validator_expectation: str = ""

    # -- builder-style modifiers ---------------------------------------------------------------------------------------

    def with_description(self, description: str) -> ConfigOption[T]:
        """Return a copy with ``description`` (one or two factual sentences)."""
        return replace(self, description=description)

    def with_fallback_keys(self, *fallback_keys: str) -> ConfigOption[T]:
        """Return a copy that also reads deprecated/alternative keys, in order, when the key itself is absent."""
        return replace(self, fallback_keys=self.fallback_keys + tuple(fallback_keys))

    def with_validator(self, check: Callable[[Any], bool], expectation: str) -> ConfigOption[T]:
        """Return a copy whose parsed (non-null) values must satisfy ``check``; ``expectation`` describes valid ones."""
        return replace(self, validator=check, validator_expectation=expectation)

    # -- introspection -------------------------------------------------------------------------------------------------

    @property
    def keys(self) -> tuple[str, ...]:
        """The key followed by the fallback keys."""
        return (self.key, *self.fallback_keys)

    @property
    def type_name(self) -> str:
        """The documented type name (``Integer``, ``Duration``, ``Enum``...)."""
        return self.option_type.name

    @property
    def choices(self) -> tuple[str, ...]:
        """The accepted values of an enum option; empty for other types."""
        return self.option_type.choices

    def default_text(self) -> str:
        """The default in Paimon syntax, or ``(none)`` when the option has no default."""
        if not self.has_default:
            return "(none)"
        return self.format_value(self.default)

    def format_value(self, value: T) -> str:
        """Format a value of this option in the string form that :meth:`parse` accepts."""
        if value is None:
            return ""
        return self.option_type.format(value)

    # -- parsing and lookup --------------------------------------------------------------------------------------------

    def parse(self, text: str, *, key: str | None = None) -> T:
        """Parse and validate a raw string value; ``key`` (default: this option's key) is named in errors."""
        shown_key = self.key if key is None else key
        try:
            value = self.option_type.parse(text)
        except ValueError as exc:
            raise OptionError(f"Invalid value '{text}' for option '{shown_key}': expected {exc}.") from None
        if not self.validator(value):
            raise OptionError(
                f"Invalid value '{text}' for option '{shown_key}': expected {self.validator_expectation}."
            )
        return cast(T, value)

    def find_key(self, raw: Mapping[str, str]) -> str | None:
        """The first of :attr:`keys` present in ``raw`` (map options: or its prefix form), else None."""
        for candidate in self.keys:
            if candidate in raw:
                return candidate
        if self.option_type.is_map:
            for candidate in self.keys:
                prefix = candidate + "."
                if any(name.startswith(prefix) for name in raw):
                    return candidate
        return None

    def is_set(self, raw: Mapping[str, str]) -> bool:
        """Whether ``raw`` sets this option (under its key or a fallback key)."""
        return self.find_key(raw) is not None

    def value_from(self, raw: Mapping[str, str]) -> T:
        """The parsed value from ``raw`` (key first, then fallback keys), else the default."""
        found = self.find_key(raw)
        if found is None:
            return copy.copy(self.default)
        if found in raw:
            return self.parse(raw[found], key=found)
        # Prefix form of a map option: "<key>.<map-key>" = "<map-value>".
        prefix = found + "."
        merged = {name[len(prefix) :]: value for name, value in raw.items() if name.startswith(prefix)}
        value = cast(T, merged)
        if not self.validator(value):
            shown = ",".join(f"{prefix}{k}={v}" for k, v in merged.items())
            raise OptionError(f"Invalid value '{shown}' for option '{found}': expected {self.validator_expectation}.")
        return value

    def __repr__(self) -> str:
        return f"ConfigOption(key={self.key!r}, type={self.type_name}, default={self.default_text()!r})"


class TypedOptionBuilder(Generic[T]):
    """Second builder step: the type is known; choose the default."""

    def __init__(self, name: str, option_type: OptionType[T]) -> None:
        self._name = name
        self._type = option_type

    def default_value(self, value: T) -> ConfigOption[T]:
        """Finish the option with a default; lookups are typed ``T``."""
        return ConfigOption(key=self._name, option_type=self._type, default=value, has_default=True)

    def no_default_value(self) -> ConfigOption[T | None]:
        """Finish the option without a default; lookups are typed ``T | None``."""
        return ConfigOption(key=self._name, option_type=self._type, default=None, has_default=False)


class OptionBuilder:
    """First builder step, returned by :func:`key`: choose the value type."""

    def __init__(self, name: str) -> None:
        if not name or name != name.strip():
            raise ValueError(f"Invalid option key {name!r}")
        self._name = name

    def int_type(self) -> TypedOptionBuilder[int]:
        """32-bit signed integer (Java ``Integer``)."""
        return TypedOptionBuilder(self._name, INT_TYPE)

    def long_type(self) -> TypedOptionBuilder[int]:
        """64-bit signed integer (Java ``Long``)."""
        return TypedOptionBuilder(self._name, LONG_TYPE)

    def bool_type(self) -> TypedOptionBuilder[bool]:
        """Boolean: ``true``/``false``, case-insensitive."""
        return TypedOptionBuilder(self._name, BOOLEAN_TYPE)

    def double_type(self) -> TypedOptionBuilder[float]:
        """Double-precision number."""
        return TypedOptionBuilder(self._name, DOUBLE_TYPE)

    def float_type(self) -> TypedOptionBuilder[float]:
        """Number documented as Java ``Float`` (parsed as a Python float)."""
        return TypedOptionBuilder(self._name, FLOAT_TYPE)

    def string_type(self) -> TypedOptionBuilder[str]:
        """Free-form string."""
        return TypedOptionBuilder(self._name, STRING_TYPE)

    def enum_type(self, enum_class: type[E]) -> TypedOptionBuilder[E]:
        """One value of ``enum_class``, whose member values are Paimon's strings."""
        return TypedOptionBuilder(self._name, enum_option_type(enum_class))

    def duration_type(self) -> TypedOptionBuilder[int]:
        """Duration in Paimon syntax, as integer milliseconds."""
        return TypedOptionBuilder(self._name, DURATION_TYPE)

    def memory_type(self) -> TypedOptionBuilder[int]:
        """Memory size in Paimon syntax, as integer bytes."""
        return TypedOptionBuilder(self._name, MEMORY_TYPE)

    def list_type(self) -> TypedOptionBuilder[list[str]]:
        """Comma-separated list of names (items trimmed; an empty string is the empty list)."""
        return TypedOptionBuilder(self._name, LIST_TYPE)

    def map_type(self) -> TypedOptionBuilder[dict[str, str]]:
        """``k1:v1,k2:v2`` map (also settable as ``<key>.k1 = v1``)."""
        return TypedOptionBuilder(self._name, MAP_TYPE)


def key(name: str) -> OptionBuilder:
    """Start declaring the option with Paimon key ``name``: ``key("bucket").int_type().default_value(-1)``."""
    return OptionBuilder(name)


# ---------------------------------------------------------------------------------------------------------------------
# Typed accessors
# ---------------------------------------------------------------------------------------------------------------------


class SupportsOptionLookup(Protocol):
    """An options holder that resolves a ConfigOption to its typed value."""

    def get(self, option: ConfigOption[V]) -> V: ...


class OptionAccessor(Generic[T]):
    """Descriptor that turns an option into a typed zero-argument accessor method.

    ``bucket = accessor(BUCKET)`` in a class with a ``get(option)`` method makes ``opts.bucket()`` return
    ``opts.get(BUCKET)``, typed ``int``.
    """

    def __init__(self, option: ConfigOption[T]) -> None:
        self.option = option

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> OptionAccessor[T]: ...

    @overload
    def __get__(self, instance: SupportsOptionLookup, owner: type[Any]) -> Callable[[], T]: ...

    def __get__(
        self, instance: SupportsOptionLookup | None, owner: type[Any]
    ) -> OptionAccessor[T] | Callable[[], T]:
        if instance is None:
            return self
        option = self.option

        def read() -> T:
            return instance.get(option)

        read.__name__ = option.key
        read.__doc__ = option.description
        return read


def accessor(option: ConfigOption[T]) -> OptionAccessor[T]:
    """Declare a typed accessor method for ``option`` (see :class:`OptionAccessor`)."""
    return OptionAccessor(option)


# ---------------------------------------------------------------------------------------------------------------------
# Registry: validation of raw option maps and generated documentation
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptionSection:
    """A titled group of options, rendered as one table in the generated documentation."""

    title: str
    options: tuple[ConfigOption[Any], ...]
    description: str = ""


@dataclass(frozen=True)
class PatternOption:
    """A family of keys matched by a regular expression, e.g. ``fields.<field>.aggregate-function``.

    ``template`` documents the family (its key is the displayed pattern) and parses/validates each value.
    ``check``, if given, sees the regex match and the whole raw map and returns an error message or None
    (e.g. to require that the column of ``file-index.<type>.<column>.<prop>`` was declared).
    """

    template: ConfigOption[Any]
    regex: re.Pattern[str]
    check: Callable[[re.Match[str], Mapping[str, str]], str | None] | None = None

    @property
    def pattern(self) -> str:
        """The documented key pattern."""
        return self.template.key


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


@dataclass
class OptionRegistry:
    """All options a table may carry: typed options by section, key patterns, and keys recognized for other engines.

    Keys in ``recognized`` (key -> who uses it) and keys starting with a ``recognized_prefixes`` entry
    (prefix -> meaning) are accepted without interpretation. ``candidates`` may add pattern instantiations to the
    close-match suggestions for an unknown key.
    """

    sections: Sequence[OptionSection]
    patterns: Sequence[PatternOption] = ()
    recognized: Mapping[str, str] = field(default_factory=dict)
    recognized_prefixes: Mapping[str, str] = field(default_factory=dict)
    candidates: Callable[[str], Iterable[str]] | None = None

    def __post_init__(self) -> None:
        self._by_key: dict[str, ConfigOption[Any]] = {}
        for section in self.sections:
            for option in section.options:
                for name in option.keys:
                    if name in self._by_key:
                        raise ValueError(f"Option key {name!r} is registered twice")
                    self._by_key[name] = option
        self._map_options = [option for option in self._by_key.values() if option.option_type.is_map]

    def options(self) -> list[ConfigOption[Any]]:
        """Every registered option, in section order."""
        return [option for section in self.sections for option in section.options]

    def find(self, name: str) -> ConfigOption[Any] | None:
        """The option registered under ``name`` (as its key or a fallback key), else None."""
        return self._by_key.get(name)

    def known_keys(self) -> list[str]:
        """Registered keys, fallback keys and recognized keys, sorted."""
        return sorted(set(self._by_key) | set(self.recognized))

    def is_known(self, name: str) -> bool:
        """Whether ``name`` is a registered, pattern, prefix-map or recognized key."""
        return self._check_key(name, "", {}, check_value=False) is None

    def suggest(self, name: str) -> str | None:
        """The closest known key to ``name``, if any is close enough."""
        candidates = set(self.known_keys())
        if self.candidates is not None:
            candidates.update(self.candidates(name))
        matches = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
        return matches[0] if matches else None

    def validate(self, raw: Mapping[str, str]) -> None:
        """Raise one OptionError listing every unknown key (with a suggestion) and every unparseable value."""
        problems: list[str] = []
        for name in sorted(raw):
            problem = self._check_key(name, raw[name], raw, check_value=True)
            if problem is not None:
                problems.append(problem)
        for option in self._map_options:
            found = option.find_key(raw)
            if found is not None and found not in raw:
                try:
                    option.value_from(raw)
                except OptionError as exc:
                    problems.append(str(exc))
        if len(problems) == 1:
            raise OptionError(problems[0])
        if problems:
            raise OptionError(f"{len(problems)} invalid table options:\n  " + "\n  ".join(problems))

    def _check_key(self, name: str, value: str, raw: Mapping[str, str], *, check_value: bool) -> str | None:
        option = self._by_key.get(name)
        if option is not None:
            return self._check_value(option, name, value) if check_value else None
        for map_option in self._map_options:
            if any(name.startswith(prefix + ".") and len(name) > len(prefix) + 1 for prefix in map_option.keys):
                return None  # prefix form of a map option; the merged map is validated in validate()
        for pattern in self.patterns:
            match = pattern.regex.fullmatch(name)
            if match is None:
                continue
            if not check_value:
                return None
            problem = self._check_value(pattern.template, name, value)
            if problem is None and pattern.check is not None:
                problem = pattern.check(match, raw)
            return problem
        if name in self.recognized:
            return None
        if any(name.startswith(prefix) and len(name) > len(prefix) for prefix in self.recognized_prefixes):
            return None
        suggestion = self.suggest(name)
        hint = f" Did you mean '{suggestion}'?" if suggestion else ""
        return f"Unknown table option '{name}'.{hint}"

    @staticmethod
    def _check_value(option: ConfigOption[Any], name: str, value: str) -> str | None:
        try:
            option.parse(value, key=name)
        except OptionError as exc:
            return str(exc)
        return None

    # -- documentation -------------------------------------------------------------------------------------------------

    def render_markdown(
        self,
        title: str,
        preamble: str,
        annotate: Callable[[ConfigOption[Any]], str] | None = None,
    ) -> str:
        """Render every section, the key patterns and the recognized keys as Markdown tables.

        ``annotate`` may append a note (e.g. "Immutable.") to an option's description.
        """
        lines = [f"# {title}", "", preamble.strip(), "", "## Contents", ""]
        headings = [section.title for section in self.sections] + ["Key patterns", "Options of other components"]
        lines += [f"- [{heading}](#{_anchor(heading)})" for heading in headings]
        lines.append("")
        for section in self.sections:
            lines += [f"## {section.title}", ""]
            if section.description:
                lines += [section.description, ""]
            lines += ["| Key | Type | Default | Description |", "|---|---|---|---|"]
            for option in section.options:
                lines.append(self._option_row(option.key, option, annotate))
            lines.append("")
        if self.patterns:
            lines += [
                "## Key patterns",
                "",
                "Keys matching these patterns are accepted; `<field>` is a column name (for `sequence-group` a",
                "comma-separated list of columns), `<type>` a file index type and `<column>` an indexed column.",
                "",
                "| Pattern | Type | Default | Description |",
                "|---|---|---|---|",
            ]
            lines += [self._option_row(p.pattern, p.template, None) for p in self.patterns]
            lines.append("")
        lines += [
            "## Options of other components",
            "",
            "These keys are accepted in table options for interoperability with other Paimon components; the table",
            "engine does not interpret them.",
            "",
        ]
        if self.recognized_prefixes:
            lines += ["| Key prefix | Meaning |", "|---|---|"]
            for prefix, meaning in self.recognized_prefixes.items():
                lines.append(f"| `{prefix}*` | {_markdown_cell(meaning)} |")
            lines.append("")
        by_origin: dict[str, list[str]] = {}
        for name, origin in self.recognized.items():
            by_origin.setdefault(origin, []).append(name)
        if by_origin:
            lines += ["| Used by | Keys |", "|---|---|"]
            for origin in sorted(by_origin):
                names = ", ".join(f"`{name}`" for name in sorted(by_origin[origin]))
                lines.append(f"| {_markdown_cell(origin)} | {names} |")
            lines.append("")
        return "\n".join(lines)

    @staticmethod
    def _option_row(
        shown_key: str, option: ConfigOption[Any], annotate: Callable[[ConfigOption[Any]], str] | None
    ) -> str:
        description = option.description
        if option.choices:
            description += " Values: " + ", ".join(f"`{choice}`" for choice in option.choices) + "."
        if option.fallback_keys:
            description += " Fallback keys: " + ", ".join(f"`{name}`" for name in option.fallback_keys) + "."
        if annotate is not None:
            note = annotate(option)
            if note:
                description += " " + note
        default = option.default_text()
        default_cell = default if default == "(none)" else _code(default) or '`""`'
        return (
            f"| `{shown_key}` | {option.type_name} | {_markdown_cell(default_cell)} | "
            f"{_markdown_cell(description.strip())} |"
        )


def _anchor(heading: str) -> str:
    """GitHub-style anchor of a Markdown heading."""
    slug = re.sub(r"[^\w\- ]", "", heading.lower()).strip()
    return slug.replace(" ", "-")
