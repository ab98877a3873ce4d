"""Paimon's ``ForceUpLevel0Compaction`` (pure): the universal picker, and when it picks nothing, level 0 is pushed up
anyway.

Lookup compaction (``deletion-vectors.enabled``; Paimon's ``lookup-compact`` = radical, the default) uses it so that
every compaction leaves no level-0 file behind: the forced unit is every level-0 run, extended by the size-ratio rule
(``UniversalCompaction.forcePickL0``); its output level follows the universal rules (never level 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from table_engine.lsm.compaction.universal import CompactUnit, UniversalCompaction
from table_engine.lsm.levels import LevelSortedRun

__all__ = ["force_pick_level0", "pick_force_up_level0"]


def force_pick_level0(picker: UniversalCompaction, num_levels: int, runs: Sequence[LevelSortedRun],
                      now_ms: int | None = None) -> CompactUnit | None:
    """Every leading level-0 run (and the following runs the size-ratio rule adds); None without level-0 runs."""
    count = 0
    for r in runs:
        if r.level > 0:
            break
        count += 1
    if count == 0:
        return None
    return picker.pick_size_ratio_from(num_levels - 1, runs, count, now_ms, force_pick=True)


def pick_force_up_level0(picker: UniversalCompaction, num_levels: int, runs: Sequence[LevelSortedRun],
                         now_ms: int | None = None) -> CompactUnit | None:
    """The universal pick, else :func:`force_pick_level0`."""
    unit = picker.pick(num_levels, runs, now_ms)
    return unit if unit is not None else force_pick_level0(picker, num_levels, runs, now_ms)
