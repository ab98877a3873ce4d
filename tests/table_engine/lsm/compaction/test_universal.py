"""The universal picker on level metadata alone: each of Paimon's rules, output levels, full compaction."""

from __future__ import annotations

from datetime import datetime

from table_engine.lsm.compaction.universal import (
    CompactUnit,
    OffPeakHours,
    UniversalCompaction,
    pick_full_compaction,
)
from table_engine.lsm.levels import LevelSortedRun, SortedRun
from tests.table_engine.lsm._files import meta

NUM_LEVELS = 6  # max level 5
NOW = 10_000_000


def runs(*specs: tuple[int, int] | tuple[int, int, int]) -> list[LevelSortedRun]:
    """(level, size[, creation time]) per run, one file each; key ranges are disjoint and irrelevant here."""
    out = []
    for i, spec in enumerate(specs):
        level, size = spec[0], spec[1]
        created = spec[2] if len(spec) > 2 else None
        out.append(LevelSortedRun(level, SortedRun.of(meta(i * 10, i * 10 + 5, level=level, size=size,
                                                           created=created))))
    return out


def picked(unit: CompactUnit | None, rs: list[LevelSortedRun]) -> tuple[int, int] | None:
    """(output level, number of runs picked) of a unit whose files are a prefix of ``rs``."""
    if unit is None:
        return None
    files = [f for r in rs for f in r.run.files]
    assert list(unit.files) == files[: len(unit.files)], "a unit is always the newest runs"
    count = 0
    total = 0
    for r in rs:
        if total == len(unit.files):
            break
        total += len(r.run.files)
        count += 1
    return unit.output_level, count


PICKER = UniversalCompaction(max_size_amp=200, size_ratio=1, num_run_trigger=3)


def test_fewer_runs_than_trigger_pick_nothing() -> None:
    rs = runs((0, 1), (0, 1))
    assert PICKER.pick(NUM_LEVELS, rs, NOW) is None


def test_size_amplification_compacts_everything_to_the_max_level() -> None:
    rs = runs((0, 1), (0, 1), (0, 1), (5, 1))  # 3 bytes on top of 1: 300% > 200%
    assert picked(PICKER.pick(NUM_LEVELS, rs, NOW), rs) == (5, 4)
    rs = runs((0, 1), (0, 1), (5, 1))  # exactly 200%: not more
    assert PICKER.pick_for_size_amp(5, rs) is None
    assert PICKER.pick_for_size_amp(5, runs((0, 1), (5, 1))) is None  # below the trigger


def test_size_ratio_adds_runs_while_the_candidates_are_large_enough() -> None:
    rs = runs((0, 1), (0, 1), (0, 1), (5, 100))
    # 1 -> +1 (1 * 1.01 >= 1) -> +1 -> 3 * 1.01 < 100 and level 5 > 1: stop; output = 5 - 1
    assert picked(PICKER.pick(NUM_LEVELS, rs, NOW), rs) == (4, 3)
    # the newest run alone is too small for the next one: no size-ratio unit
    rs = runs((0, 1), (0, 10), (0, 100), (5, 10_000))
    assert PICKER.pick_for_size_ratio(5, rs, NOW) is None


def test_size_ratio_percent_flexibility() -> None:
    rs = runs((0, 100), (0, 101), (0, 1000), (5, 100_000))
    unit = PICKER.pick_for_size_ratio(5, rs, NOW)
    # 100 * 1.01 = 101 >= 101: added; then 201 * 1.01 < 1000 at level 0: added anyway (triggered, level <= 1)
    assert picked(unit, rs) == (4, 3)
    strict = UniversalCompaction(max_size_amp=200, size_ratio=0, num_run_trigger=3)
    assert strict.pick_for_size_ratio(5, rs, NOW) is None  # 100 < 101


def test_file_number_picks_the_excess_runs_and_extends_by_size_ratio() -> None:
    rs = runs((0, 1), (0, 10), (0, 100), (5, 1000))
    # no size-amp (111 vs 1000), no size ratio (1 < 10); 4 runs > 3: the 2 newest, extended by the level-0 run
    assert picked(PICKER.pick(NUM_LEVELS, rs, NOW), rs) == (4, 3)
    rs = runs((0, 1), (0, 10), (3, 100), (5, 1000))
    # 11 * 1.01 < 100 at level 3: stop after the 2 excess runs; output = level of the next run - 1
    assert picked(PICKER.pick(NUM_LEVELS, rs, NOW), rs) == (2, 2)


