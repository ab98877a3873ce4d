"""The table page's small formatters: a long commit user cut in the middle (whole in its tooltip), one timestamp
form for tags and branches, one colour per series on every chart."""

from __future__ import annotations

import datetime

from paimon_provider.plugins import render
from paimon_provider.plugins.table_view import local_time


def test_a_long_value_is_cut_in_the_middle_with_the_whole_as_tooltip() -> None:
    user = "airflow:paimon_lake_dwd:manual__2026-12-06T17:12:05.056014+00:00:apply_ods_changes:-1:" + "x" * 60
    cell = render.shortened(user)
    assert cell.startswith("<span title='airflow:paimon_lake_dwd:manual__2026-12-06T17:12:05.056014+00:00:")
    shown = cell[cell.index(">") + 1:-len("</span>")]
    assert len(shown) <= render.SHORT_TEXT and "\u2026" in shown and shown.endswith("x" * 12)
    assert render.shortened("etl") == "etl" and render.shortened(None) == "\u2014"
    assert render.shortened("<b>" * 20).count("<b>") == 0  # escaped, tooltip too


def test_tags_and_branches_show_one_timestamp_form() -> None:
    assert local_time("2026-12-06T17:12:05.056") == "2026-12-06 17:12:05"
    assert local_time(datetime.datetime(2026, 12, 6, 17, 12, 5, 56000)) == "2026-12-06 17:12:05"
    assert local_time(None) is None and local_time("not a time") == "not a time"


def test_a_series_has_one_colour_on_every_chart() -> None:
    levels = render.series_colours(["files"])
    buckets = render.series_colours(["level 0", "higher levels", "postpone"])
    rate = render.series_colours(["APPEND", "COMPACT", "SOMETHING_NEW"])
    assert levels[0] not in buckets  # "files" is not drawn in the colour of "level 0"
    assert render.series_colours(["level 0"]) == buckets[:1] and len(set(buckets + rate + levels)) == 7
