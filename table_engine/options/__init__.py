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

from table_engine.options.config_option import (
    ConfigOption,
    OptionAccessor,
    OptionBuilder,
    OptionSection,
    PatternOption,
    TypedOptionBuilder,
    accessor,
    key,
)
from table_engine.options.registry import OptionRegistry
from table_engine.options.values import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    OptionType,
    format_duration,
    format_memory_size,
    parse_bool,
    parse_duration,
    parse_memory_size,
)

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
