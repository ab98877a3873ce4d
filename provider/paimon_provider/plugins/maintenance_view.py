"""The maintenance parts of a table page: the last plan (what ``maintain`` would run now, planned from the health the
page computed: metadata only), the Airflow run that last maintained the table, and the snapshot rate by commit kind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_provider.plugins import render
from paimon_provider.plugins.render import esc, millis
from table_engine.ops.maintain import MAINTAIN_ACTION
from table_engine.run_identity import RunIdentity

if TYPE_CHECKING:
    from table_engine import Snapshot, TableHealth
    from table_engine.store.lifecycle.planner import Action
    from table_engine.table import Table

MAX_TARGETS = 8
"""Targets (partitions, buckets) named per action; the rest counted."""
RATE_WIDTHS = ((60_000, "minute"), (300_000, "5 minutes"), (900_000, "15 minutes"), (3_600_000, "hour"),
               (21_600_000, "6 hours"), (86_400_000, "day"), (604_800_000, "week"))
"""The time buckets of the snapshot-rate chart: the narrowest that fits the retained range in :data:`MAX_RATE_BARS`."""
MAX_RATE_BARS = 48
"""Bars of the snapshot-rate chart at most."""


def targets(action: Action) -> str:
    """What ``action`` acts on: partitions and buckets for compaction, partitions for expiry, else a count."""
    if action.kind == "compact":
        names = action.buckets or action.partitions
        shown = ", ".join(names[:MAX_TARGETS]) + (f" and {len(names) - MAX_TARGETS} more"
                                                   if len(names) > MAX_TARGETS else "")
        how = f"{action.order_strategy}({', '.join(action.order_by)}): " if action.order_strategy else \
            ("full: " if action.full else "")
        return how + (shown or "all")
    if action.partitions:
        return ", ".join(action.partitions[:MAX_TARGETS]) + (f" and {len(action.partitions) - MAX_TARGETS} more"
                                                            if len(action.partitions) > MAX_TARGETS else "")
    return "" if action.count is None else f"{action.count}"


def plan_section(table: Table, health: TableHealth) -> str:
    """The maintenance due now, one row per action: the plan ``maintain`` would run (:func:`plan_table` on the
    health the page computed, with the dry runs of partition expiry and manifest compaction it makes)."""
    from table_engine.core_options import MAINTENANCE_ORPHANS_ENABLED
    from table_engine.ops.maintain import plan_table

    plan = plan_table(table, health=health)
    rows = [[esc(a.kind), esc(targets(a)), esc(a.reason), esc(threshold_text(a)),
             esc(None if a.estimated_bytes is None else render.size(a.estimated_bytes))] for a in plan.actions]
    orphans = ""
    if health.orphans is None and table.options.get(MAINTENANCE_ORPHANS_ENABLED):
        orphans = (f"<p class='muted'>{MAINTENANCE_ORPHANS_ENABLED.key} is on: <code>maintain</code> also lists "
                   "the table's files for orphans and removes those it finds; the page does not list them (that "
                   "reads every directory of the table), so orphan removal is not in this plan.</p>")
    return (f"<h2>Last plan <span class='muted'>(maintenance due at snapshot {esc(plan.snapshot_id)})</span></h2>"
            + render.table(["action", "targets", "reason", "threshold", "estimated size"], rows,
                           numeric=(4,), empty="nothing due") + orphans)


def threshold_text(action: Action) -> str:
    """The option and value an action passed: ``snapshot.time-retained = 1 h``; a duration option's value as a
    duration, a ratio as a percentage."""
    from table_engine.options import format_duration

    value = action.threshold
    if action.option.endswith(("time-retained", "expiration-time")):
        shown = format_duration(int(value))
    elif action.option.endswith("ratio-threshold"):
        shown = f"{value:.1%}"
    elif action.kind == "remove-orphan-files":
        return f"older than {millis(int(value))} UTC"
    else:
        shown = f"{value:g}"
    return f"{action.option} = {shown}"


def last_maintained(snapshots: Sequence[Snapshot]) -> Snapshot | None:
    """The newest of ``snapshots`` a ``maintain`` action committed (its :data:`MAINTAIN_ACTION` property)."""
    done = [s for s in snapshots if MAINTAIN_ACTION in (s.properties or {})]
    return max(done, key=lambda s: s.id) if done else None


def last_maintained_section(snapshot: Snapshot | None, run_link: str) -> str:
    """Which ``maintain`` action and Airflow run (``run_link``) last committed to the table, and when."""
    if snapshot is None:
        return "<p class='muted'>no retained snapshot was committed by <code>maintain</code></p>"
    run = RunIdentity.of(snapshot.properties)
    action = (snapshot.properties or {})[MAINTAIN_ACTION]
    return (f"<p>last maintained: <b>{esc(action)}</b> in snapshot {esc(snapshot.id)} at "
            f"{esc(millis(snapshot.time_millis))} UTC by {run_link if run is not None else 'no Airflow run'}</p>")


def rate_width(first_millis: int, last_millis: int) -> tuple[int, str]:
    """The bucket width (ms, name) of the snapshot-rate chart for snapshots committed in that range."""
    for width, name in RATE_WIDTHS:
        if (last_millis // width) - (first_millis // width) < MAX_RATE_BARS:
            return width, name
    week = RATE_WIDTHS[-1][0]
    weeks = (last_millis - first_millis) // (week * (MAX_RATE_BARS - 1)) + 1
    return week * weeks, f"{weeks} weeks"


def snapshot_rate(snapshots: Sequence[Snapshot]) -> tuple[str, list[int], dict[str, list[int]]]:
    """Snapshots per time bucket by commit kind: (width name, bucket starts in epoch ms, counts per kind)."""
    if not snapshots:
        return "hour", [], {}
    times = [s.time_millis for s in snapshots]
    width, name = rate_width(min(times), max(times))
    first, last = min(times) // width, max(times) // width
    starts = [(first + i) * width for i in range(last - first + 1)]
    counts: dict[str, list[int]] = {}
    for s in snapshots:
        counts.setdefault(str(s.commit_kind), [0] * len(starts))[s.time_millis // width - first] += 1
    return name, starts, dict(sorted(counts.items()))


def rate_section(snapshots: Sequence[Snapshot]) -> str:
    """The snapshot-rate chart of the retained snapshots (one bar per time bucket, one segment per commit kind)."""
    name, starts, counts = snapshot_rate(snapshots)
    chart = render.stacked_bars(f"snapshots per {name} by commit kind", [millis(t) for t in starts],
                                list(counts.items()))
    return (f"<h2>Snapshot rate <span class='muted'>(retained snapshots per {esc(name)}, UTC)</span></h2>"
            + (chart or "<p class='muted'>no snapshot</p>"))


MAX_LAYOUT_PARTITIONS = 20
"""Partitions listed in the layout section (the worst by files per value)."""


def layout_section(table: Table, snapshots: Sequence[Snapshot]) -> str:
    """For a table with ``clustering.columns``: the files a filter on the first of them reads per partition, now and
    before the last compaction (the retained snapshot before the newest COMPACT one), from metadata only
    (:meth:`TableMaintenance.overlap`). Nothing for other tables."""
    from table_engine import CommitKind

    columns = table.options.clustering_columns()
    if not columns:
        return ""
    now = table.maintenance.overlap(columns[0])
    ids = {s.id for s in snapshots}
    compact = max((s.id for s in snapshots if str(s.commit_kind) == CommitKind.COMPACT.value), default=None)
    before_id = compact - 1 if compact is not None and compact - 1 in ids else None
    before = {o.partition: o for o in table.maintenance.overlap(columns[0], before_id)} if before_id else {}
    rows = []
    for o in sorted(now, key=lambda o: -o.mean_files_per_value)[:MAX_LAYOUT_PARTITIONS]:
        b = before.get(o.partition)
        rows.append([esc(o.partition or "(unpartitioned)"), esc(o.files), f"{o.mean_files_per_value:.1f}",
                     esc(o.max_files_per_value),
                     "\u2014" if b is None else f"{b.mean_files_per_value:.1f} of {b.files}"])
    when = f"snapshot {before_id}" if before_id else "no compaction retained"
    return (f"<h2>Layout <span class='muted'>(files a filter on {esc(columns[0])} reads; before: {esc(when)})"
            f"</span></h2>"
            + render.table(["partition", "files", "files per value (mean)", "worst", "before the last compaction"],
                           rows, numeric=(1, 2, 3), empty="no data file"))
