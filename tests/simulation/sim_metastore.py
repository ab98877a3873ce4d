"""A metastore for the simulation: registrations in dicts, and a per-table commit lock the actors contend for
(``lock.enabled``, ADR 0044), with the checks that prove the lock is held where it must be.

The registrations are :class:`~tests.table_engine.catalog.fake_metastore.DictMetastore`'s; the lock is not
``FakeMetastore``'s: that is a ``threading.Lock``, and the actors are greenlets of one thread, so an actor waiting for
it would block the thread and the holder would never run again. Here a waiter polls, as Paimon's JDBC and Hive locks do:
it tries; while another actor holds the lock it sleeps (the scheduler's virtual sleep, a scheduling point; 50 ms first,
doubling up to ``lock-check-max-sleep``) and tries again, and once its sleeps add up to ``lock-acquire-timeout`` it
gives up with a retryable CommitConflictError. Virtual sleeps take no time, so the timeout is counted in the sleeps
asked for (as :mod:`table_engine.store.pins` counts its waits): a simulated waiter gives up after as many tries as a
real one. Each try and the release are round trips to the metastore, so each is a scheduling point too (``lock`` and
``unlock``, path ``<db>.<table>``).

Checks (each a violation the run's checker reports after the step; see ``scenarios.run_once`` for the wiring):

* mutual exclusion: no two actors inside one table's lock at once (what the lock promises; recorded apart from the
  state that grants it, so a lock that does not exclude is caught: ``test_simulation.py``);
* every ``snapshot-N`` of the table is created by an actor inside the table's lock
  (:meth:`SimMetastore.check_creation`, called from the raw store's creation hook, which runs in the creating actor:
  so a commit path that publishes without the lock is caught).

The other calls of :class:`~table_engine.catalog.metastore.Metastore` are ``DictMetastore``'s dict operations, no
scheduling points: only the lock takes part in the commit protocol. Before the actors start (the table's creation and
first commit in ``run_once``) there is no actor: the lock is then taken without scheduling points, by ``setup``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

from table_engine.catalog.metastore import Metastore
from table_engine.catalog.options import LOCK_ACQUIRE_TIMEOUT, LOCK_CHECK_MAX_SLEEP, CatalogOptions
from table_engine.errors import CommitConflictError
from tests.simulation.scheduler import Scheduler
from tests.table_engine.catalog.fake_metastore import DictMetastore

FIRST_SLEEP_MS = 50
"""The first wait for a lock held by another actor (Paimon's, then doubling up to ``lock-check-max-sleep``)."""
SETUP = "setup"
"""Who holds the lock before the actors start (the run's table creation and first commit)."""

Key = tuple[str, str]


class SimMetastore(DictMetastore):
    """One catalog's registrations and table locks for one run. ``report(text)`` records a violation of the
    lock's checks (the checker's :meth:`~tests.simulation.invariants.Checker.report`)."""

    NAME = "simulated metastore"

    def __init__(self, options: Mapping[str, str], sched: Scheduler, report: Callable[[str], None]) -> None:
        super().__init__()
        opts = CatalogOptions(options)
        self.acquire_timeout_ms = opts.get(LOCK_ACQUIRE_TIMEOUT)
        self.check_max_sleep_ms = opts.get(LOCK_CHECK_MAX_SLEEP)
        self.sched = sched
        self.report = report
        self.owner: dict[Key, str] = {}
        """The lock table: who the metastore says holds each table's lock (what a try tests and sets)."""
        self.inside: dict[Key, list[str]] = {}
        """Who is inside each table's lock block right now (what the checks read; at most one, if it excludes)."""
        self.timeout_is_violation = True
        """A wait that reaches ``lock-acquire-timeout`` is reported as well as raised: the scenarios set a timeout
        no legitimate wait of a run comes near, so reaching it means a lock that was never released (a retryable
        CommitConflictError alone would be tolerated, and hide it)."""
        self.acquired = 0
        self.waits = 0
        self.longest_wait_ms = 0
        """Locks taken, sleeps waiting for one and the longest wait (in sleeps asked for), this run: how much the
        lock was contended."""

    # ---- the lock ----------------------------------------------------------------------------------------------
    def _me(self) -> str:
        return self.sched.current_actor() or SETUP

    def _round_trip(self, op: str, key: Key) -> None:
        """A request to the metastore: a scheduling point (none before the actors start)."""
        if self.sched.current_actor() is not None:
            self.sched.point(op, f"{key[0]}.{key[1]}")

    def _try_acquire(self, key: Key, me: str) -> bool:
        """One attempt: take the lock unless it is held (by anyone: like Paimon's JDBC and Hive locks, it is not
        reentrant)."""
        self._round_trip("lock", key)
        if key in self.owner:
            return False
        self.owner[key] = me
        return True

    def _release(self, key: Key, me: str) -> None:
        self._round_trip("unlock", key)
        if self.owner.get(key) == me:
            del self.owner[key]

    def _acquire(self, key: Key, me: str) -> None:
        waited_ms, sleep_ms = 0, FIRST_SLEEP_MS
        while not self._try_acquire(key, me):
            if waited_ms >= self.acquire_timeout_ms:
                message = (f"{me} gave up waiting for the lock on {key[0]}.{key[1]}, held by {self.owner.get(key)}, "
                           f"after {waited_ms} ms of waits (lock-acquire-timeout {self.acquire_timeout_ms} ms)")
                if self.timeout_is_violation:
                    self.report(message)
                raise CommitConflictError(f"simulated metastore: {message}")
            wait_ms = min(sleep_ms, self.check_max_sleep_ms)
            self.waits += 1
            self.sched.sleep(wait_ms / 1000)
            waited_ms += wait_ms
            sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)
        self.longest_wait_ms = max(self.longest_wait_ms, waited_ms)

    @contextlib.contextmanager
    def lock(self, db: str, table: str) -> Iterator[None]:
        """The table's lock for the calling actor (see the module); held until the block ends."""
        key, me = (db, table), self._me()
        self._acquire(key, me)
        self.acquired += 1
        holders = self.inside.setdefault(key, [])
        if holders:
            self.report(f"{me} took the lock on {db}.{table} while {', '.join(holders)} held it (the metastore's lock "
                        "does not exclude)")
        holders.append(me)
        try:
            yield
        finally:
            holders.remove(me)
            self._release(key, me)

    def check_creation(self, db: str, table: str, snapshot_id: int) -> None:
        """``snapshot-<snapshot_id>`` of ``db.table`` was just created by the calling actor: it must be inside the
        table's lock."""
        me = self._me()
        if me not in self.inside.get((db, table), []):
            holders = self.inside.get((db, table)) or ["nobody"]
            self.report(f"snapshot-{snapshot_id} created by {me}, which does not hold the lock on {db}.{table} "
                        f"(held by {', '.join(holders)})")


def _conforms(m: SimMetastore) -> Metastore:
    return m  # mypy checks that it implements the protocol
