"""Baton passing between actors: exactly one actor runs at a time, and a strategy picks which one continues at every
scheduling point.

Why greenlets and not a rewrite of the engine as coroutines: the actors must run the real engine code, unchanged.
Each actor is a greenlet (a stack of its own on the caller's thread) that switches back to the scheduler in
:meth:`Scheduler.point` (called by the simulated FileIO before every operation, and by the virtual ``time.sleep``);
the scheduler switches to the actor it chose. Only one actor ever runs, so the run is a pure function of the decision
list: :class:`ReplayStrategy` reproduces it exactly. A switch costs about a microsecond, against tens of
microseconds for a hand-over between threads (the first version of this harness: 3-5 times slower per
interleaving). The price: an actor that blocks outside a scheduling point (a lock held by another actor) blocks the
whole run; the engine holds no lock across a FileIO call, and ``make soak`` guards each worker with ``faulthandler``.

Strategies: :class:`RandomStrategy` (uniform, optionally sticky), :class:`PCTStrategy` (random priorities with a few
change points, which produces the long pauses of one actor that races like issue 35 need), and
:class:`ReplayStrategy` (a fixed prefix, then a fallback: the bounded-exhaustive explorer in ``explore.py`` replays
prefixes and lets the rest run without preemption).
"""

from __future__ import annotations

import random
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from greenlet import getcurrent, greenlet

from table_engine.clock import ManualClock

Pending = Mapping[str, tuple[str, str]]
"""Each waiting actor's next operation and path."""


class SimAbort(BaseException):
    """Raised inside an actor to unwind it when a run ends early (not an Exception: engine code must not catch it)."""


class Diverged(Exception):
    """A replayed decision names an actor that is not waiting: the run is not the one recorded."""


class Strategy(Protocol):
    def choose(self, step: int, runnable: Sequence[str], current: str | None, pending: Pending) -> str: ...


def _next_after(current: str | None, runnable: Sequence[str]) -> str:
    """Round robin: the first waiting actor after ``current`` by name."""
    later = [n for n in runnable if current is not None and n > current]
    return later[0] if later else runnable[0]


class NonPreemptive:
    """Keep running the current actor while it can; else the first waiting one (by name). A sleep yields (round
    robin), so a poll loop never starves the actor it waits for."""

    def choose(self, step: int, runnable: Sequence[str], current: str | None, pending: Pending) -> str:
        if current is not None and current in runnable and (pending[current][0] != "sleep" or len(runnable) == 1):
            return current
        return _next_after(current, runnable)


