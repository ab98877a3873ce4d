"""Exploration: random and PCT interleavings by seed, and a bounded-exhaustive DFS over decision sequences.

Random exploration draws one strategy per seed (uniform, sticky uniform, or PCT), so a seed alone names its run.
The exhaustive explorer (CHESS-style) enumerates every decision sequence of a small scenario with at most ``bound``
preemptions - switching away from an actor that could have continued - replaying each prefix from scratch (a run's
state is rebuilt every time) and letting the rest of the run continue without preemption. Switching when the current
actor finished costs nothing, so "A pauses before its publication, B commits twice, the expiry runs" is one
preemption.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass

from tests.simulation.scenarios import SCENARIOS, Result, Scenario, run_once
from tests.simulation.scheduler import PCTStrategy, RandomStrategy, ReplayStrategy, Strategy

SOAK_DIR = ".soak"


def strategy_for(seed: int) -> Strategy:
    """The strategy a random-exploration seed uses (fixed by the seed, so that a seed replays)."""
    kind = seed % 3
    if kind == 0:
        return RandomStrategy(seed)
    if kind == 1:
        return RandomStrategy(seed, stickiness=0.95)
    return PCTStrategy(seed, depth=3)


def run_seed(scenario: Scenario, seed: int) -> Result:
    return run_once(scenario, seed, strategy_for(seed))


def replay(scenario: Scenario, seed: int, decisions: list[str]) -> Result:
    """The run recorded as ``decisions`` (with the seed that fixed its UUIDs and faults)."""
    return run_once(scenario, seed, ReplayStrategy(decisions))


@dataclass
class _Frame:
    runnable: tuple[str, ...]
    current: str | None
    chosen: str
    tried: set[str]
    preemptions: int
    """Preemptions of the decisions before this one."""


def _cost(frame: _Frame, choice: str) -> int:
    return 1 if frame.current is not None and frame.current in frame.runnable and choice != frame.current else 0


def exhaustive(scenario: Scenario, bound: int = 1, max_runs: int | None = None, seed: int = 0) -> Iterator[Result]:
    """Every interleaving of ``scenario`` with at most ``bound`` preemptions (DFS; ``max_runs`` caps it)."""
    prefix: list[str] = []
    frames: list[_Frame] = []
    runs = 0
    while max_runs is None or runs < max_runs:
        result = run_once(scenario, seed, ReplayStrategy(prefix))
        runs += 1
        yield result
        steps = result.record.steps
        for i in range(len(prefix), len(steps)):
            before = frames[-1].preemptions + _cost(frames[-1], frames[-1].chosen) if frames else 0
            s = steps[i]
            frames.append(_Frame(s.runnable, s.current, s.chosen, {s.chosen}, before))
        while frames:
            f = frames[-1]
            alt = next((c for c in f.runnable if c not in f.tried and f.preemptions + _cost(f, c) <= bound), None)
            if alt is not None:
                f.tried.add(alt)
                f.chosen = alt
                prefix = [fr.chosen for fr in frames]
                break
            frames.pop()
        if not frames:
            return


def save_failure(result: Result, directory: str = SOAK_DIR) -> str:
    """Write the failing run's decisions to a JSON file; returns its path (for ``--replay``)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{result.scenario}-{result.seed}-{len(result.record.decisions)}.json")
    with open(path, "w") as f:
        json.dump({"scenario": result.scenario, "seed": result.seed, "decisions": result.record.decisions,
                   "violation": result.violation}, f)
    return path


def load_replay(path: str) -> tuple[Scenario, int, list[str]]:
    with open(path) as f:
        data = json.load(f)
    return SCENARIOS[data["scenario"]], int(data["seed"]), list(data["decisions"])
