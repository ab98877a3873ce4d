"""Template coercions (paimon_provider.utils.arguments): partition specs, the one time parser, partition texts."""

from __future__ import annotations

import datetime
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paimon_provider.utils.arguments import as_time_millis, parse_partition_spec, partition_texts

from table_engine.clock import ManualClock, use_clock
from table_engine.store.partition_spec import format_partition_text, parse_partition_text
from tests.budget import examples


def test_argument_parsing() -> None:
    assert parse_partition_spec("dt=a, h=1") == {"dt": "a", "h": "1"}
    assert parse_partition_spec({"dt": "a"}) == {"dt": "a"}
    assert parse_partition_spec("") is None and parse_partition_spec(None) is None
    with pytest.raises(ValueError, match="k=v"):
        parse_partition_spec("dt")
    assert as_time_millis("1700000000000", "t") == 1700000000000
    assert as_time_millis("2026-11-20T00:00:00", "t") == 1795132800000
    assert as_time_millis(datetime.datetime(2026, 11, 20, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
                          "t") == 1795132800000
    assert as_time_millis("None", "t") is None and as_time_millis(None, "t") is None
    assert abs(as_time_millis(time.time() * 1000, "t") - time.time() * 1000) < 5000  # type: ignore[operator]


def test_one_time_parser_takes_what_both_former_parsers_took() -> None:
    # the sensors' former parser: numbers, negative digits, naive datetimes as UTC
    assert as_time_millis(1700000000000, "t") == 1700000000000 and as_time_millis("-5", "t") == -5
    assert as_time_millis(datetime.datetime(2026, 11, 20), "t") == 1795132800000
    # the operators' former parser: "<duration> ago", resolved now
    with use_clock(ManualClock(1_000_000_000)):
        assert as_time_millis("2 h ago", "older_than") == 1_000_000_000 - 2 * 3600 * 1000
    with pytest.raises(ValueError, match="^older_than: 'soon' is not epoch millis"):
        as_time_millis("soon", "older_than")
    with pytest.raises(ValueError, match="^newer_than: not a point in time: True"):
        as_time_millis(True, "newer_than")


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_VALUE = _TEXT | st.none() | st.integers() | st.booleans() | st.dates()


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.dictionaries(_TEXT.filter(bool), _VALUE, min_size=1, max_size=3), min_size=1, max_size=3))
def test_partition_texts_of_mappings_are_what_their_text_parses_back_to(specs: list[dict[str, object]]) -> None:
    assert partition_texts(specs) == [parse_partition_text(format_partition_text(s)) for s in specs]
    assert partition_texts(specs[0]) == [parse_partition_text(format_partition_text(specs[0]))]
