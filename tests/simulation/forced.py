"""Forced schedules for regression seeds: a script of phases ("run A until its next operation is the publication of
a snapshot, then B to the end, ...") and scripted faults ("fail the first publication after ..."), written against
the operations the actors announce rather than step numbers, so a script states the race it forces. A scripted run
records its decision list like any other, and replays exactly from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tests.simulation.scheduler import NonPreemptive, Pending, Strategy
from tests.simulation.sim_io import Faults

Pred = Callable[[str, str], bool]
"""A predicate on an actor's next operation (op, path)."""


def is_op(op: str, contains: str = "") -> Pred:
    return lambda o, p: o == op and contains in p


def publishing(o: str, p: str) -> bool:
    """The conditional create of a ``snapshot-N`` (a commit's publication)."""
    return o == "write_if_absent" and "/snapshot/snapshot-" in p


class Seq:
    """True at the first operation matching ``preds[-1]`` after operations matching each earlier one, in order
    (stateful: each operation of the phase's actor is seen once)."""

    def __init__(self, *preds: Pred) -> None:
        self.preds = list(preds)
        self.i = 0

    def __call__(self, op: str, path: str) -> bool:
        if self.preds[self.i](op, path):
            if self.i == len(self.preds) - 1:
                return True
            self.i += 1
        return False


class Script:
    """Phases ``(actor, until)``: run ``actor`` until its next operation satisfies ``until`` (None: until it
    finished), then the next phase; afterwards ``then`` (default: non-preemptive)."""

    def __init__(self, phases: Sequence[tuple[str, Pred | None]], then: Strategy | None = None) -> None:
        self.phases = list(phases)
        self.i = 0
        self.then = then or NonPreemptive()
        self.completed = 0
        """Phases that ran to their condition (a regression test asserts the script was followed)."""

    def choose(self, step: int, runnable: Sequence[str], current: str | None, pending: Pending) -> str:
        while self.i < len(self.phases):
            actor, until = self.phases[self.i]
            if actor in pending and (until is None or not until(*pending[actor])):
                return actor
            self.i += 1
            self.completed += 1
        return self.then.choose(step, runnable, current, pending)


class ScriptedFaults(Faults):
    """Inject ``kind`` at the operations ``when`` selects (stateful predicate over every operation, in order)."""

    def __init__(self, when: Pred, kind: str = "error") -> None:
        super().__init__()
        self.when = when
        self.kind = kind

    def decide(self, op: str, path: str) -> str | None:
        if self.when(op, path):
            self.injected.append((self.kind, op, path))
            return self.kind
        return None


class AfterOwnPublication:
    """Selects the publication of a ``write()``'s compaction part: the first ``snapshot-N`` create that follows a
    publication with no new data file written in between (the next ``write()`` writes its data files first)."""

    def __init__(self) -> None:
        self.published = False
        self.data_since = False
        self.fired = False

    def __call__(self, op: str, path: str) -> bool:
        if op == "open_output":
            self.data_since = True
        if not publishing(op, path):
            return False
        hit = self.published and not self.data_since and not self.fired
        self.published, self.data_since = True, False
        self.fired = self.fired or hit
        return hit
