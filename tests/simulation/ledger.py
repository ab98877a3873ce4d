"""What the soak explored on which code: ``.soak/ledger.json``.

A soak run's evidence is only worth something for the code it ran on. The ledger keys its counts by a hash of the
source files the simulation can load: the static import closure of ``tests.simulation.cli`` within this checkout
(every ``import`` and ``from ... import``, also those inside functions, followed through ``table_engine`` and
``tests``), as the files are on disk. So soak runs on unchanged code add up - a long soak can be split across runs -
and a change to any engine module the simulation can reach, or to the harness, starts a new count, while a change
elsewhere (the provider, the Spark side, the CLI commands) does not. Seeds go on where the last run on the same code
stopped, so runs that add up explore different interleavings.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

LEDGER = os.path.join(".soak", "ledger.json")
ENTRY = "tests.simulation.cli"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""The checkout (``tests/simulation/ledger.py`` is two levels below it)."""


def _module_file(name: str) -> str | None:
    base = os.path.join(ROOT, *name.split("."))
    for candidate in (f"{base}.py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def source_closure(entry: str = ENTRY) -> list[str]:
    """The checkout's source files (relative paths, sorted) that ``entry`` imports, directly or not."""
    seen: dict[str, str] = {}
    todo = [entry]
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if path is None or path in seen:
            continue
        seen[path] = name
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # its packages' __init__
        package = parts if path.endswith("__init__.py") else parts[:-1]
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                todo += [module, *(f"{module}.{a.name}" for a in node.names)]
    return sorted(os.path.relpath(p, ROOT) for p in seen)


def code_key() -> str:
    """``sha256:<16 hex>`` of the paths and contents of :func:`source_closure` (as they are on disk now)."""
    digest = hashlib.sha256()
    for rel in source_closure():
        with open(os.path.join(ROOT, rel), "rb") as f:
            digest.update(rel.encode() + b"\0" + f.read() + b"\0")
    return f"sha256:{digest.hexdigest()[:16]}"


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

    def before(self, run: Run) -> str:
        """The summary without ``run`` (what earlier runs on this code explored)."""
        earlier = Ledger(self.key, [r for r in self.runs if r is not run])
        return earlier.summary()


def _read(path: str) -> dict[str, Any]:
    """The ledger file's entries (none when it is missing or unreadable)."""
    try:
        with open(path) as f:
            data: dict[str, Any] = json.load(f)
    except (OSError, ValueError):
        return {}
    return data


def load(key: str, path: str = LEDGER) -> Ledger:
    runs = [Run(**r) for r in _read(path).get(key, [])]
    return Ledger(key, runs)


def start(ledger: Ledger, first_seed: int) -> Run:
    run = Run(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), first_seed, first_seed)
    ledger.runs.append(run)
    return run


def save(ledger: Ledger, path: str = LEDGER) -> None:
    """Write ``ledger`` (other code's entries kept), atomically."""
    data = _read(path)
    data[ledger.key] = [asdict(r) for r in ledger.runs]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)
