"""ForceUpLevel0Compaction on level metadata alone: the universal pick first, else every level-0 run goes up."""

from __future__ import annotations

from table_engine.lsm.compaction.force_up import force_pick_level0, pick_force_up_level0
from table_engine.lsm.compaction.universal import UniversalCompaction
from tests.table_engine.lsm.compaction.test_universal import NOW, NUM_LEVELS, picked, runs

PICKER = UniversalCompaction(max_size_amp=200, size_ratio=1, num_run_trigger=5)


def test_universal_pick_wins() -> None:
    rs = runs((0, 100), (0, 100), (0, 100), (0, 100), (0, 100))
    assert picked(pick_force_up_level0(PICKER, NUM_LEVELS, rs, NOW), rs) == (5, 5)


def test_level0_is_forced_up_below_the_next_run() -> None:
    rs = runs((0, 10), (3, 1000), (5, 100_000))
    assert PICKER.pick(NUM_LEVELS, rs, NOW) is None
    assert picked(pick_force_up_level0(PICKER, NUM_LEVELS, rs, NOW), rs) == (2, 1)


def test_forced_unit_grows_by_size_ratio() -> None:
    rs = runs((0, 100), (0, 100), (2, 150), (5, 100_000))
    assert picked(force_pick_level0(PICKER, NUM_LEVELS, rs, NOW), rs) == (4, 3)


def test_only_level0_runs_go_to_the_max_level() -> None:
    rs = runs((0, 10))
    assert picked(pick_force_up_level0(PICKER, NUM_LEVELS, rs, NOW), rs) == (5, 1)


def test_nothing_without_level0() -> None:
    rs = runs((3, 10), (5, 1000))
    assert force_pick_level0(PICKER, NUM_LEVELS, rs, NOW) is None
    assert pick_force_up_level0(PICKER, NUM_LEVELS, rs, NOW) is None
