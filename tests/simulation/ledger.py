"""What the soak explored on which code: ``.soak/ledger.json``.

A soak run's evidence is only worth something for the code it ran on. The ledger keys its counts by the git trees of
``table_engine/`` and ``tests/simulation/`` at ``HEAD`` (the engine under test and the harness that tests it), so
soak runs on unchanged code add up - a long soak can be split across runs - and a change to either tree starts a new
count. A run on uncommitted changes of those trees is not recorded (its code has no name). Seeds go on where the
last run on the same code stopped, so runs that add up explore different interleavings.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass, field
from typing import Any

LEDGER = os.path.join(".soak", "ledger.json")
TREES = ("table_engine", "tests/simulation")


def code_key() -> str | None:
    """``table_engine@<tree>+tests/simulation@<tree>`` at HEAD, or None when either has uncommitted changes (or
    this is no git checkout)."""
    try:
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *TREES], capture_output=True, text=True,
                               check=True, timeout=30).stdout.strip()
        trees = [subprocess.run(["git", "rev-parse", f"HEAD:{t}"], capture_output=True, text=True, check=True,
                                timeout=30).stdout.strip()[:12] for t in TREES]
    except (OSError, subprocess.SubprocessError):
        return None
    if dirty:
        return None
    return "+".join(f"{t}@{h}" for t, h in zip(TREES, trees, strict=True))


@dataclass
class Run:
    started: str
    first_seed: int
    next_seed: int
    interleavings: int = 0
    """Random interleavings (6-7 actors) this run explored."""
    exhaustive: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Ledger:
    key: str
    runs: list[Run] = field(default_factory=list)

    @property
    def interleavings(self) -> int:
        return sum(r.interleavings for r in self.runs)

    @property
    def failures(self) -> list[str]:
        return [f for r in self.runs for f in r.failures]

    def next_seed(self) -> int:
        return max((r.next_seed for r in self.runs), default=0)

    def summary(self) -> str:
        return (f"code {self.key}: {self.interleavings} random interleavings of 6+ actors explored in "
                f"{len(self.runs)} soak run(s), {len(self.failures)} failure(s)")


def load(key: str, path: str = LEDGER) -> Ledger:
    try:
        with open(path) as f:
            data: dict[str, Any] = json.load(f)
    except (OSError, ValueError):
        data = {}
    runs = [Run(**r) for r in data.get(key, [])]
    return Ledger(key, runs)


def start(ledger: Ledger, first_seed: int) -> Run:
    run = Run(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), first_seed, first_seed)
    ledger.runs.append(run)
    return run


def save(ledger: Ledger, path: str = LEDGER) -> None:
    """Write ``ledger`` (other code's entries kept), atomically."""
    try:
        with open(path) as f:
            data: dict[str, Any] = json.load(f)
    except (OSError, ValueError):
        data = {}
    data[ledger.key] = [asdict(r) for r in ledger.runs]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)
