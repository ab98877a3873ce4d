"""The live-Airflow benchmark's arithmetic (its run drives a whole ``make airflow``: ``make bench-tasks``, not the
test suite): task durations from the API's timestamps, medians that skip what was not measured."""

from __future__ import annotations

from benchmarks.bench_live_airflow import seconds, summary


def test_durations_and_summaries() -> None:
    assert seconds("2026-12-06T21:00:00.500000Z", "2026-12-06T21:00:02Z") == 1.5
    assert seconds(None, "2026-12-06T21:00:02Z") is None
    stats = summary([{"task": 1.0, "run": None}, {"task": 3.0, "run": 4.0}, {"task": 2.0, "run": 2.0}])
    assert stats == {"task": {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3},
                     "run": {"median": 3.0, "min": 2.0, "max": 4.0, "n": 2}}
    assert summary([]) == {}
