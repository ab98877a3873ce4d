"""Paimon's universal compaction picker (RocksDB universal compaction), a pure function of level metadata.

``UniversalCompaction.pick(num_levels, runs)`` takes the sorted runs of one bucket (``Levels.sorted_runs()``: level-0
files newest first, then levels 1..max) and tries, in order:

0. early full compaction (only when one of ``compaction.optimization-interval``, ``compaction.total-size-threshold``,
   ``compaction.incremental-size-threshold`` is set, and there is more than one run): the interval has passed since
   the last full compaction, the total size is below the threshold, or the size outside the max level is above it;
1. size amplification (with at least ``trigger`` runs): all runs but the oldest are larger than
   ``max-size-amplification-percent`` of the oldest run -> every run to the max level;
2. size ratio (with at least ``trigger`` runs): starting from the newest run, add the next run while the candidates'
   size times ``(100 + size-ratio + off-peak ratio) / 100`` is at least the next run's size (past the first added run,
   runs of level 0 and 1 are always added); a unit needs two runs or more;
3. file number (more than ``trigger`` runs): the ``runs - trigger + 1`` newest runs, extended by the size-ratio rule.

Output level: the max level if every run is picked, else the level of the first run not picked minus one; level 0 is
never an output: following runs are absorbed up to the first run above level 0, whose level is used (the max level
if that absorbs every run).

Paimon keeps "the time of the last full compaction" as writer state, starting from the newest creation time of the
files at the max level; here it is always derived that way from the runs, so the picker stays stateless.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from table_engine import clock
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.levels import LevelSortedRun


@dataclass(frozen=True)
class CompactUnit:
    """Files to compact into ``output_level``; ``file_rewrite`` rewrites each file on its own (no merging)."""

    output_level: int
    files: tuple[DataFileMeta, ...]
    file_rewrite: bool = False

    @staticmethod
    def from_runs(output_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit:
        return CompactUnit(output_level, tuple(f for r in runs for f in r.run.files))


@dataclass(frozen=True)
class OffPeakHours:
    """``compaction.offpeak.start.hour`` / ``.end.hour`` (``[start, end)``, may wrap midnight) and its extra ratio."""

    start_hour: int
    end_hour: int
    ratio: int

    @staticmethod
    def create(start_hour: int, end_hour: int, ratio: int) -> OffPeakHours | None:
        if start_hour == -1 or end_hour == -1 or start_hour == end_hour:
            return None
        return OffPeakHours(start_hour, end_hour, ratio)

    def current_ratio(self, hour: int) -> int:
        if self.start_hour <= self.end_hour:
            off_peak = self.start_hour <= hour < self.end_hour
        else:
            off_peak = hour < self.end_hour or self.start_hour <= hour
        return self.ratio if off_peak else 0


def _now_ms() -> int:
    return clock.now_millis()


@dataclass(frozen=True)
class UniversalCompaction:
    """The picker. Sizes are file sizes in bytes; times are epoch milliseconds."""

    max_size_amp: int
    size_ratio: int
    num_run_trigger: int
    optimization_interval_ms: int | None = None
    total_size_threshold: int | None = None
    incremental_size_threshold: int | None = None
    off_peak: OffPeakHours | None = None
    clock: Callable[[], int] = field(default=_now_ms, compare=False)

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun], now_ms: int | None = None) -> CompactUnit | None:
        now = self.clock() if now_ms is None else now_ms
        max_level = num_levels - 1
        unit = self._early_full(max_level, runs, now)  # 0
        if unit is None:
            unit = self.pick_for_size_amp(max_level, runs)  # 1
        if unit is None:
            unit = self.pick_for_size_ratio(max_level, runs, now)  # 2
        if unit is None and len(runs) > self.num_run_trigger:  # 3
            unit = self.pick_size_ratio_from(max_level, runs, len(runs) - self.num_run_trigger + 1, now)
        return unit

    # ---- the rules ---------------------------------------------------------------------------------------------
    def _early_full(self, max_level: int, runs: Sequence[LevelSortedRun], now: int) -> CompactUnit | None:
        if len(runs) <= 1:
            return None
        if self.optimization_interval_ms is not None:
            last = last_full_compaction_ms(max_level, runs)
            if last is None or now - last > self.optimization_interval_ms:
                return CompactUnit.from_runs(max_level, runs)
        if self.total_size_threshold is not None:
            if sum(r.run.total_size for r in runs) < self.total_size_threshold:
                return CompactUnit.from_runs(max_level, runs)
        if self.incremental_size_threshold is not None:
            if sum(r.run.total_size for r in runs if r.level != max_level) > self.incremental_size_threshold:
                return CompactUnit.from_runs(max_level, runs)
        return None

    def pick_for_size_amp(self, max_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        if len(runs) < self.num_run_trigger:
            return None
        candidate_size = sum(r.run.total_size for r in runs[:-1])
        earliest_size = runs[-1].run.total_size
        if candidate_size * 100 > self.max_size_amp * earliest_size:
            return CompactUnit.from_runs(max_level, runs)
        return None

    def pick_for_size_ratio(self, max_level: int, runs: Sequence[LevelSortedRun], now_ms: int | None = None
                            ) -> CompactUnit | None:
        if len(runs) < self.num_run_trigger:
            return None
        return self.pick_size_ratio_from(max_level, runs, 1, now_ms)

    def pick_size_ratio_from(self, max_level: int, runs: Sequence[LevelSortedRun], candidate_count: int,
                             now_ms: int | None = None, force_pick: bool = False) -> CompactUnit | None:
        ratio = 100.0 + self.size_ratio + self._off_peak_ratio(now_ms)
        candidate_size = sum(r.run.total_size for r in runs[:candidate_count])
        triggered = force_pick or candidate_count > 1
        for nxt in runs[candidate_count:]:
            if candidate_size * ratio / 100.0 < nxt.run.total_size and (not triggered or nxt.level > 1):
                break
            candidate_size += nxt.run.total_size
            candidate_count += 1
            triggered = True
        return self.create_unit(runs, max_level, candidate_count) if triggered else None

    def create_unit(self, runs: Sequence[LevelSortedRun], max_level: int, run_count: int) -> CompactUnit:
        if run_count == len(runs):
            output_level = max_level
        else:
            output_level = max(0, runs[run_count].level - 1)
        if output_level == 0:  # never output to level 0: absorb runs up to the first one above level 0
            while run_count < len(runs):
                nxt = runs[run_count]
                run_count += 1
                if nxt.level != 0:
                    output_level = nxt.level
                    break
        if run_count == len(runs):
            output_level = max_level
        return CompactUnit.from_runs(output_level, runs[:run_count])

    def _off_peak_ratio(self, now_ms: int | None) -> int:
        if self.off_peak is None:
            return 0
        now = self.clock() if now_ms is None else now_ms
        return self.off_peak.current_ratio(datetime.fromtimestamp(now / 1000).hour)


def last_full_compaction_ms(max_level: int, runs: Sequence[LevelSortedRun]) -> int | None:
    """Paimon's estimate of the last full compaction: the newest creation time of the files at the max level."""
    times = [f.creation_time_millis for r in runs if r.level == max_level for f in r.run.files
             if f.creation_time_millis is not None]
    return max(times) if times else None


def pick_full_compaction(num_levels: int, runs: Sequence[LevelSortedRun],
                         needs_rewrite: Callable[[DataFileMeta], bool] | None = None,
                         force_rewrite_all: bool = False) -> CompactUnit | None:
    """A forced full compaction: every run to the max level.

    When the bucket already is one sorted run at the max level, only files that must be rewritten are picked (each
    on its own: ``file_rewrite``): all with ``force_rewrite_all``, else those ``needs_rewrite`` accepts (files with
    record-level-expired rows). None when there is nothing to do.
    """
    max_level = num_levels - 1
    if not runs:
        return None
    if len(runs) == 1 and runs[0].level == max_level:
        files = tuple(f for f in runs[0].run.files
                      if force_rewrite_all or (needs_rewrite is not None and needs_rewrite(f)))
        return CompactUnit(max_level, files, file_rewrite=True) if files else None
    return CompactUnit.from_runs(max_level, runs)
