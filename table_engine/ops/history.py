"""A table's commit history: every retained snapshot, newest first, with the Airflow run that made it (its run
identity, :mod:`table_engine.run_identity`), filtered by commit kind and time, one page at a time.

Read from snapshot files only (one small JSON file each; no manifest, no data file), and only as many as the page
needs: a time bound is found by bisecting the snapshot ids (commit times grow with the ids, as each commit follows
the latest), then the walk reads newest first until the page is full, the time bound is passed, or
:data:`MAX_SCAN` snapshots were read (the page then says where to go on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from table_engine.errors import CommandError, SnapshotNotExistError
from table_engine.format.snapshot import CommitKind, Snapshot
from table_engine.run_identity import RunIdentity
from table_engine.table import Table

__all__ = ["MAX_SCAN", "Commit", "HistoryPage", "history", "render_history"]

MAX_SCAN = 10_000
"""Snapshots one page reads at most (a kind filter that matches rarely stops there)."""


@dataclass(frozen=True)
class Commit:
    """One retained snapshot: what it committed and, when an Airflow task made it, which."""

    snapshot_id: int
    commit_kind: str
    time_millis: int
    commit_user: str
    delta_records: int | None
    changelog_records: int | None
    total_records: int | None
    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    map_index: int | None = None
    try_number: int | None = None

    @classmethod
    def of(cls, snap: Snapshot) -> Commit:
        run = RunIdentity.of(snap.properties)
        return cls(snap.id, str(snap.commit_kind), snap.time_millis, snap.commit_user, snap.delta_record_count,
                   snap.changelog_record_count, snap.total_record_count,
                   *((run.dag_id, run.run_id, run.task_id, run.map_index, run.try_number) if run else ()))


@dataclass(frozen=True)
class HistoryPage:
    """A page of commits, newest first; ``next_before_snapshot``: pass it as ``before_snapshot`` for the next page
    (None: no older commit matches); ``scanned``: snapshot files read."""

    commits: list[Commit] = field(default_factory=list)
    next_before_snapshot: int | None = None
    scanned: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"commits": [asdict(c) for c in self.commits], "next_before_snapshot": self.next_before_snapshot,
                "scanned": self.scanned}


def history(table: Table, *, kinds: Sequence[str] = (), since_millis: int | None = None,
            until_millis: int | None = None, before_snapshot: int | None = None, limit: int = 50) -> HistoryPage:
    """The retained commits of ``table`` newest first: of ``kinds`` (commit kinds, e.g. ``COMPACT``; all when
    empty), committed in ``[since_millis, until_millis]``, older than snapshot ``before_snapshot``, at most
    ``limit``."""
    wanted = {k.strip().upper() for k in kinds if k.strip()}
    unknown = wanted - {k.value for k in CommitKind}
    if unknown:
        raise CommandError(f"history of {table.identifier}: unknown commit kind(s) {sorted(unknown)}; kinds are "
                           f"{', '.join(k.value for k in CommitKind)}")
    if limit < 1:
        raise CommandError(f"history of {table.identifier}: limit must be at least 1, got {limit}")
    earliest, latest = table.earliest_snapshot_id(), table.latest_snapshot_id()
    if earliest is None or latest is None:
        return HistoryPage()
    top = latest if before_snapshot is None else min(latest, before_snapshot - 1)
    reads = 0
    if until_millis is not None and top >= earliest:
        top, reads = _last_at_or_before(table, earliest, top, until_millis)
    commits: list[Commit] = []
    scanned, sid = reads, top
    while sid >= earliest:
        if scanned - reads >= MAX_SCAN:  # cut: the next page goes on from here
            return HistoryPage(commits, sid + 1, scanned)
        try:
            snap = table.snapshot(sid)
        except SnapshotNotExistError:  # expired while we read: nothing older is retained
            break
        scanned += 1
        if since_millis is not None and snap.time_millis < since_millis:
            break
        if not wanted or str(snap.commit_kind) in wanted:
            commits.append(Commit.of(snap))
            if len(commits) == limit:
                return HistoryPage(commits, sid if sid > earliest else None, scanned)
        sid -= 1
    return HistoryPage(commits, None, scanned)


def _last_at_or_before(table: Table, low: int, high: int, millis: int) -> tuple[int, int]:
    """The newest snapshot id in ``[low, high]`` committed at or before ``millis`` (``low - 1`` when none), by
    bisection; and how many snapshot files it read."""
    reads = 0
    answer = low - 1
    while low <= high:
        mid = (low + high) // 2
        reads += 1
        if table.snapshot(mid).time_millis <= millis:
            answer, low = mid, mid + 1
        else:
            high = mid - 1
    return answer, reads


def render_history(commits: Sequence[dict[str, Any]]) -> str:
    """Commits (``Commit`` dicts) as a text table for a log: snapshot, kind, time (UTC), records, Airflow run."""
    import datetime

    if not commits:
        return "no commit"
    lines = [f"{'snapshot':>8}  {'kind':<9}  {'committed (UTC)':<19}  {'delta':>8}  Airflow run"]
    for c in commits:
        when = datetime.datetime.fromtimestamp(c["time_millis"] / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
        run = (f"{c['dag_id']} / {c['run_id']} / {c['task_id']}"
               + (f"[{c['map_index']}]" if (c.get("map_index") or -1) >= 0 else "")
               + f" try {c['try_number']}") if c.get("dag_id") else "-"
        delta = "-" if c.get("delta_records") is None else str(c["delta_records"])
        lines.append(f"{c['snapshot_id']:>8}  {c['commit_kind']:<9}  {when:<19}  {delta:>8}  {run}")
    return "\n".join(lines)
