"""Template coercions: an operator's, sensor's or trigger's argument as the command (or check) needs it, from
what Python or a rendered template gives (``"True"``, ``"None"``, ``"7 d"``, ``"dt=2026-11-27"``, a datetime).

Each coercion is a ValueError naming the argument when the value does not fit. Importing this module loads nothing
of the engine (DAG files import it when parsed): the engine's parsers are imported where they are used.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["as_bool", "as_duration_millis", "as_optional_int", "as_optional_text", "as_time_arg", "as_time_millis",
           "parse_partition_spec", "partition_texts"]

_NONE_TEXTS = ("", "none", "null")
"""What a template renders for "no value" (``None`` renders as ``"None"``)."""


def as_bool(value: Any) -> bool:
    """A flag from Python or from rendered template text (``"True"``, ``"false"``, ``"1"``)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off", "", "none"):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return bool(value)


def as_optional_int(value: Any, name: str) -> int | None:
    """A templated integer argument: None for None, ``""``, ``"none"`` or ``"null"``; a ValueError naming ``name``
    for anything else that is not an integer."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NONE_TEXTS):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def as_optional_text(value: Any) -> str | None:
    """A templated text argument, stripped: None for None, ``""``, ``"none"`` or ``"null"``."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text.lower() in _NONE_TEXTS else text


def as_columns(value: Sequence[str] | str | None) -> tuple[str, ...]:
    """Names given as a list or as ``"a,b"`` text, stripped (blank ones dropped; text that renders "no value", e.g.
    ``"None"``, is none): columns, commit kinds."""
    if value is None or (isinstance(value, str) and as_optional_text(value) is None):
        return ()
    return tuple(c.strip() for c in (value.split(",") if isinstance(value, str) else value) if c and c.strip())


def as_time_arg(value: Any) -> str | None:
    """A point in time for the application: epoch milliseconds or an ISO-8601 timestamp (datetimes become ISO)."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return as_optional_text(value)


def as_time_millis(value: Any, name: str) -> int | None:
    """The provider's one time parser: a point in time as epoch milliseconds, from a datetime (naive: UTC), a number
    or digits (epoch milliseconds), ISO-8601 text (no offset: UTC) or ``'<duration> ago'`` (resolved now); None for
    None, ``""``, ``"none"`` or ``"null"``. A ValueError naming ``name`` for anything else."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{name}: not a point in time: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, datetime.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        return int(moment.timestamp() * 1000)
    text = as_optional_text(value)
    if text is None:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    import argparse

    from table_engine.ops.argv import parse_time_millis

    try:
        return parse_time_millis(text, name=name)
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"{name}: {e}") from None


def as_duration_millis(value: Any, name: str) -> int | None:
    """A duration in milliseconds from Paimon's form (``'7 d'``, ``'12 h'``; digits are milliseconds)."""
    from table_engine.options import parse_duration

    text = as_optional_text(value)
    return None if text is None else parse_duration(text, key=name)


def parse_partition_spec(value: Mapping[str, Any] | str | None) -> dict[str, Any] | None:
    """A partition spec from a mapping or ``k=v,k2=v2`` text (what Airflow params and templates give)."""
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    from table_engine import parse_partition_text

    return dict(parse_partition_text(str(value))) or None  # the engine's one text form (PartitionSpecError)


def partition_texts(partitions: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str | None) -> list[dict[str, str]]:
    """Partition specs as the command's ``{column: value text}`` dicts, from a mapping, a list of mappings, or
    ``k=v,k2=v2`` text (several separated by ``;``) (:mod:`table_engine.store.partition_spec`'s one text form).
    Text is parsed once; a mapping's values become their text directly (``value_text``, what parsing reads back)."""
    if isinstance(partitions, str) and partitions.strip().lower() in _NONE_TEXTS:
        return []  # an empty form field (rendered from None as "None")
    if partitions is None or partitions == []:
        return []
    # imported here: DAG files import this module and must not load pyarrow or the engine when parsed
    from table_engine import parse_partition_texts, value_text

    if isinstance(partitions, str):
        return parse_partition_texts(partitions)
    specs = [partitions] if isinstance(partitions, Mapping) else list(partitions)
    return [{str(column): value_text(value) for column, value in spec.items()} for spec in specs]
