"""The time of a partition from its values (Paimon's ``PartitionTimeExtractor``): ``partition.timestamp-pattern``
(``$dt``, ``$dt $hour:00:00``; default: the first partition value) gives a string, parsed with
``partition.timestamp-formatter`` (a Java ``DateTimeFormatter`` pattern; default ``yyyy-MM-dd[ HH:mm:ss[.S]]``).
Shared by partition expiry (:mod:`table_engine.store.lifecycle.partition_expire`) and the compaction that skips
expired partitions (:mod:`table_engine.store.compaction.select`)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from table_engine.errors import OptionError

__all__ = ["PartitionTimeExtractor", "java_formatter_regex"]

_DEFAULT_FORMAT = re.compile(
    r"(?P<y>\d{1,10})-(?P<M>\d{1,2})-(?P<d>\d{1,2})"
    r"(?: (?P<H>\d{1,2}):(?P<m>\d{1,2}):(?P<s>\d{1,2})(?:\.(?P<S>\d{1,9}))?)?")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


# ------------------------------------------------------------------------------------------------ time parsing


def java_formatter_regex(pattern: str) -> re.Pattern[str]:
    """A regex with named groups (y, M, d, H, h, k, K, m, s, S, a) parsing what ``DateTimeFormatter.ofPattern``
    parses for the supported letters; quoted text ``'...'`` and other characters are literals."""
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise OptionError(f"unterminated quote in timestamp formatter {pattern!r}")
            out.append(re.escape(pattern[i + 1:end] or "'"))
            i = end + 1
            continue
        if not c.isalpha():
            out.append(re.escape(c))
            i += 1
            continue
        n = 1
        while i + n < len(pattern) and pattern[i + n] == c:
            n += 1
        i += n
        group = {"u": "y", "y": "y", "M": "M", "L": "M"}.get(c, c)
        if group in seen:
            raise OptionError(f"timestamp formatter {pattern!r} repeats the field {c!r}")
        seen.add(group)
        if group == "y":
            out.append(r"(?P<yy>\d{2})" if n == 2 else rf"(?P<y>[+-]?\d{{{max(n, 1)},10}})")
        elif group == "M" and n >= 3:
            names = "|".join(m[:3] if n == 3 else m for m in _MONTHS)
            out.append(rf"(?P<Mname>{names})")
        elif group in ("M", "d", "H", "h", "k", "K", "m", "s"):
            out.append(rf"(?P<{group}>\d{{1,2}})" if n == 1 else rf"(?P<{group}>\d{{{n}}})")
        elif group == "S":
            out.append(rf"(?P<S>\d{{{n}}})")
        elif group == "a":
            out.append(r"(?P<a>AM|PM)")
        else:
            raise OptionError(f"timestamp formatter {pattern!r}: pattern letter {c!r} is not supported "
                              "(supported: y u M L d H h k K m s S a and literals)")
    return re.compile("".join(out))


def _to_datetime(m: re.Match[str]) -> datetime.datetime:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if "yy" in g:
        year = 2000 + int(g["yy"])
    elif "y" in g:
        year = int(g["y"])
    else:
        raise ValueError("no year")
    if "Mname" in g:
        month = next(i + 1 for i, name in enumerate(_MONTHS) if name.startswith(g["Mname"]))
    elif "M" in g:
        month = int(g["M"])
    else:
        raise ValueError("no month")
    if "d" not in g:
        raise ValueError("no day of month")
    hour = 0
    if "H" in g:
        hour = int(g["H"])
    elif "k" in g:
        hour = int(g["k"]) % 24
    elif ("h" in g or "K" in g) and "a" in g:
        hour = int(g.get("h", g.get("K", "0"))) % 12 + (12 if g["a"] == "PM" else 0)
    fraction = g.get("S", "")
    micros = int((fraction + "000000")[:6]) if fraction else 0
    return datetime.datetime(year, month, int(g["d"]), hour, int(g.get("m", 0)), int(g.get("s", 0)), micros)


@dataclass
class PartitionTimeExtractor:
    """Time of a partition from its values (``partition.timestamp-pattern`` + ``-formatter``)."""

    pattern: str | None = None
    formatter: str | None = None
    _regex: re.Pattern[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._regex = java_formatter_regex(self.formatter) if self.formatter else None

    def extract(self, keys: Sequence[str], values: Sequence[str]) -> datetime.datetime:
        """ValueError when the values do not form a timestamp."""
        text = values[0] if self.pattern is None else self.replace_pattern(keys, values)
        m = (self._regex or _DEFAULT_FORMAT).fullmatch(text)
        if m is None:
            raise ValueError(f"{text!r} does not match {self.formatter or 'yyyy-MM-dd[ HH:mm:ss]'}")
        return _to_datetime(m)

    def check_pattern(self, keys: Sequence[str]) -> None:
        """OptionError when the pattern refers (``$name``) to something that is not a partition column: no
        partition would ever match, and every one would be skipped with a warning."""
        if self.pattern is None:
            return
        for m in re.finditer(r"\$(\w+)", self.pattern):
            if not any(m.group(1).startswith(k) for k in keys):
                raise OptionError(f"partition.timestamp-pattern {self.pattern!r}: ${m.group(1)} is not a partition "
                                  f"column (partition columns: {list(keys)})")

    def replace_pattern(self, keys: Sequence[str], values: Sequence[str]) -> str:
        """Substitute ``$key`` by its value; longer keys win (``$dt1`` is not ``$dt`` + ``1``)."""
        assert self.pattern is not None
        order = sorted(range(len(keys)), key=lambda i: -len(keys[i]))
        out: list[str] = []
        i = 0
        p = self.pattern
        while i < len(p):
            if p[i] == "$" and i + 1 < len(p):
                hit = next((j for j in order if p.startswith(keys[j], i + 1)), None)
                if hit is not None:
                    out.append(values[hit])
                    i += 1 + len(keys[hit])
                    continue
            out.append(p[i])
            i += 1
        return "".join(out)
