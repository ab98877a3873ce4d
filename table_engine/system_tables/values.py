"""Paimon's text forms of the values in metadata tables: local wall-clock times (Java ``LocalDateTime``), partitions
``{v1, v2}`` or ``k1=v1/k2=v2``, keys ``[v1, v2]``, per-column stats ``{col=value, ...}`` sorted by column and
durations in ISO-8601 (``PT24H``), each value as Java's ``toString`` writes it."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.io.paths import partition_value_string

if TYPE_CHECKING:
    from table_engine.table import Table


def local_time(ms: int | None) -> datetime.datetime | None:
    """Epoch milliseconds as a local wall-clock time (None stays None)."""
    return None if ms is None else datetime.datetime.fromtimestamp(ms / 1000)


class PartitionFormat:
    """The partitions of one table as text: :meth:`braces` (``{v1, v2}``) or :meth:`path` (``k1=v1/k2=v2``)."""

    def __init__(self, t: Table) -> None:
        self.keys = list(t.schema.partition_keys)
        self.types = [f.type for f in t.schema.partition_fields()]
        self.default = t.options.partition_default_name()

    def values(self, part: bytes) -> list[Any]:
        return decode_row(part, self.types) if self.types else []

    def braces(self, part: bytes) -> str:
        return "{" + ", ".join(java_str(v) for v in self.values(part)) + "}"

    def braces_safe(self, part: bytes) -> str | None:
        try:
            return self.braces(part)
        except Exception:
            return None

    def path(self, part: bytes) -> str:
        return "/".join(f"{k}={partition_value_string(v, t, self.default)}"
                        for k, v, t in zip(self.keys, self.values(part), self.types))


def java_str(v: Any) -> str:
    """``v`` as Java's ``toString`` writes it (``null``, ``true``; bytes as hex)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, bytes):
        return v.hex()
    return str(v)


def key_text(key: bytes, schema: Any) -> str | None:
    """A file's min or max key as ``[v1, v2]`` (None: no primary key, or a key that does not decode)."""
    fields = schema.key_fields() if schema.primary_keys else []
    if not fields:
        return None
    try:
        return "[" + ", ".join(java_str(v) for v in decode_row(key, [f.type for f in fields])) + "]"
    except Exception:
        return None


def value_stats(t: Table, f: DataFileMeta) -> tuple[str, str, str]:
    """``{col=..}`` strings of null counts, min and max values for the current columns (null: no stats)."""
    current = {fld.id: fld.name for fld in t.schema.fields}
    fs = t.store.schema_by_id(f.schema_id)
    cols = list(fs.fields) if f.value_stats_cols is None else [fs.field(c) for c in f.value_stats_cols
                                                                   if c in fs.field_names()]
    nulls: dict[str, Any] = dict.fromkeys(current.values())
    lows: dict[str, Any] = dict.fromkeys(current.values())
    highs: dict[str, Any] = dict.fromkeys(current.values())
    vs = f.value_stats
    if cols and vs.null_counts:
        try:
            lo = decode_row(vs.min_values, [c.type for c in cols])
            hi = decode_row(vs.max_values, [c.type for c in cols])
        except Exception:
            lo = hi = [None] * len(cols)
        for i, c in enumerate(cols):
            name = current.get(c.id)
            if name is not None and i < len(vs.null_counts):
                nulls[name], lows[name], highs[name] = vs.null_counts[i], lo[i], hi[i]

    def render(d: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{k}={java_str(d[k])}" for k in sorted(d)) + "}"

    return render(nulls), render(lows), render(highs)


def iso_duration(ms: int) -> str:
    """Java ``Duration.toString()``: ``PT24H``, ``PT1H30M``, ``PT0.5S``."""
    if ms == 0:
        return "PT0S"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    out = "PT"
    if hours:
        out += f"{sign}{hours}H"
    if minutes:
        out += f"{sign}{minutes}M"
    if seconds or millis:
        frac = f".{millis:03d}".rstrip("0") if millis else ""
        out += f"{sign}{seconds}{frac}S"
    return out