class RandomStrategy:
    """Uniform choice; with ``stickiness`` p the current actor continues with probability p first."""

    def __init__(self, seed: int, stickiness: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.stickiness = stickiness

    def choose(self, step: int, runnable: Sequence[str], current: str | None, pending: Pending) -> str:
        if current is not None and current in runnable and self.stickiness and pending[current][0] != "sleep" \
                and self.rng.random() < self.stickiness:
            return current
        return self.rng.choice(list(runnable))


class PCTStrategy:
    """Probabilistic concurrency testing (Burckhardt et al.): random distinct priorities, the highest waiting actor
    runs; at ``depth - 1`` random steps the running actor drops below every initial priority. A bug of depth d is
    found with probability >= 1 / (n * k^(d-1)) per run."""

    def __init__(self, seed: int, depth: int = 3, horizon: int = 1500) -> None:
        self.rng = random.Random(seed)
        self.priorities: dict[str, float] = {}
        self.changes = sorted(self.rng.sample(range(1, horizon), depth - 1))
        self._low = 0.0

    def choose(self, step: int, runnable: Sequence[str], current: str | None, pending: Pending) -> str:
        for name in runnable:
            if name not in self.priorities:
                self.priorities[name] = 10.0 + self.rng.random()
        if current is not None and step in self.changes:
            self._low -= 1.0
            self.priorities[current] = self._low
        # an actor that sleeps waits for the others (a poll loop): it must not starve them
        awake = [n for n in runnable if pending[n][0] != "sleep"]
        if not awake:  # everybody polls: round robin, or the highest would spin for ever
            return _next_after(current, runnable)
        return max(awake, key=lambda n: self.priorities[n])


class ReplayStrategy:
    """``decisions`` first (exactly), then ``then`` (default: non-preemptive)."""

    def __init__(self, decisions: Sequence[str], then: Strategy | None = None) -> None:
        self.decisions = list(decisions)
        self.then = then or NonPreemptive()

    def choose(self, step: int, runnable: Sequence[str], current: str | None, pending: Pending) -> str:
        if step < len(self.decisions):
            want = self.decisions[step]
            if want not in runnable:
                raise Diverged(f"step {step}: recorded decision {want!r} is not waiting (waiting: {list(runnable)})")
            return want
        return self.then.choose(step, runnable, current, pending)


@dataclass
class StepInfo:
    """One decision: who could run, who ran before, who was chosen (for the exhaustive explorer)."""

    runnable: tuple[str, ...]
    current: str | None
    chosen: str


@dataclass
class Outcome:
    """How an actor ended: ``error`` None for a normal return."""

    error: BaseException | None = None
    text: str = ""
    aborted: bool = False


@dataclass
class RunRecord:
    decisions: list[str] = field(default_factory=list)
    steps: list[StepInfo] = field(default_factory=list)
    trace: list[tuple[str, str, str]] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failure: str | None = None
    """Why the run was cut short (an invariant, the step bound, a hang, a diverged replay), None if it was not."""


class Scheduler:
    """Runs actor greenlets one at a time. ``decide(op, path)``: whether a point is a decision (default: every one);
    a point that is not only advances the clock (coarse schedules for the exhaustive explorer)."""

    def __init__(self, strategy: Strategy, clock: ManualClock, *, max_steps: int = 20_000,
                 decide: Callable[[str, str], bool] | None = None) -> None:
        self.strategy = strategy
        self.clock = clock
        self.max_steps = max_steps
        self.decide = decide
        self.record = RunRecord()
        self.faults_of: dict[str, int] = {}
        self._actors: dict[greenlet, str] = {}
        self._waiting: dict[str, tuple[str, str]] = {}
        self._main: greenlet | None = None
        self._aborting = False

    # ---- called by actors ----------------------------------------------------------------------------------------
    def current_actor(self) -> str | None:
        return self._actors.get(getcurrent())

    def point(self, op: str, path: str) -> None:
        name = self.current_actor()
        if name is None:
            raise RuntimeError(f"FileIO {op} {path} called from {threading.current_thread().name}, which is no actor "
                               "(a thread pool left on?)")
        if self._aborting:
            raise SimAbort
        self.record.trace.append((name, op, path))
        self.clock.advance(1)
        if self.decide is not None and op != "start" and not self.decide(op, path):
            return
        assert self._main is not None
        self._waiting[name] = (op, path)
        self._main.switch()
        del self._waiting[name]
        if self._aborting:
            raise SimAbort

    def fault(self, kind: str, op: str, path: str) -> None:
        name = self.current_actor() or "?"
        self.faults_of[name] = self.faults_of.get(name, 0) + 1
        self.record.trace.append((name, f"FAULT-{kind}", path))

    def sleep(self, seconds: float) -> None:
        """``time.sleep`` as the engine sees it during a run: a scheduling point, no real wait."""
        self.point("sleep", f"{seconds:.3f}")

    # ---- the run -------------------------------------------------------------------------------------------------
    def run(self, actors: Mapping[str, Callable[[], None]], after_step: Callable[[], None]) -> RunRecord:
        """Run ``actors`` to the end (or until ``after_step`` raises or the step bound)."""
        rec = self.record
        self._main = getcurrent()
        byname: dict[str, greenlet] = {}
        for name in actors:
            g = greenlet(self._body)
            self._actors[g] = name
            byname[name] = g
        for name, g in byname.items():
            g.switch(name, actors[name])  # runs to its "start" point
        step = 0
        current: str | None = None
        try:
            while True:
                after_step()
                if not self._waiting:
                    break
                if step >= self.max_steps:
                    rec.failure = f"step bound {self.max_steps} reached (a livelock?)"
                    break
                runnable = sorted(self._waiting)
                chosen = self.strategy.choose(step, runnable, current, dict(self._waiting))
                rec.steps.append(StepInfo(tuple(runnable), current, chosen))
                rec.decisions.append(chosen)
                step += 1
                current = chosen
                byname[chosen].switch()  # until its next point, or its end
        except Exception as e:  # an invariant violation or a diverged replay
            rec.failure = f"{type(e).__name__}: {e}"
        finally:
            self._abort(byname)
        return rec

    def _abort(self, byname: Mapping[str, greenlet]) -> None:
        """Unwind every actor still waiting, one at a time (their clean-up code raises SimAbort at its next point)."""
        self._aborting = True
        while self._waiting:
            byname[sorted(self._waiting)[0]].switch()

    def _body(self, name: str, fn: Callable[[], None]) -> None:
        outcome = Outcome()
        try:
            self.point("start", "")
            fn()
        except SimAbort:
            outcome.aborted = True
        except BaseException as e:  # recorded; the scenario judges whether it is expected
            outcome.error = e
            outcome.text = "".join(traceback.format_exception(e))
        finally:
            self.record.outcomes[name] = outcome