def test_output_level_is_never_0() -> None:
    rs = runs((0, 1), (0, 1), (1, 50), (3, 100))
    assert picked(PICKER.create_unit(rs, 5, 2), rs) == (1, 3)  # absorbs the level-1 run, outputs to level 1
    rs = runs((0, 1), (0, 1), (0, 1))
    assert picked(PICKER.create_unit(rs, 5, 1), rs) == (5, 3)  # absorbs everything: the max level
    rs = runs((0, 1), (2, 1), (4, 1))
    assert picked(PICKER.create_unit(rs, 5, 1), rs) == (1, 1)
    assert picked(PICKER.create_unit(rs, 5, 3), rs) == (5, 3)


def test_early_full_compaction_by_optimization_interval() -> None:
    p = UniversalCompaction(200, 1, 5, optimization_interval_ms=1000)
    rs = runs((0, 1), (5, 100, NOW - 5000))
    assert picked(p.pick(NUM_LEVELS, rs, NOW), rs) == (5, 2)  # last full compaction 5 s ago
    rs = runs((0, 1), (5, 100, NOW - 500))
    assert p.pick(NUM_LEVELS, rs, NOW) is None
    rs = runs((0, 1), (2, 100))  # never fully compacted
    assert picked(p.pick(NUM_LEVELS, rs, NOW), rs) == (5, 2)
    assert p.pick(NUM_LEVELS, runs((0, 1)), NOW) is None  # a single run


def test_early_full_compaction_by_size_thresholds() -> None:
    small = UniversalCompaction(200, 1, 5, total_size_threshold=100)
    rs = runs((0, 10), (5, 80))
    assert picked(small.pick(NUM_LEVELS, rs, NOW), rs) == (5, 2)
    assert small.pick(NUM_LEVELS, runs((0, 30), (5, 80)), NOW) is None
    incremental = UniversalCompaction(200, 1, 5, incremental_size_threshold=50)
    rs = runs((0, 30), (2, 30), (5, 1000))
    assert picked(incremental.pick(NUM_LEVELS, rs, NOW), rs) == (5, 3)
    assert incremental.pick(NUM_LEVELS, runs((0, 30), (5, 1000)), NOW) is None


def test_off_peak_hours_add_to_the_size_ratio() -> None:
    hours = OffPeakHours.create(22, 6, 60)
    assert hours is not None
    assert [hours.current_ratio(h) for h in (21, 22, 23, 0, 5, 6, 12)] == [0, 60, 60, 60, 60, 0, 0]
    assert OffPeakHours.create(-1, 6, 60) is None and OffPeakHours.create(3, 3, 60) is None
    p = UniversalCompaction(200, 1, 3, off_peak=hours)
    rs = runs((0, 100), (0, 150), (5, 100_000))
    at = {h: int(datetime(2024, 5, 1, h).timestamp() * 1000) for h in (12, 23)}
    assert p.pick_for_size_ratio(5, rs, at[12]) is None  # 101 < 150
    assert picked(p.pick_for_size_ratio(5, rs, at[23]), rs) == (4, 2)  # 161 >= 150


def test_forced_full_compaction() -> None:
    assert pick_full_compaction(NUM_LEVELS, []) is None
    rs = runs((0, 1), (3, 10))
    unit = pick_full_compaction(NUM_LEVELS, rs)
    assert unit is not None and (unit.output_level, len(unit.files), unit.file_rewrite) == (5, 2, False)
    top = [LevelSortedRun(5, SortedRun.of(meta(0, 5, level=5), meta(6, 9, level=5)))]
    assert pick_full_compaction(NUM_LEVELS, top) is None  # one sorted run at the max level already
    expired = top[0].run.files[1]
    unit = pick_full_compaction(NUM_LEVELS, top, needs_rewrite=lambda f: f is expired)
    assert unit == CompactUnit(5, (expired,), file_rewrite=True)
    unit = pick_full_compaction(NUM_LEVELS, top, force_rewrite_all=True)
    assert unit is not None and len(unit.files) == 2 and unit.file_rewrite
