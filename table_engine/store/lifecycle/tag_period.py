"""Periods and names of automatic tags (Paimon's ``TagPeriodHandler``).

A tag names the period it closes: with daily tags, the first snapshot at or after ``2024-01-02 00:00`` (plus
``tag.creation-delay``) is tagged ``2024-01-01``. Names per ``tag.creation-period`` / ``tag.period-formatter``:

=============  ================  ==================  =============================
period         with_dashes       without_dashes      without_dashes_and_spaces
=============  ================  ==================  =============================
daily          ``2024-01-01``    ``20240101``        ``20240101``
hourly         ``2024-01-01 10`` ``20240101 10``     ``2024010110``
two-hours      ``2024-01-01 10`` (always)
=============  ================  ==================  =============================

``tag.creation-period-duration`` overrides the period; its names are ``yyyyMMddHHmm``. Times are local wall-clock
times without zone (Java ``LocalDateTime``); period arithmetic treats them as UTC, as Paimon does.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from table_engine.core_enums import TagCreationPeriod, TagPeriodFormatter
from table_engine.core_options import CoreOptions
from table_engine.errors import OptionError

__all__ = ["TagPeriodHandler"]

_DAY_MS = 86_400_000
_HOUR_MS = 3_600_000
_EPOCH = datetime.datetime(1970, 1, 1)

# name regex and strftime-like renderer per layout
_LAYOUTS: dict[str, tuple[re.Pattern[str], str]] = {
    "day": (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), "{y:04d}-{m:02d}-{d:02d}"),
    "day_nodash": (re.compile(r"(\d{4})(\d{2})(\d{2})"), "{y:04d}{m:02d}{d:02d}"),
    "hour": (re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2})"), "{y:04d}-{m:02d}-{d:02d} {H:02d}"),
    "hour_nodash": (re.compile(r"(\d{4})(\d{2})(\d{2}) (\d{2})"), "{y:04d}{m:02d}{d:02d} {H:02d}"),
    "hour_compact": (re.compile(r"(\d{4})(\d{2})(\d{2})(\d{2})"), "{y:04d}{m:02d}{d:02d}{H:02d}"),
    "minute": (re.compile(r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})"), "{y:04d}{m:02d}{d:02d}{H:02d}{M:02d}"),
}


@dataclass(frozen=True)
class TagPeriodHandler:
    """Tag names and periods of ``tag.creation-period`` with ``tag.period-formatter``."""

    period_ms: int
    layout: str
    daily: bool = False

    @staticmethod
    def from_options(opts: CoreOptions) -> TagPeriodHandler:
        duration = opts.tag_period_duration()
        if duration is not None:
            if duration <= 0:
                raise OptionError(f"tag.creation-period-duration must be positive, got {duration} ms")
            return TagPeriodHandler(duration, "minute")
        period = opts.tag_creation_period()
        fmt = opts.tag_period_formatter()
        if period is TagCreationPeriod.DAILY:
            return TagPeriodHandler(_DAY_MS, "day" if fmt is TagPeriodFormatter.WITH_DASHES else "day_nodash",
                                    daily=True)
        if period is TagCreationPeriod.HOURLY:
            layout = {TagPeriodFormatter.WITH_DASHES: "hour", TagPeriodFormatter.WITHOUT_DASHES: "hour_nodash",
                      TagPeriodFormatter.WITHOUT_DASHES_AND_SPACES: "hour_compact"}[fmt]
            return TagPeriodHandler(_HOUR_MS, layout)
        return TagPeriodHandler(2 * _HOUR_MS, "hour")

    def validate_delay(self, delay_ms: int) -> None:
        if not 0 <= delay_ms < self.period_ms:
            raise OptionError(f"tag.creation-delay ({delay_ms} ms) must be shorter than the tag period "
                              f"({self.period_ms} ms)")

    def tag_to_time(self, name: str) -> datetime.datetime:
        """The period start a tag name stands for; ValueError if it is not an automatic tag name."""
        if self.daily:
            name = name.split(" ")[0]
        pattern, _ = _LAYOUTS[self.layout]
        m = pattern.fullmatch(name)
        if not m:
            raise ValueError(f"{name!r} is not an automatic tag name")
        parts = [int(g) for g in m.groups()] + [0, 0]
        return datetime.datetime(parts[0], parts[1], parts[2], parts[3], parts[4])

    def time_to_tag(self, t: datetime.datetime) -> str:
        _, fmt = _LAYOUTS[self.layout]
        return fmt.format(y=t.year, m=t.month, d=t.day, H=t.hour, M=t.minute)

    def normalize_to_previous_tag(self, t: datetime.datetime) -> datetime.datetime:
        """The start of the period before the one ``t`` falls in: the tag a snapshot at ``t`` closes."""
        ms = (t - _EPOCH) // datetime.timedelta(milliseconds=1)
        floored = (ms // self.period_ms) * self.period_ms
        return _EPOCH + datetime.timedelta(milliseconds=floored - self.period_ms)

    def next_tag_time(self, t: datetime.datetime) -> datetime.datetime:
        return t + datetime.timedelta(milliseconds=self.period_ms)

    def is_auto_tag(self, name: str) -> bool:
        try:
            self.tag_to_time(name)
            return True
        except ValueError:
            return False
