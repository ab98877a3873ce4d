"""Typed options: :class:`ConfigOption`, its fluent builder (:func:`key`), typed accessors, sections and key
patterns."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, cast, overload

from table_engine.errors import OptionError
from table_engine.options.values import (
    BOOLEAN_TYPE,
    DOUBLE_TYPE,
    DURATION_TYPE,
    FLOAT_TYPE,
    INT_TYPE,
    LIST_TYPE,
    LONG_TYPE,
    MAP_TYPE,
    MEMORY_TYPE,
    STRING_TYPE,
    E,
    OptionType,
    T,
    V,
    enum_option_type,
)


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


