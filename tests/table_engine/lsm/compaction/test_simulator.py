"""A compaction simulator: flushes of random key sets into one bucket, each followed by the manager's step (pick ->
rewrite -> update levels), on in-memory files. Invariants after every step: at most ``trigger`` sorted runs (so
below the stop trigger), no overlapping key ranges inside a level above 0, and the merged content equals a dict
model."""

from __future__ import annotations

import random

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.lsm.compaction.rewriter import CompactRewriter
from table_engine.lsm.compaction.universal import UniversalCompaction
from table_engine.lsm.key_value import VALUE_KIND, is_add
from table_engine.lsm.levels import Levels, overlapping_files
from table_engine.lsm.merge_engines import DeduplicateMerge, sort_and_merge
from table_engine.lsm.sort import MergeOrder
from tests.budget import examples
from tests.table_engine.lsm._files import CODEC, MemoryFiles, kv

ORDER = MergeOrder(("k",))


def step(levels: Levels, picker: UniversalCompaction, fs: MemoryFiles, min_size: int) -> Levels:
    """One compaction, with the manager's rules (skip trivial units; drop deletes when nothing older remains)."""
    unit = picker.pick(levels.number_of_levels, levels.sorted_runs(), 0)
    if unit is None or (len(unit.files) == 1 and unit.files[0].level == unit.output_level):
        return levels
    drop = unit.output_level != 0 and unit.output_level >= levels.non_empty_highest_level()
    rw = CompactRewriter(CODEC, fs.read, lambda t, lv: fs.write(t, lv, rows_per_file=40), DeduplicateMerge(), ORDER,
                         min_size, levels.max_level)
    result = rw.compact(unit, drop)
    return levels.update(result.before, result.after)


def content(levels: Levels, fs: MemoryFiles) -> dict[int, str | None]:
    files = levels.all_files()
    if not files:
        return {}
    merged = sort_and_merge(pa.concat_tables([fs.read(f) for f in files]), ORDER, DeduplicateMerge())
    merged = merged.filter(is_add(merged.column(VALUE_KIND)))
    return dict(zip(merged.column("k").to_pylist(), merged.column("v").to_pylist()))


def simulate(seed: int, flushes: int, trigger: int, size_ratio: int, max_amp: int, key_space: int,
             increasing: bool = False) -> None:
    """``increasing``: each flush holds new, higher keys (time-series like), so large files get upgraded."""
    rng = random.Random(seed)
    picker = UniversalCompaction(max_amp, size_ratio, trigger)
    stop = trigger + 3
    fs = MemoryFiles()
    levels = Levels([], trigger + 1, CODEC)
    model: dict[int, str | None] = {}
    seq = 0
    for n in range(flushes):
        if increasing:
            keys = list(range(seq, seq + rng.randint(1, 60)))
        else:
            keys = sorted(rng.sample(range(key_space), rng.randint(1, min(60, key_space))))
        kinds = [3 if rng.random() < 0.15 else 0 for _ in keys]
        values = [None if k == 3 else f"v{n}-{key}" for key, k in zip(keys, kinds)]
        size = rng.choice([5, 10, 400]) * len(keys)
        f = fs.add(kv(keys, values, list(range(seq, seq + len(keys))), kinds), size=size)
        seq += len(keys)
        for key, kind, v in zip(keys, kinds, values):
            if kind == 3:
                model.pop(key, None)
            else:
                model[key] = v
        levels = step(levels.update([], [f]), picker, fs, min_size=2000)
        assert levels.number_of_sorted_runs() <= trigger <= stop
        assert overlapping_files(levels.all_files(), CODEC) is None
        if n % 10 == 9 or n == flushes - 1:
            assert content(levels, fs) == model, f"after flush {n}"


def test_simulator_default_options() -> None:
    simulate(seed=1, flushes=200, trigger=5, size_ratio=1, max_amp=200, key_space=2000)


def test_simulator_increasing_keys_upgrade_large_files(monkeypatch) -> None:
    upgrades = []
    original = CompactRewriter.upgrade
    monkeypatch.setattr(CompactRewriter, "upgrade", lambda self, lv, f: upgrades.append(f) or original(self, lv, f))
    simulate(seed=3, flushes=150, trigger=4, size_ratio=1, max_amp=200, key_space=0, increasing=True)
    assert upgrades, "large non-overlapping files are moved up without a rewrite"


def test_simulator_small_key_space_many_deletes() -> None:
    simulate(seed=2, flushes=120, trigger=3, size_ratio=1, max_amp=200, key_space=50)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), trigger=st.integers(2, 7), size_ratio=st.sampled_from([0, 1, 10, 50]),
       max_amp=st.sampled_from([50, 200, 1000]), key_space=st.sampled_from([20, 300, 5000]),
       increasing=st.booleans())
def test_simulator_random_options(seed: int, trigger: int, size_ratio: int, max_amp: int, key_space: int,
                                  increasing: bool) -> None:
    simulate(seed, 40, trigger, size_ratio, max_amp, key_space, increasing)
